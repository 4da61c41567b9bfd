/* The ELF changed on disk while a run goes on (elfwatch.h). */
#include "elfwatch.h"

#include <stdio.h>
#include <string.h>

void elfwatch_start(struct elf_watch *w, const char *path)
{
    memset(w, 0, sizeof *w);
    w->path = path;
    w->known = stat(path, &w->st) == 0;
}

static bool same(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

bool elfwatch_check(struct elf_watch *w, double now)
{
    if (!w->known || w->changed || now - w->checked < 1.0)
        return w->changed;
    w->checked = now;
    struct stat st;
    bool gone = stat(w->path, &st) != 0;
    if (gone || !same(&st, &w->st)) {
        w->changed = true;
        snprintf(w->note, sizeof w->note, "%s %s since cmprof-top read it (a rebuild?): the names and lines "
                 "shown are the old build's, and any read of it from now on may meet the new file; restart "
                 "cmprof-top to profile the new build", w->path, gone ? "was removed" : "changed on disk");
    }
    return w->changed;
}

const char *elfwatch_warning(struct elf_watch *w, const char *sym_warning)
{
    if (!w->changed)
        return sym_warning;
    snprintf(w->shown, sizeof w->shown, "%s%s%s", w->note, *sym_warning ? "; " : "", sym_warning);
    return w->shown;
}
