/* Whether the ELF a run read changed on disk since (a build that writes it again while the live
 * view runs): the names and lines shown are the old file's, and what is read of it from then on may
 * be the new file's bytes. Said, with what to do, rather than left to look like a damaged ELF. */
#ifndef CMPROF_APP_ELFWATCH_H
#define CMPROF_APP_ELFWATCH_H

#include <stdbool.h>
#include <sys/stat.h>

struct elf_watch {
    const char *path;
    struct stat st; /* as it was when it was read */
    bool known, changed;
    double checked; /* when it was last looked at */
    char note[600], shown[1200]; /* the change; it and the reader's warning */
};

/* Before the ELF is read: how it is then. */
void elfwatch_start(struct elf_watch *w, const char *path);
/* At most once a second (now in seconds): whether it changed since; true for good once it has. */
bool elfwatch_check(struct elf_watch *w, double now);
/* The ELF's warning for the view and the report: the change first when there was one, then the
 * reader's own (sym_warning), "" when neither. */
const char *elfwatch_warning(struct elf_watch *w, const char *sym_warning);

#endif
