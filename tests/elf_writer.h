/* Small ARM ELF files for host tests, written with libelf: a list of sections, each with its bytes;
 * the section names' table is added last. */
#ifndef TESTS_ELF_WRITER_H
#define TESTS_ELF_WRITER_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

struct elf_writer_section {
    const char *name;
    Elf32_Word type, flags;
    Elf32_Addr addr;
    void *data;
    size_t size;
    Elf_Type data_type;
    Elf32_Word link, info, entsize; /* link: the index in this list + 1 (0: none) */
};

/* An ET_EXEC little-endian EM_ARM file at path with these sections (at most 8); false when it could
 * not be written. */
bool elf_writer_write(const char *path, const struct elf_writer_section *sections, size_t n);

#endif
