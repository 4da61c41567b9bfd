/* The ELF symbol table: functions, labels (for addr2line's fallback names), variables and ARM
 * mapping symbols, in address order. Read straight from the file when it can be, on a thread of
 * its own (the open goes on meanwhile); else through libelf. */
#include "readers.h"

#include <gelf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An ARM mapping symbol's kind ('a', 't' or 'd': which instruction set the bytes from its address
 * are), or 0 for any other symbol. */
static char mapping_kind(int type, const char *name)
{
    if (type != STT_NOTYPE || !name || name[0] != '$' || (name[1] != 'a' && name[1] != 't' && name[1] != 'd'))
        return 0;
    return name[2] == '\0' || name[2] == '.' ? name[1] : 0;
}

/* A mapping symbol ($a, $t, $d) as a mode mark. */
static bool add_mode(struct sym_table *t, const Elf32_Sym *s, const char *name)
{
    bool defined = s->st_shndx != SHN_UNDEF && s->st_shndx < SHN_LORESERVE;
    char kind = defined ? mapping_kind(ELF32_ST_TYPE(s->st_info), name) : 0;
    struct mode_mark m = {s->st_value & ~1u, kind == 'a' ? MODE_ARM : kind == 't' ? MODE_THUMB : MODE_DATA};
    return !kind || VEC_PUSH(t->modes, m);
}

/* Labels that followed the functions become a list of their own: a copy of them, with room for as
 * many entries as the functions have (a symbol table's count). False when out of memory. */
static bool labels_apart(struct sym_table *t)
{
    t->load->labels_follow = false;
    if (!VEC_RESERVE(t->labels, t->funcs.cap))
        return false;
    if (t->funcs.n)
        memcpy(t->labels.v, t->funcs.v, t->funcs.n * sizeof *t->funcs.v);
    t->labels.n = t->funcs.n;
    return true;
}

/* The STT_FILE symbols kept for symt_file_before, and where binutils' reading of the table turns
 * from "a symbol seen" to "a file after a symbol" (the null entry 0 is no symbol to it). */
static bool note_file(struct sym_table *t, const Elf32_Sym *s, const char *name, uint32_t index)
{
    struct sym_loader *l = t->load;
    if (index == 0)
        return true;
    if (ELF32_ST_TYPE(s->st_info) != STT_FILE) {
        l->symbol_seen = true;
        return true;
    }
    if (l->symbol_seen && !l->files_after_symbols)
        l->files_after_symbols = index;
    struct file_mark m = {index, symt_intern(&t->strings, name ? name : "")};
    return m.name && VEC_PUSH(l->file_marks, m);
}

const char *symt_file_before(const struct sym_table *t, const struct func *f)
{
    const struct sym_loader *l = t->load;
    long i = f->order ? LAST_LE(l->file_marks.v, l->file_marks.n, f->order - 1, index) : -1;
    if (i < 0)
        return NULL;
    /* binutils names a global symbol's file only before the first file symbol that follows another */
    if (!f->is_local && l->files_after_symbols && l->files_after_symbols < f->order)
        return NULL;
    return l->file_marks.v[i].name;
}

