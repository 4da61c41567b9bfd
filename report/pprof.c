/* pprof's profile.proto (github.com/google/pprof, proto/profile.proto), written with our own
 * encoder (pbuf.h) and gzipped with zlib. Field numbers below are the schema's. */
#include "pprof.h"

#include "../base/grow.h"
#include "../profile/escape.h"

#include "frames.h"
#include "intern.h"
#include "pbuf.h"
#include "whole.h"
#include "../base/path.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION, PROFILE_FUNCTION,
       PROFILE_STRING_TABLE, PROFILE_DURATION = 10, PROFILE_PERIOD_TYPE, PROFILE_PERIOD, PROFILE_COMMENT };
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE, SAMPLE_LABEL };
enum { LABEL_KEY = 1, LABEL_STR };
enum { MAPPING_ID = 1, MAPPING_START, MAPPING_LIMIT, MAPPING_OFFSET, MAPPING_FILENAME, MAPPING_BUILD_ID,
       MAPPING_HAS_FUNCTIONS, MAPPING_HAS_FILENAMES, MAPPING_HAS_LINES, MAPPING_HAS_INLINE };
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE };
enum { LINE_FUNCTION_ID = 1, LINE_LINE };
enum { FUNCTION_ID = 1, FUNCTION_NAME, FUNCTION_SYSTEM_NAME, FUNCTION_FILENAME, FUNCTION_START_LINE };

struct pp_function {
    size_t name, system_name, file; /* string numbers */
    uint32_t entry_line;            /* the ELF symbol's first line, 0: not known */
    uint32_t min_line;              /* else the lowest line seen */
};

struct pp;
static bool grow_functions(struct pp *pp, size_t need);

struct pp {
    struct sym_table *syms;
    const struct pprof_info *info;
    uint32_t code_lo, code_hi;      /* the mapping */
    struct intern *strings, *functions, *locations;
    struct pp_function *fn;
    size_t cap_fn;
    struct pbuf samples, locs, msg, line;
    uint64_t *ids;
    size_t cap_ids;
    struct whole count, nanos;
    size_t task_key;
    bool failed;
};

static size_t str(struct pp *pp, const char *s)
{
    size_t id = intern_id(pp->strings, s ? s : "");
    pp->failed |= id == SIZE_MAX;
    return id == SIZE_MAX ? 0 : id;
}

/* The function a frame names (keyed by name and file), made the first time; 0 when out of memory. */
static uint64_t function_of(struct pp *pp, const struct sym_frame *f, uint32_t entry_line)
{
    const char *file = f->file && strcmp(f->file, "??") != 0 ? f->file : "";
    size_t klen = strlen(f->function) + strlen(file) + 2;
    char *key = malloc(klen);
    if (!key) {
        pp->failed = true;
        return 0;
    }
    snprintf(key, klen, "%s\x1f%s", f->function, file);
    size_t n = intern_count(pp->functions), id = intern_id(pp->functions, key);
    free(key);
    if (id == SIZE_MAX || (id == n && !grow_functions(pp, n + 1))) {
        pp->failed = true;
        return 0;
    }
    struct pp_function *fn = &pp->fn[id];
    if (id == n) {
        const char *shown = pp->syms ? sym_shown_name(pp->syms, f->function, pp->info->demangle) : f->function;
        const char *linked = pp->syms ? sym_shown_name(pp->syms, f->function, false) : f->function;
        *fn = (struct pp_function){str(pp, shown), str(pp, linked), str(pp, file), 0, 0};
    }
    if (entry_line && !fn->entry_line)
        fn->entry_line = entry_line;
    if (f->line && (!fn->min_line || f->line < fn->min_line))
        fn->min_line = f->line;
    return id + 1;
}

static bool grow_functions(struct pp *pp, size_t need)
{
    return grow_array((void **)&pp->fn, &pp->cap_fn, need, sizeof *pp->fn, 64);
}

/* The location of an address, made (and encoded) the first time: its lines are its inline
 * chain, innermost first, as profile.proto orders them. */
