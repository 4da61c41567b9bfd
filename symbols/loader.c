/* The table's loader: its warning, from what the readers found (loader.h). */
#include "loader.h"

#include <stdio.h>

void symt_set_warning(struct sym_table *t)
{
    struct sym_loader *l = t->load;
    const char *path = l->path ? l->path : "the ELF";
    if (l->dwarf_error[0])
        snprintf(l->warning, sizeof l->warning, "%s: %s", path, l->dwarf_error);
    else if (l->symbols_failed)
        snprintf(l->warning, sizeof l->warning, "%s: out of memory while reading the symbol table: functions missing",
                 path);
    else if (t->funcs.n == 0 && !l->has_dwarf)
        snprintf(l->warning, sizeof l->warning, "%s has no symbols and no DWARF (stripped?): every row is a raw address; "
                 "give the ELF the linker wrote", path);
    else if (!l->has_dwarf)
        snprintf(l->warning, sizeof l->warning, "%s has no DWARF: functions only, no lines or inline chains", path);
    else if (t->funcs.n == 0)
        snprintf(l->warning, sizeof l->warning, "%s has no symbol table: names come from DWARF only", path);
    else
        l->warning[0] = '\0';
}