/* One symbol: a function, a label, a variable or a mapping symbol. */
static bool add_symbol(struct sym_table *t, const Elf32_Sym *s, const char *name, uint32_t index)
{
    if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE)
        return true;
    int type = ELF32_ST_TYPE(s->st_info);
    uint32_t lo = s->st_value & ~1u; /* Thumb bit */
    char kind = mapping_kind(type, name);
    if (kind)
        return add_mode(t, s, name);
    bool named = name && name[0];
    uint8_t local = ELF32_ST_BIND(s->st_info) == STB_LOCAL;
    bool wanted = named && (type == STT_FUNC || type == STT_OBJECT || (type == STT_NOTYPE && name[0] != '$'));
    /* one copy for every list: in the kept string table, or interned */
    const char *kept = !wanted ? NULL : symt_elf_name_kept(t, name) ? name : symt_intern(&t->strings, name);
    if (wanted && !kept)
        return false;
    /* '$t', '$d' are ARM mapping symbols, never names */
    bool label = (type == STT_FUNC || type == STT_NOTYPE) && named && name[0] != '$';
    /* a sized, named function is the same entry in both lists: while every symbol so far was one
     * (or neither), labels are not written, and are the functions until one differs */
    if (t->load->labels_follow && (label != (type == STT_FUNC) || (label && !s->st_size)) && !labels_apart(t))
        return false;
    if (label && !t->load->labels_follow) {
        struct func l = {lo, lo + s->st_size, kept, index, type == STT_FUNC, local};
        if (!VEC_PUSH(t->labels, l))
            return false;
    }
    if (type == STT_OBJECT && named) {
        struct func o = {lo, lo + s->st_size, kept, index, 0, local};
        if (!VEC_PUSH(t->objects, o))
            return false;
    }
    if (type != STT_FUNC)
        return true;
    const char *name_or_unknown = kept ? kept : t->load->unknown_name;
    struct func f = {lo, lo + (s->st_size ? s->st_size : 2), name_or_unknown, index, 1, local};
    return f.name && VEC_PUSH(t->funcs, f);
}

/* Where the symbol table's entries come from: read from the file a chunk at a time into a small
 * buffer (a little-endian ELF on a little-endian host, the usual case: libelf would copy the
 * whole table, a megabyte on a big firmware, into fresh memory), else libelf's converted copy. */
struct symtab_src {
    const Elf32_Sym *all; /* libelf's copy, or NULL */
    int fd;
    uint64_t off;
};

enum { SYM_CHUNK = 2048 }; /* entries per read: 32 KB */

/* Entries [first, first + count) of the table, or NULL when they cannot be read. */
static const Elf32_Sym *symbols_at(const struct symtab_src *src, size_t first, size_t count, Elf32_Sym *buf)
{
    if (src->all)
        return src->all + first;
    ssize_t want = (ssize_t)(count * sizeof *buf);
    return pread(src->fd, buf, (size_t)want, (off_t)(src->off + first * sizeof *buf)) == want ? buf : NULL;
}

/* Add the n entries of a symbol table, its names from strs (or, without it, from libelf). One
 * pass, each list reserved for every entry at once: what a list leaves of its reservation is never
 * touched, and is given back after. Mapping symbols ($a, $t, $d) go to a list of their own as they
 * come: they say which instruction set code is in (sym_is_arm), and where the data in it is, its
 * literal pools and jump tables (codemap.c). */
static bool add_symbols(struct sym_table *t, const struct symtab_src *src, size_t n, const char *strs, size_t strs_len,
                        Elf *elf, size_t str_index)
{
    Elf32_Sym *buf = src->all ? NULL : malloc(SYM_CHUNK * sizeof *buf);
    bool ok = (src->all || buf) && (!t->load->labels_follow || labels_apart(t)) && /* (a second symbol table) */
              (t->load->strtab || symt_intern_reserve(&t->strings, n)) && VEC_RESERVE(t->funcs, n) &&
              VEC_RESERVE(t->objects, n);
    /* labels are reserved once they part from the functions (untouched room is not given back
     * whole: glibc would then serve the next large blocks from its heap, copied when they grow) */
    t->load->labels_follow = ok && t->funcs.n == 0 && t->labels.n == 0;
    ok = ok && (t->load->labels_follow || VEC_RESERVE(t->labels, n));
    for (size_t first = 0; ok && first < n; first += SYM_CHUNK) {
        size_t count = n - first < SYM_CHUNK ? n - first : SYM_CHUNK;
        const Elf32_Sym *syms = symbols_at(src, first, count, buf);
        for (size_t i = 0; ok && syms && i < count; i++) {
            uint32_t at = syms[i].st_name;
            const char *name = strs ? (at < strs_len ? strs + at : NULL) : elf_strptr(elf, str_index, at);
            ok = note_file(t, &syms[i], name, (uint32_t)(first + i)) && add_symbol(t, &syms[i], name, (uint32_t)(first + i));
        }
    }
    symt_vec_fit((void **)&t->funcs.v, &t->funcs.cap, t->funcs.n, sizeof *t->funcs.v);
    symt_vec_fit((void **)&t->labels.v, &t->labels.cap, t->labels.n, sizeof *t->labels.v);
    symt_vec_fit((void **)&t->objects.v, &t->objects.cap, t->objects.n, sizeof *t->objects.v);
    free(buf);
    return ok;
}