static uint64_t location_of(struct pp *pp, uint32_t addr)
{
    char key[12];
    snprintf(key, sizeof key, "%x", (unsigned)addr);
    size_t n = intern_count(pp->locations), id = intern_id(pp->locations, key);
    if (id == SIZE_MAX) {
        pp->failed = true;
        return 0;
    }
    if (id < n)
        return id + 1;
    const struct sym_location *loc = pp->syms ? sym_lookup(pp->syms, addr) : NULL;
    pbuf_clear(&pp->msg);
    pbuf_uint(&pp->msg, LOCATION_ID, id + 1);
    if (pp->code_hi > pp->code_lo && addr >= pp->code_lo && addr < pp->code_hi)
        pbuf_uint(&pp->msg, LOCATION_MAPPING_ID, 1);
    pbuf_uint(&pp->msg, LOCATION_ADDRESS, addr);
    for (uint32_t f = 0; loc && loc->known && f < loc->n_frames; f++) {
        const struct sym_frame *fr = sym_frame_at(loc, f);
        uint32_t entry = f + 1 == loc->n_frames ? frames_start_line(pp->syms, addr, fr->function) : 0;
        pbuf_clear(&pp->line);
        pbuf_uint(&pp->line, LINE_FUNCTION_ID, function_of(pp, fr, entry));
        pbuf_uint(&pp->line, LINE_LINE, fr->line);
        pbuf_message(&pp->msg, LOCATION_LINE, &pp->line);
    }
    if (!loc || !loc->known) { /* named by its address, as the table names it */
        char hex[12];
        snprintf(hex, sizeof hex, "0x%08x", (unsigned)addr);
        struct sym_frame unknown = {.function = hex, .file = "??"};
        pbuf_clear(&pp->line);
        pbuf_uint(&pp->line, LINE_FUNCTION_ID, function_of(pp, &unknown, 0));
        pbuf_message(&pp->msg, LOCATION_LINE, &pp->line);
    }
    pbuf_message(&pp->locs, PROFILE_LOCATION, &pp->msg);
    return id + 1;
}

static void add_sample(void *ctx, const struct prof_sample *s)
{
    struct pp *pp = ctx;
    size_t n = 1 + s->n_callers;
    if (n > pp->cap_ids) {
        uint64_t *v = realloc(pp->ids, n * sizeof *v);
        if (!v) {
            pp->failed = true;
            return;
        }
        pp->ids = v;
        pp->cap_ids = n;
    }
    for (size_t k = 0; k < n; k++)
        pp->ids[k] = location_of(pp, k ? s->callers[k - 1] : s->pc);
    uint64_t values[2];
    values[0] = (uint64_t)whole_next(&pp->count, s->count);
    values[1] = (uint64_t)whole_next(&pp->nanos, s->count * pp->info->written_ns);
    struct pbuf *m = &pp->msg;
    pbuf_clear(m);
    pbuf_packed(m, SAMPLE_LOCATION_ID, pp->ids, n);
    pbuf_packed(m, SAMPLE_VALUE, values, pp->info->period_ns > 0 ? 2 : 1);
    if (s->task) {
        pbuf_clear(&pp->line);
        pbuf_uint(&pp->line, LABEL_KEY, pp->task_key);
        pbuf_uint(&pp->line, LABEL_STR, str(pp, s->task));
        pbuf_message(m, SAMPLE_LABEL, &pp->line);
    }
    pbuf_message(&pp->samples, PROFILE_SAMPLE, m);
}

static void value_type(struct pp *pp, struct pbuf *out, unsigned field, const char *type, const char *unit)
{
    pbuf_clear(&pp->msg);
    pbuf_uint(&pp->msg, VALUE_TYPE_TYPE, str(pp, type));
    pbuf_uint(&pp->msg, VALUE_TYPE_UNIT, str(pp, unit));
    pbuf_message(out, field, &pp->msg);
}

static void mapping(struct pp *pp, struct pbuf *out)
{
    char id[2 * 64 + 1] = "";
    size_t len = 0;
    const uint8_t *bid = pp->syms ? sym_build_id(pp->syms, &len) : NULL;
    for (size_t i = 0; bid && i < len && i < 64; i++)
        snprintf(id + 2 * i, 3, "%02x", bid[i]);
    pbuf_clear(&pp->msg);
    pbuf_uint(&pp->msg, MAPPING_ID, 1);
    pbuf_uint(&pp->msg, MAPPING_START, pp->code_lo);
    pbuf_uint(&pp->msg, MAPPING_LIMIT, pp->code_hi);
    pbuf_uint(&pp->msg, MAPPING_FILENAME, str(pp, path_base(pp->info->elf)));
    pbuf_uint(&pp->msg, MAPPING_BUILD_ID, str(pp, id));
    for (unsigned f = MAPPING_HAS_FUNCTIONS; f <= MAPPING_HAS_INLINE; f++)
        pbuf_uint(&pp->msg, f, pp->syms != NULL);
    pbuf_message(out, PROFILE_MAPPING, &pp->msg);
}

