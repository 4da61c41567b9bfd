#include "elf_writer.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define MAX_SECTIONS 8

static bool add_data(Elf_Scn *scn, void *buf, size_t size, Elf_Type type)
{
    Elf_Data *d = elf_newdata(scn);
    if (!d)
        return false;
    d->d_buf = buf;
    d->d_size = size;
    d->d_type = type;
    d->d_align = 4;
    return true;
}

static bool set_header(Elf_Scn *scn, const struct elf_writer_section *s, Elf32_Word name)
{
    Elf32_Shdr *h = elf32_getshdr(scn);
    if (!h)
        return false;
    h->sh_name = name;
    h->sh_type = s->type;
    h->sh_flags = s->flags;
    h->sh_addr = s->addr;
    h->sh_link = s->link;
    h->sh_info = s->info;
    h->sh_entsize = s->entsize;
    return true;
}

bool elf_writer_write(const char *path, const struct elf_writer_section *sections, size_t n)
{
    static char names[256];
    size_t at[MAX_SECTIONS + 1], len = 1;
    if (n > MAX_SECTIONS || elf_version(EV_CURRENT) == EV_NONE)
        return false;
    names[0] = '\0';
    for (size_t i = 0; i <= n; i++) {
        const char *name = i < n ? sections[i].name : ".shstrtab";
        if (len + strlen(name) + 1 > sizeof names)
            return false;
        at[i] = len;
        strcpy(names + len, name);
        len += strlen(name) + 1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return false;
    Elf *e = elf_begin(fd, ELF_C_WRITE, NULL);
    Elf32_Ehdr *eh = e ? elf32_newehdr(e) : NULL;
    bool ok = eh != NULL;
    Elf_Scn *scn = NULL;
    for (size_t i = 0; ok && i <= n; i++) {
        static const struct elf_writer_section shstrtab = {.type = SHT_STRTAB, .data_type = ELF_T_BYTE};
        const struct elf_writer_section *s = i < n ? &sections[i] : &shstrtab;
        scn = elf_newscn(e);
        ok = scn && add_data(scn, i < n ? s->data : names, i < n ? s->size : len, s->data_type) &&
             set_header(scn, s, (Elf32_Word)at[i]);
    }
    if (ok) {
        eh->e_ident[EI_DATA] = ELFDATA2LSB;
        eh->e_machine = EM_ARM;
        eh->e_type = ET_EXEC;
        eh->e_version = EV_CURRENT;
        eh->e_shstrndx = (Elf32_Half)elf_ndxscn(scn);
        ok = elf_update(e, ELF_C_WRITE) >= 0;
    }
    if (e)
        elf_end(e);
    close(fd);
    return ok;
}