/* Where a symbol table and its string table lie in the ELF file. */
struct symtab_file {
    uint64_t sym_off;
    size_t n;
    uint64_t str_off;
    size_t str_len;
};

/* Where a symbol table and its string table lie in the file, when both can be read from it as
 * they are: a little-endian ELF on a little-endian host (the usual case), the table uncompressed
 * and of whole entries, the string table whole. false: libelf must convert them. */
static bool symtab_in_file(const struct sym_table *t, Elf *elf, const GElf_Shdr *sh, struct symtab_file *f)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const char *ident = elf_getident(elf, NULL);
    Elf_Scn *str_scn = elf_getscn(elf, sh->sh_link);
    GElf_Shdr str_sh;
    if (!ident || ident[EI_DATA] != ELFDATA2LSB || (sh->sh_flags & SHF_COMPRESSED) ||
        sh->sh_entsize != sizeof(Elf32_Sym) || sh->sh_size % sizeof(Elf32_Sym) != 0 || t->load->strtab || !str_scn ||
        !gelf_getshdr(str_scn, &str_sh) || str_sh.sh_type != SHT_STRTAB || (str_sh.sh_flags & SHF_COMPRESSED) ||
        str_sh.sh_size == 0 || str_sh.sh_size >= ((size_t)1 << 31))
        return false;
    *f = (struct symtab_file){sh->sh_offset, (size_t)(sh->sh_size / sizeof(Elf32_Sym)), str_sh.sh_offset,
                              (size_t)str_sh.sh_size};
    return true;
#else
    (void)t, (void)elf, (void)sh, (void)f;
    return false;
#endif
}

/* The symbol table read straight from the file, a chunk at a time into a small buffer (libelf
 * would copy the whole table, a megabyte on a big firmware, into fresh memory). The string table
 * is kept by the table, and names point into it until a lookup first needs one (interned then:
 * most are never asked for). READ_LEFT: the string table is unreadable or does not end in a NUL
 * (then libelf's way). */
static enum read_result read_symtab_file(struct sym_table *t, const struct symtab_file *f)
{
    if (!(t->load->strtab = malloc(f->str_len)))
        return READ_NO_MEMORY;
    if (pread(t->code_fd, t->load->strtab, f->str_len, (off_t)f->str_off) != (ssize_t)f->str_len ||
        t->load->strtab[f->str_len - 1] != '\0') {
        free(t->load->strtab);
        t->load->strtab = NULL;
        return READ_LEFT;
    }
    t->load->strtab_len = f->str_len;
    struct symtab_src src = {NULL, t->code_fd, f->sym_off};
    return add_symbols(t, &src, f->n, t->load->strtab, t->load->strtab_len, NULL, 0) ? READ_OK : READ_NO_MEMORY;
}

/* The symbol table through libelf's converted copy: its names are interned now, as libelf's copy
 * is gone at elf_end (also any second symbol table). */
static bool read_symtab_libelf(struct sym_table *t, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !d->d_buf || d->d_type != ELF_T_SYM)
        return true;
    Elf_Scn *str_scn = elf_getscn(elf, sh->sh_link);
    Elf_Data *sd = str_scn ? elf_getdata(str_scn, NULL) : NULL;
    const char *strs = sd && sd->d_buf && sd->d_size && ((const char *)sd->d_buf)[sd->d_size - 1] == '\0' ? sd->d_buf
                                                                                                           : NULL;
    struct symtab_src src = {d->d_buf, -1, 0};
    return add_symbols(t, &src, d->d_size / sizeof(Elf32_Sym), strs, strs ? sd->d_size : 0, elf, sh->sh_link);
}

