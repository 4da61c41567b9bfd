/* ELF: validation, sections, build-id and vectors (libelf), then the symbol table (symtab.c). */
#include "readers.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>
#include <gelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- ELF --------------------------------------------------------------------------------- */

/* The vector table: a section named for it by the usual startup files, else the allocated data at
 * the lowest address (where a Cortex-M core reads it at reset). Word n is exception n's handler. */
static void keep_vectors(struct sym_table *t, Elf *elf, const char *name, const GElf_Shdr *sh)
{
    static const char *const names[] = {".isr_vector", ".vectors", ".vector_table", ".intvec", ".isr_vector_table"};
    bool named = false;
    for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
        named |= strcmp(name, names[i]) == 0;
    if (t->vectors && (t->load->vectors_named || (!named && sh->sh_addr >= t->load->vectors_at)))
        return;
    unsigned char bytes[512 * 4]; /* the first words only: the section may be all of the code */
    size_t n = sh->sh_size / 4 < 512 ? (size_t)sh->sh_size / 4 : 512;
    if (sh->sh_size < 64 || (sh->sh_flags & SHF_COMPRESSED) ||
        pread(t->code_fd, bytes, n * 4, (off_t)sh->sh_offset) != (ssize_t)(n * 4))
        return;
    uint32_t *v = malloc(n * sizeof *v);
    if (!v)
        return;
    char *ident = elf_getident(elf, NULL);
    bool big = ident && ident[EI_DATA] == ELFDATA2MSB;
    const unsigned char *b = bytes;
    for (size_t i = 0; i < n; i++, b += 4)
        v[i] = big ? (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : (uint32_t)b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0];
    free(t->vectors);
    t->vectors = v;
    t->n_vectors = n;
    t->load->vectors_at = (uint32_t)sh->sh_addr;
    t->load->vectors_named = named;
}

/* libdwarf 20210528 inflates zlib sections only. Anything else would reach it as garbage: keep
 * libdwarf away and say which compression it was. */
static void check_compression(struct sym_table *t, Elf *elf, Elf_Scn *scn, size_t shstrndx, const GElf_Shdr *sh)
{
    const char *name = elf_strptr(elf, shstrndx, sh->sh_name);
    Elf_Data *raw = elf_rawdata(scn, NULL);
    if (!name || strncmp(name, ".debug", 6) != 0 || !raw || raw->d_size < 4)
        return;
    const unsigned char *b = raw->d_buf;
    char *ident = elf_getident(elf, NULL);
    bool big = ident && ident[EI_DATA] == ELFDATA2MSB;
    uint32_t type = big ? (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]
                        : (uint32_t)b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0];
    if (type == ELFCOMPRESS_ZLIB)
        return;
    t->load->dwarf_skip = true;
    snprintf(t->load->dwarf_error, sizeof t->load->dwarf_error,
             "%s is compressed with %s (ch_type %u), which libdwarf cannot read: functions from the ELF symbol "
             "table only; objcopy --decompress-debug-sections makes it readable",
             name, type == 2 ? "zstd" : "an unknown method", (unsigned)type);
}

/* The sections: allocated spans, code sections, .debug_frame, the vector table, the build-id,
 * compressed DWARF libdwarf cannot read; then the symbol table. False on a malformed ELF or no
 * memory. */