static void functions(struct pp *pp, struct pbuf *out)
{
    for (size_t i = 0; i < intern_count(pp->functions); i++) {
        const struct pp_function *fn = &pp->fn[i];
        pbuf_clear(&pp->msg);
        pbuf_uint(&pp->msg, FUNCTION_ID, i + 1);
        pbuf_uint(&pp->msg, FUNCTION_NAME, fn->name);
        pbuf_uint(&pp->msg, FUNCTION_SYSTEM_NAME, fn->system_name);
        pbuf_uint(&pp->msg, FUNCTION_FILENAME, fn->file);
        pbuf_uint(&pp->msg, FUNCTION_START_LINE, fn->entry_line ? fn->entry_line : fn->min_line);
        pbuf_message(out, PROFILE_FUNCTION, &pp->msg);
    }
}

/* The whole message: everything that names strings first, the string table last. */
static void encode(struct pp *pp, struct pbuf *out, double total)
{
    value_type(pp, out, PROFILE_SAMPLE_TYPE, "samples", "count");
    if (pp->info->period_ns > 0)
        value_type(pp, out, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
    pbuf_append(out, &pp->samples);
    mapping(pp, out);
    pbuf_append(out, &pp->locs);
    functions(pp, out);
    if (pp->info->period_ns > 0) {
        pbuf_uint(out, PROFILE_DURATION, (uint64_t)whole_round(total * pp->info->period_ns));
        value_type(pp, out, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
        pbuf_uint(out, PROFILE_PERIOD, (uint64_t)whole_round(pp->info->written_ns));
    } else {
        value_type(pp, out, PROFILE_PERIOD_TYPE, "samples", "count");
        pbuf_uint(out, PROFILE_PERIOD, 1);
        pbuf_uint(out, PROFILE_COMMENT, str(pp, "cpu time unknown: the capture announced no sampling period and "
                                                "clock, so values are samples only"));
    }
    if (pp->info->comment)
        pbuf_uint(out, PROFILE_COMMENT, str(pp, pp->info->comment));
    for (size_t i = 0; i < intern_count(pp->strings); i++) { /* names from the ELF or the firmware: untrusted */
        char s[4096];                                          /* (go tool pprof -top prints them raw) */
        esc_text(s, sizeof s, intern_get(pp->strings, i), NULL);
        pbuf_bytes(out, PROFILE_STRING_TABLE, s, strlen(s));
    }
}

/* gzip (zlib's deflate with a gzip header: windowBits 15 + 16) of buf to out. */
static int gzip_to(FILE *out, const uint8_t *buf, size_t len, char *err, size_t errlen)
{
    z_stream z = {0};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        snprintf(err, errlen, "pprof: zlib could not start (out of memory)");
        return -1;
    }
    uint8_t chunk[1 << 15];
    z.next_in = (Bytef *)buf;
    int rc = Z_OK;
    size_t left = len;
    do {
        uInt take = left > (1u << 30) ? (1u << 30) : (uInt)left;
        if (z.avail_in == 0 && left) {
            z.next_in = (Bytef *)buf + (len - left);
            z.avail_in = take;
            left -= take;
        }
        z.next_out = chunk;
        z.avail_out = sizeof chunk;
        rc = deflate(&z, left ? Z_NO_FLUSH : Z_FINISH);
        size_t have = sizeof chunk - z.avail_out;
        if (have && fwrite(chunk, 1, have, out) != have)
            break;
    } while (rc != Z_STREAM_END && rc != Z_STREAM_ERROR);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        snprintf(err, errlen, "pprof: %s", rc == Z_STREAM_ERROR ? "zlib failed" : "write error");
        return -1;
    }
    return 0;
}

int pprof_write(FILE *out, struct prof *p, const struct pprof_info *info, char *err, size_t errlen)
{
    struct pp pp = {.syms = prof_symbols(p), .info = info};
    pp.strings = intern_new();
    pp.functions = intern_new();
    pp.locations = intern_new();
    struct pbuf whole = {0};
    int rc = -1;
    if (pp.strings && pp.functions && pp.locations) {
        str(&pp, ""); /* string 0 is the empty string */
        pp.task_key = str(&pp, "task");
        if (pp.syms)
            sym_code_span(pp.syms, &pp.code_lo, &pp.code_hi);
        prof_each_sample(p, add_sample, &pp);
        encode(&pp, &whole, prof_total(p));
        if (!pp.failed && !whole.failed && !pp.samples.failed && !pp.locs.failed)
            rc = gzip_to(out, whole.data, whole.len, err, errlen);
        else
            snprintf(err, errlen, "pprof: out of memory");
    } else {
        snprintf(err, errlen, "pprof: out of memory");
    }
    intern_free(pp.strings);
    intern_free(pp.functions);
    intern_free(pp.locations);
    free(pp.fn);
    free(pp.ids);
    pbuf_free(&pp.samples);
    pbuf_free(&pp.locs);
    pbuf_free(&pp.msg);
    pbuf_free(&pp.line);
    pbuf_free(&whole);
    return rc;
}