/* Drop aliases at the same address from the sorted functions (keep the first, as nm -n lists them). */
static void drop_aliases(struct sym_table *t)
{
    size_t k = 0;
    for (size_t i = 0; i < t->funcs.n; i++)
        if (k == 0 || t->funcs.v[i].lo != t->funcs.v[k - 1].lo)
            t->funcs.v[k++] = t->funcs.v[i];
    t->funcs.n = k;
}

/* The lists in address order: a stable sort keeps symbol table order at equal addresses. Without
 * unsized or untyped symbols the two lists are one (compiled code): sorted once, and without
 * aliases (two functions at one address) kept once. */
static bool order_symbols(struct sym_table *t)
{
    bool same = t->load->labels_follow;
    if (!symt_sort_by_u32(t->funcs.v, t->funcs.n, sizeof *t->funcs.v, offsetof(struct func, lo)))
        return false;
    bool aliases = false;
    for (size_t i = 1; same && i < t->funcs.n && !aliases; i++)
        aliases = t->funcs.v[i].lo == t->funcs.v[i - 1].lo;
    if (same && !aliases) {
        t->load->labels_follow = false;
        t->labels.v = t->funcs.v; /* (labels had no memory of their own yet) */
        t->labels.n = t->funcs.n;
        t->labels.cap = 0;
    } else if (same && !labels_apart(t)) {
        return false;
    }
    if ((!same && !symt_sort_by_u32(t->labels.v, t->labels.n, sizeof *t->labels.v, offsetof(struct func, lo))) ||
        !symt_sort_by_u32(t->modes.v, t->modes.n, sizeof *t->modes.v, offsetof(struct mode_mark, addr)) ||
        !symt_sort_by_u32(t->objects.v, t->objects.n, sizeof *t->objects.v, offsetof(struct func, lo)))
        return false;
    drop_aliases(t);
    return true;
}

/* The symbol table, read on a thread of its own while the DWARF index and the first units are
 * read: it needs nothing they touch (no libelf, no interned string). */
struct symtab_job {
    struct sym_table *t;
    struct symtab_file file;
    pthread_t thread;
    pthread_mutex_t lock;
    bool joined; /* (read and set atomically) */
    bool failed; /* out of memory: the lists may be partial */
    bool deferred; /* no thread: the functions' extents are in, the rest is read at the join (names_later) */
};

static void complete_names(struct symtab_job *job);

static void *symbols_thread(void *arg)
{
    struct symtab_job *job = arg;
    enum read_result got = read_symtab_file(job->t, &job->file); /* left: the file changed since it was checked */
    job->failed = got == READ_NO_MEMORY || !order_symbols(job->t);
    return NULL;
}