static bool read_sections(struct sym_table *t, Elf *elf)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return false;
    Elf_Scn *scn = NULL, *symtab = NULL;
    size_t n_symtabs = 0;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if ((sh.sh_flags & SHF_ALLOC) && sh.sh_type == SHT_PROGBITS && sh.sh_size >= 64)
            keep_vectors(t, elf, elf_strptr(elf, shstrndx, sh.sh_name), &sh);
        if ((sh.sh_flags & SHF_ALLOC) && sh.sh_size) {
            struct span sp = {(uint32_t)sh.sh_addr, (uint32_t)(sh.sh_addr + sh.sh_size)};
            if (!VEC_PUSH(t->sections, sp))
                return false;
        }
        if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) && (sh.sh_flags & SHF_ALLOC) && sh.sh_size) {
            struct code_section cs = {(uint32_t)sh.sh_addr, (uint32_t)(sh.sh_addr + sh.sh_size), NULL, sh.sh_offset,
                                      (sh.sh_flags & SHF_COMPRESSED) != 0, NULL}; /* compressed code: no bytes */
            if (!VEC_PUSH(t->code, cs))
                return false;
        } else if (sh.sh_type == SHT_PROGBITS && !(sh.sh_flags & SHF_COMPRESSED) && !t->debug_frame_len &&
                   strcmp(elf_strptr(elf, shstrndx, sh.sh_name) ? elf_strptr(elf, shstrndx, sh.sh_name) : "",
                          ".debug_frame") == 0) {
            t->debug_frame_off = sh.sh_offset; /* read at the first unwind */
            t->debug_frame_len = (size_t)sh.sh_size;
        } else if ((sh.sh_flags & SHF_COMPRESSED) && !t->load->dwarf_skip) {
            check_compression(t, elf, scn, shstrndx, &sh);
        } else if (sh.sh_type == SHT_NOTE && !t->build_id) {
            Elf_Data *d = elf_getdata(scn, NULL);
            size_t off = 0, name_off, desc_off;
            GElf_Nhdr nh;
            while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
                if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz) {
                    t->build_id = malloc(nh.n_descsz);
                    if (t->build_id) {
                        memcpy(t->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
                        t->build_id_len = nh.n_descsz;
                    }
                    break;
                }
            }
        } else if (sh.sh_type == SHT_SYMTAB && gelf_getclass(elf) == ELFCLASS32) {
            n_symtabs++;
            symtab = symtab ? symtab : scn;
        }
    }
    return symt_symtab_load(t, elf, symtab, n_symtabs);
}

/* ---- opening: every refusal is one line naming the file ---------------------------------- */

static void fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(char *err, size_t len, const char *fmt, ...)
{
    if (!err || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

/* libelf reads a truncated file without complaint and just finds fewer sections: check that every
 * header and section the ELF header promises lies inside the file. */
static const char *truncation(Elf *elf, const GElf_Ehdr *eh, uint64_t file_size, char *buf, size_t len)
{
    uint64_t sh_end = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
    uint64_t ph_end = eh->e_phoff + (uint64_t)eh->e_phnum * eh->e_phentsize;
    if (eh->e_shnum && sh_end > file_size) {
        snprintf(buf, len, "section headers end at byte %llu", (unsigned long long)sh_end);
        return buf;
    }
    if (eh->e_phnum && ph_end > file_size) {
        snprintf(buf, len, "program headers end at byte %llu", (unsigned long long)ph_end);
        return buf;
    }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size > file_size) {
            snprintf(buf, len, "section %zu ends at byte %llu", elf_ndxscn(scn),
                     (unsigned long long)(sh.sh_offset + sh.sh_size));
            return buf;
        }
    }
    return NULL;
}

/* The ELF header and section headers: a 32-bit ARM ELF, whole. False with the reason in err. */
static bool elf_checked(Elf *elf, const char *path, uint64_t file_size, char *err, size_t errlen)
{
    GElf_Ehdr eh;
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
        fail(err, errlen, "'%s' is not an ELF file (file format not recognized)", path);
        return false;
    }
    if (eh.e_machine != EM_ARM || gelf_getclass(elf) != ELFCLASS32) {
        fail(err, errlen, "'%s' is an ELF for another machine (e_machine %u), not a 32-bit ARM one", path,
             (unsigned)eh.e_machine);
        return false;
    }
    char why[96];
    const char *cut = truncation(elf, &eh, file_size, why, sizeof why);
    if (cut) {
        fail(err, errlen, "'%s' is truncated: %s but the file has %llu bytes", path, cut,
             (unsigned long long)file_size);
        return false;
    }
    return true;
}

bool symt_elf_open(struct sym_table *t, const char *path, char *err, size_t errlen)
{
    /* O_NONBLOCK: a fifo given as the ELF must not block the open until a writer comes */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fail(err, errlen, "cannot open ELF '%s': %s", path, strerror(errno));
        return false;
    }
    t->code_fd = fd; /* the code bytes come from this file when first asked for (sym_close closes it) */
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fail(err, errlen, "'%s' %s, not an ELF file", path,
             S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file");
        return false;
    }
    if (elf_version(EV_CURRENT) == EV_NONE) {
        fail(err, errlen, "%s: libelf is too old", path);
        return false;
    }
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    bool ok = elf_checked(elf, path, (uint64_t)st.st_size, err, errlen);
    if (ok && !read_sections(t, elf)) {
        fail(err, errlen, "%s: out of memory while loading symbols", path);
        ok = false;
    }
    if (elf)
        elf_end(elf);
    return ok;
}