void symt_symbols_join(struct symtab_job *job)
{
    if (__atomic_load_n(&job->joined, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&job->lock);
    if (!job->joined) {
        if (job->deferred)
            complete_names(job);
        else
            pthread_join(job->thread, NULL);
        job->t->load->symbols_failed = job->failed;
        __atomic_store_n(&job->joined, true, __ATOMIC_RELEASE);
        symt_set_warning(job->t); /* (it may tell of the symbols) */
    }
    pthread_mutex_unlock(&job->lock);
}

bool symt_symbols_read(const struct sym_table *t)
{
    return !t->load->symbols || t->load->symbols->deferred || __atomic_load_n(&t->load->symbols->joined, __ATOMIC_ACQUIRE);
}

void symt_funcs_wait(const struct sym_table *t)
{
    if (t->load->symbols && !t->load->symbols->deferred)
        symt_symbols_join(t->load->symbols);
}

void symt_symbols_free(struct sym_table *t)
{
    if (!t->load->symbols)
        return;
    if (!t->load->symbols->deferred) /* (names never asked for are never read) */
        symt_symbols_join(t->load->symbols);
    pthread_mutex_destroy(&t->load->symbols->lock);
    free(t->load->symbols);
    t->load->symbols = NULL;
}

/* Start reading the symbol table from the file on a thread; false when it cannot start, or when
 * no core is free for it: on a busy machine the opener then waited for the thread's turn on a core
 * (symt_core_to_spare), and reads it itself. */
static bool start_symbols(struct sym_table *t, const struct symtab_file *f)
{
    if (!symt_core_to_spare())
        return false;
    /* the string table must end in a NUL (else libelf's way, now): one byte read to know */
    char last;
    if (pread(t->code_fd, &last, 1, (off_t)(f->str_off + f->str_len - 1)) != 1 || last != '\0')
        return false;
    struct symtab_job *job = calloc(1, sizeof *job);
    if (!job)
        return false;
    *job = (struct symtab_job){.t = t, .file = *f};
    pthread_mutex_init(&job->lock, NULL);
    if (!symt_thread_start(&job->thread, symbols_thread, job)) {
        pthread_mutex_destroy(&job->lock);
        free(job);
        return false;
    }
    t->load->symbols = job;
    return true;
}

/* ---- the functions' extents now, the rest when asked (names_later) ------------------------ */

/* The function symbols as add_symbol and order_symbols leave them (each defined STT_FUNC, in
 * address order, the first of aliases at one address), without names: the entries read a chunk
 * at a time, the string table not at all. False when out of memory. */
static bool read_extents(struct sym_table *t, const struct symtab_file *f)
{
    struct symtab_src src = {NULL, t->code_fd, f->sym_off};
    Elf32_Sym *buf = malloc(SYM_CHUNK * sizeof *buf);
    bool ok = buf && VEC_RESERVE(t->funcs, f->n);
    for (size_t first = 0; ok && first < f->n; first += SYM_CHUNK) {
        size_t count = f->n - first < SYM_CHUNK ? f->n - first : SYM_CHUNK;
        const Elf32_Sym *syms = symbols_at(&src, first, count, buf);
        for (size_t i = 0; syms && i < count; i++) {
            const Elf32_Sym *s = &syms[i];
            if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE || ELF32_ST_TYPE(s->st_info) != STT_FUNC)
                continue;
            uint32_t lo = s->st_value & ~1u;
            t->funcs.v[t->funcs.n++] = (struct func){lo, lo + (s->st_size ? s->st_size : 2), NULL, (uint32_t)(first + i), 1,
                                                     ELF32_ST_BIND(s->st_info) == STB_LOCAL};
        }
    }
    free(buf);
    symt_vec_fit((void **)&t->funcs.v, &t->funcs.cap, t->funcs.n, sizeof *t->funcs.v);
    if (!ok || !symt_sort_by_u32(t->funcs.v, t->funcs.n, sizeof *t->funcs.v, offsetof(struct func, lo)))
        return false;
    drop_aliases(t);
    return true;
}

/* The whole table read as at an open, its names then given to the extents read before (the same
 * entries in the same order: lookups keep pointers into them), which stay the function list. */
static void complete_names(struct symtab_job *job)
{
    struct sym_table *t = job->t;
    struct func *kept = t->funcs.v;
    size_t n = t->funcs.n, cap = t->funcs.cap;
    memset(&t->funcs, 0, sizeof t->funcs);
    enum read_result got = read_symtab_file(t, &job->file); /* left: the file changed since the open */
    job->failed = got == READ_NO_MEMORY || !order_symbols(t);
    for (size_t i = 0; i < n; i++) /* (a file changed since the open: names it no longer has are unknown) */
        kept[i].name = i < t->funcs.n && t->funcs.v[i].lo == kept[i].lo ? t->funcs.v[i].name : t->load->unknown_name;
    if (t->labels.v == t->funcs.v && t->labels.v) { /* labels were the functions: now the kept list */
        t->labels.v = kept;
        t->labels.n = n;
        t->labels.cap = 0;
    }
    free(t->funcs.v);
    t->funcs.v = kept;
    t->funcs.n = n;
    t->funcs.cap = cap;
}

/* The extents now, the rest at the first symt_symbols_wait; false when it cannot be done so (then
 * the whole table is read as usual). */
static bool defer_names(struct sym_table *t, const struct symtab_file *f)
{
    char last; /* the string table must end in a NUL (else libelf's way, now) */
    if (pread(t->code_fd, &last, 1, (off_t)(f->str_off + f->str_len - 1)) != 1 || last != '\0')
        return false;
    struct symtab_job *job = calloc(1, sizeof *job);
    if (!job)
        return false;
    *job = (struct symtab_job){.t = t, .file = *f, .deferred = true};
    if (!read_extents(t, f)) {
        free(t->funcs.v);
        memset(&t->funcs, 0, sizeof t->funcs);
        free(job);
        return false;
    }
    pthread_mutex_init(&job->lock, NULL);
    t->load->symbols = job;
    return true;
}

bool symt_symtab_load(struct sym_table *t, void *elf_handle, void *first_symtab, size_t n_symtabs)
{
    Elf *elf = elf_handle;
    Elf_Scn *symtab = first_symtab;
    /* the symbol table: straight from the file when it can be read as it is (on a thread, when
     * one starts), else through libelf */
    if (!(t->load->unknown_name = symt_intern(&t->strings, "??")))
        return false;
    struct symtab_file f;
    GElf_Shdr sh;
    if (n_symtabs == 1 && gelf_getshdr(symtab, &sh) && symtab_in_file(t, elf, &sh, &f)) {
        if ((t->load->names_later && defer_names(t, &f)) || start_symbols(t, &f))
            return true;
        enum read_result got = read_symtab_file(t, &f);
        if (got != READ_LEFT)
            return got == READ_OK && order_symbols(t);
    }
    for (Elf_Scn *scn = symtab; scn; scn = elf_nextscn(elf, scn)) /* every symbol table */
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB && !read_symtab_libelf(t, elf, scn, &sh))
            return false;
    return order_symbols(t);
}

/* ---- searches of the function symbols ---------------------------------------------------- */

const struct func *symt_func_at(const struct sym_table *t, uint32_t addr, long *hint, uint64_t *until_out)
{
    symt_funcs_wait(t);
    long i = hint ? (*hint = LAST_LE_FROM(t->funcs.v, t->funcs.n, addr, lo, *hint))
                  : LAST_LE(t->funcs.v, t->funcs.n, addr, lo);
    /* the answer holds until the next function starts, or the one found ends */
    uint64_t until = (size_t)(i + 1) < t->funcs.n ? t->funcs.v[i + 1].lo : UINT64_MAX;
    const struct func *found = NULL;
    for (; i >= 0 && (size_t)i < t->funcs.n; i--) {
        const struct func *f = &t->funcs.v[i];
        if (addr < f->hi) {
            found = f;
            until = f->hi < until ? f->hi : until;
            break;
        }
        if (i > 0 && t->funcs.v[i - 1].hi <= f->lo)
            break;
    }
    *until_out = until;
    return found;
}

const struct func *symt_func_for(const struct sym_table *t, uint32_t addr)
{
    uint64_t until;
    return symt_func_at(t, addr, NULL, &until);
}

bool symt_elf_name_kept(const struct sym_table *t, const char *name)
{
    uintptr_t p = (uintptr_t)name, base = (uintptr_t)t->load->strtab;
    return t->load->strtab && p >= base && p < base + t->load->strtab_len;
}

int sym_function_from(const struct sym_table *t, uint32_t addr, uint32_t *lo, uint32_t *hi)
{
    symt_funcs_wait(t);
    const struct func *f = symt_func_for(t, addr);
    if (!f) {
        size_t next = (size_t)(LAST_LE(t->funcs.v, t->funcs.n, addr, lo) + 1);
        if (next >= t->funcs.n)
            return 0;
        f = &t->funcs.v[next];
    }
    *lo = f->lo;
    *hi = f->hi;
    return 1;
}
