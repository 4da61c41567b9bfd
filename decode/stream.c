/* The live stream's lines (docs/stream.md): samples in base64 against the announced code base,
 * task indexes for tags, streamed histogram buckets and the control lines. */
#include "stream.h"

#include "textline.h"

#include <stdio.h>
#include <string.h>

/* The characters that lead a stream line (docs/stream.md) */
#define LEAD_SAMPLES '$' /* untagged samples */
#define LEAD_TAGGED '%'  /* tagged samples, naming task indexes on the way */
#define LEAD_CONTROL '@' /* the announce, names, sections, losses */
#define LEAD_HIST '#'    /* streamed histogram buckets */
#define LEAD_GROUP '&'   /* a reservoir's group: its counts, then a '$' or '%' line's body */
#define LEAD_STACK '^'   /* a sample's stack evidence */
#define STACK_DROPPED '~' /* after LEAD_STACK: the samples whose evidence the firmware dropped so far */
/* ... and the mark before the two characters of the check that ends it */
#define CHECK_CRC12 '~'  /* version 1: CRC-12 */
#define CHECK_SUM12 '!'  /* version 2 on: sum12 */

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* CRC-12, polynomial 0x80F, MSB first, one nibble at a time: the check of v1 lines ("~CC"). */
static uint16_t crc12(const char *s, size_t n)
{
    static const uint16_t table[16] = {0x000, 0x80F, 0x811, 0x01E, 0x82D, 0x022, 0x03C, 0x833,
                                       0x855, 0x05A, 0x044, 0x84B, 0x078, 0x877, 0x869, 0x066};
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        crc = (uint16_t)(((crc << 4) & 0xFFF) ^ table[((crc >> 8) ^ (c >> 4)) & 0xF]);
        crc = (uint16_t)(((crc << 4) & 0xFFF) ^ table[((crc >> 8) ^ c) & 0xF]);
    }
    return crc;
}

/* sum12, the check of v2 lines (docs/stream.md): running sums a and b over the 32-bit
 * little-endian words of the line, the last one padded with zeros; (a + 3b) mod 4095. */
static uint16_t sum12(const char *s, size_t n)
{
    uint64_t a = 0, b = 0;
    for (size_t i = 0; i < n; i += 4) {
        uint32_t w = 0;
        for (size_t k = 0; k < 4 && i + k < n; k++)
            w |= (uint32_t)(uint8_t)s[i + k] << (8 * k);
        a += w;
        b += a;
    }
    return (uint16_t)((a + 3 * b) % 4095);
}

/* Whether the line ends in a check mark and two characters: "~CC" (v1) or "!CC" (v2). */
static bool has_check(const char *s, size_t len)
{
    return len >= 4 && (s[len - 3] == CHECK_CRC12 || s[len - 3] == CHECK_SUM12);
}

/* Length of the checked body, or 0 when the line does not end in a valid check. */
static size_t checked_body(const char *s, size_t len)
{
    if (!has_check(s, len))
        return 0;
    int hi = b64val(s[len - 2]), lo = b64val(s[len - 1]);
    if (hi < 0 || lo < 0)
        return 0;
    uint16_t want = (uint16_t)(hi << 6 | lo);
    uint16_t got = s[len - 3] == CHECK_CRC12 ? crc12(s, len - 3) : sum12(s, len - 3);
    return got == want ? len - 3 : 0;
}

/* A task index: one base64 char for 0..61 (and 63, '/', from firmware before issue 30), or '+'
 * and two more for 62..4157. Returns the index, or -1 when malformed. */
static int task_index(const char *s, size_t len, size_t *i)
{
    if (*i >= len)
        return -1;
    int c = b64val(s[(*i)++]);
    if (c != 62)
        return c;
    if (*i + 2 > len)
        return -1;
    int hi = b64val(s[*i]), lo = b64val(s[*i + 1]);
    *i += 2;
    return hi < 0 || lo < 0 ? -1 : 62 + (hi << 6 | lo);
}

/* A line that may have named tasks was dropped: every index named so far waits for its next name
 * (its samples go out pending), so that none keeps a name the lost line may have changed. */
static void names_unsure(struct text_decoder *d, const struct ev_sink *sink)
{
    d->names_epoch++;
    d->stats.names_unsure++;
    struct ev e = {.type = EV_NAMES_UNSURE, .offset = d->line_offset};
    ev_emit(sink, &e);
}

/* The tag a sample of index i carries: its name's, or pending while that name is unsure. */
static uint32_t index_tag(struct text_decoder *d, int i)
{
    uint32_t tag = d->task_tags[i];
    if (ev_tag_pending(tag)) { /* named before this host began: waits for its first name */
        d->task_waiting[i]++;
        return tag;
    }
    if (d->task_epoch[i] == d->names_epoch)
        return tag;
    d->stats.names_waited++;
    if (++d->task_waiting[i] > d->stats.max_wait)
        d->stats.max_wait = d->task_waiting[i];
    return EV_TAG_PENDING((uint32_t)i);
}

/* Index t is named tag: returns the pending tag whose samples take this name (EV_TASK_NAME's value),
 * or 0. A repeat (@N, `new_task` false), after a dropped line or to a host that began late, names the
 * samples that waited; a new task's name ('=', version 3's @task: given before its first sample)
 * cannot be theirs, even as the index's first name to a host that began after its last one was
 * sent. (Firmware before version 3 repeated its names as @task lines after each announce.) */
static uint32_t name_index(struct text_decoder *d, int t, uint32_t tag, bool new_task, const struct ev_sink *sink)
{
    uint32_t was = d->task_tags[t];
    bool unsure = d->task_epoch[t] != d->names_epoch && !ev_tag_pending(was);
    d->task_tags[t] = tag;
    d->task_epoch[t] = d->names_epoch;
    uint32_t waited = d->task_waiting[t];
    d->task_waiting[t] = 0;
    if (ev_tag_pending(was) && (!new_task || !waited))
        return was;
    if (!ev_tag_pending(was) && (!unsure || !waited))
        return 0;
    if (!new_task)
        return EV_TAG_PENDING((uint32_t)t);
    d->stats.names_unknown += waited;
    struct ev e = {.type = EV_TASK_UNKNOWN, .offset = d->line_offset,
                   .task_unknown = {.tag = EV_TAG_PENDING((uint32_t)t), .index = (uint32_t)t, .samples = waited}};
    ev_emit(sink, &e);
    return 0;
}

/* The tag before a sample: a task index (*index; its tag is looked up when the sample is used, after
 * the line's '=' entries before it), "-" and two chars of an exception number (its handler's tag,
 * CMPROF_ISR_TAG), or "/": a tag the firmware had no slot for. False when malformed. */
static bool sample_tag(struct text_decoder *d, const char *s, size_t len, size_t *i, uint32_t *tag, int *index)
{
    *index = -1;
    if (*i < len && s[*i] == '-') {
        int hi = *i + 3 <= len ? b64val(s[*i + 1]) : -1, lo = *i + 3 <= len ? b64val(s[*i + 2]) : -1;
        if (hi < 0 || hi > 7 || lo < 0 || (hi << 6 | lo) < 2) /* exceptions 2..511 */
            return false;
        *tag = 0xFFFFFE00u | (uint32_t)(hi << 6 | lo);
        *i += 3;
    } else if (*i < len && s[*i] == '/' && !d->slash_named) {
        *tag = EV_TAG_UNSENT;
        (*i)++;
    } else {
        *index = task_index(s, len, i);
        if (*index < 0)
            return false;
    }
    return *i < len;
}

static bool repeat_entry(struct text_decoder *d, const char *s, size_t len, size_t *i, int emit,
                         const struct ev_sink *sink);
static bool entry_v5(struct text_decoder *d, const char *s, size_t len, size_t *i, int emit, int given,
                     const struct ev_sink *sink);
/* repeat_entry: only check it (an @N entry, or a '=' one), or name by it (@N, '=') */
enum { ENTRY_CHECK, ENTRY_REPEAT, ENTRY_NEW, ENTRY_CHECK_DEF };

/* A sample's PC at s[*i]: 4 chars of halfword offset from the code base, or '*' and 6 of the full
 * 32 bits. False when malformed. */
static bool sample_pc(const struct text_decoder *d, const char *s, size_t len, size_t *i, uint32_t *pc)
{
    bool full = s[*i] == '*';
    size_t at = *i + full, chars = full ? 6 : 4;
    if (at + chars > len)
        return false;
    uint32_t v = 0;
    for (size_t k = 0; k < chars; k++) {
        int b = b64val(s[at + k]), digit = (unsigned char)s[at + k] - '0';
        if (digit > 63)
            digit = -1;
        /* before the first announce the version is not known: either alphabet, for the count of
         * samples dropped (the PC is not used) */
        int c = full || (d->have_base && !d->pc_digits) ? b : d->have_base ? digit : b >= 0 ? b : digit;
        if (c < 0)
            return false;
        v = v << 6 | (uint32_t)c;
    }
    *pc = full ? v : d->code_base + (v << 1);
    *i = at + chars;
    return true;
}

/* Version 6's PC characters: '?' + 6 bits ('?' to '~'); -1 for any other. */
static int pc6val(char c)
{
    return c >= '?' && c <= '~' ? c - '?' : -1;
}

/* Version 6's task index characters (none of them a PC character): 19 of one char, 4 leaders of a
 * second (base64) char for 19..274, and '+' with two base64 chars for 62 + 12 bits. */
static const char tag6_one[] = "0123456789:;<>\"#$%&", tag6_lead[] = "'(),";

/* A version 6 tag at s[*i]: as sample_tag, in version 6's characters. */
static bool sample_tag6(const char *s, size_t len, size_t *i, uint32_t *tag, int *index)
{
    char c = s[*i];
    const char *one = strchr(tag6_one, c), *lead = strchr(tag6_lead, c);
    *index = -1;
    if (c == '-' || c == '+') {
        int hi = *i + 3 <= len ? b64val(s[*i + 1]) : -1, lo = *i + 3 <= len ? b64val(s[*i + 2]) : -1;
        if (hi < 0 || lo < 0 || (c == '-' && (hi > 7 || (hi << 6 | lo) < 2))) /* exceptions 2..511 */
            return false;
        if (c == '-')
            *tag = 0xFFFFFE00u | (uint32_t)(hi << 6 | lo);
        else
            *index = 62 + (hi << 6 | lo);
        *i += 3;
    } else if (c == '/') {
        *tag = EV_TAG_UNSENT;
        (*i)++;
    } else if (c && one) {
        *index = (int)(one - tag6_one);
        (*i)++;
    } else if (c && lead && *i + 2 <= len && b64val(s[*i + 1]) >= 0) {
        *index = 19 + (int)(lead - tag6_lead) * 64 + b64val(s[*i + 1]);
        *i += 2;
    } else {
        return false;
    }
    return *i < len;
}

/* A version 6 PC at s[*i]: 3 chars of halfword offset, '.' and 4, or '*' and 6 base64 chars of the
 * full 32 bits. False when malformed. */
static bool sample_pc6(const struct text_decoder *d, const char *s, size_t len, size_t *i, uint32_t *pc)
{
    char c = s[*i];
    size_t at = *i + (c == '*' || c == '.'), chars = c == '*' ? 6 : c == '.' ? 4 : 3;
    if (at + chars > len)
        return false;
    uint32_t v = 0;
    for (size_t k = 0; k < chars; k++) {
        int b = c == '*' ? b64val(s[at + k]) : pc6val(s[at + k]);
        if (b < 0)
            return false;
        v = v << 6 | (uint32_t)b;
    }
    *pc = c == '*' ? v : d->code_base + (v << 1);
    *i = at + chars;
    return true;
}

/* Version 7's task index characters, none of them a PC's first ('?' to 'n', '.', '*'): 37 of one
 * char, '}' and a base64 char for 37..100, '+' and two for 101 on; '-' and one base64 char, or '~'
 * and two, an exception; '/' no slot. */
static const char tag7_one[] = "0123456789:;<>\"#$%&'(),opqrstuvwxyz{|";
#define PC7_LEAD(c) ((c) >= '?' && (c) <= 'N') /* a PC in 3 chars: '?' + its top 4 bits */
#define PAGE7_HIT(c) ((c) >= 'O' && (c) <= 'n') /* a page hit: 'O' + the slot */
#define PAGE7_EPOCH 8u                           /* lines: a number that is a multiple starts afresh */

/* A version 7 tag at s[*i]: as sample_tag6, in version 7's characters. */
static bool sample_tag7(const char *s, size_t len, size_t *i, uint32_t *tag, int *index)
{
    char c = s[*i];
    const char *one = c ? strchr(tag7_one, c) : NULL;
    size_t more = one || c == '/' ? 0 : c == '}' || c == '-' ? 1 : c == '+' || c == '~' ? 2 : 3;
    int v = 0;
    if (more == 3 || *i + 1 + more > len)
        return false;
    for (size_t k = 1; k <= more; k++) {
        int b = b64val(s[*i + k]);
        if (b < 0)
            return false;
        v = v << 6 | b;
    }
    *index = -1;
    if (one)
        *index = (int)(one - tag7_one);
    else if (c == '}')
        *index = 37 + v;
    else if (c == '+')
        *index = 101 + v;
    else if (c == '/')
        *tag = EV_TAG_UNSENT;
    else if (v < 2 || v > 511 || (c == '~' && v < 64)) /* exceptions 2..511, the short form below 64 */
        return false;
    else
        *tag = 0xFFFFFE00u | (uint32_t)v;
    if (*index >= (int)TEXT_TASKS)
        return false;
    *i += 1 + more;
    return *i < len;
}

#define LINE_DEFS 64 /* '=' entries in one sample line, at most (the firmware puts 4) */

/* A sample line, parsed: its samples, and where its '=' entries are. */
struct sample_line {
    uint32_t pcs[64], tags[64];
    int indexes[64];
    size_t defs[LINE_DEFS], def_before[LINE_DEFS]; /* where each entry is, and the sample it precedes */
    int def_index[LINE_DEFS];                      /* version 7: the index it names, that sample's */
    size_t n, n_defs;
    /* version 7: the page cache after the line, its number, whether it read (false: a line was missed) */
    uint32_t page_key[TEXT_PAGE_SLOTS];
    uint32_t number;
    bool known;
};

/* A version 7 sample's PC at s[*i], after its tag if any: a page hit ('O' + slot, then the offset's
 * char) from the line's page cache l, 3 chars, '.' and 4, or '*' and 6 base64. *slot: the cache
 * slot it leaves its page in (-1: none); *hit: it was a hit. False when malformed. */
static bool sample_pc7(const struct text_decoder *d, struct sample_line *l, const char *s, size_t len, size_t *i,
                       uint32_t *pc, int *slot, bool *hit)
{
    char c = s[*i];
    size_t at = *i + (c == '*' || c == '.' || PAGE7_HIT(c)), chars = c == '*' ? 6 : c == '.' ? 4 : PAGE7_HIT(c) ? 1 : 3;
    if (!PC7_LEAD(c) && !PAGE7_HIT(c) && c != '.' && c != '*')
        return false;
    if (at + chars > len)
        return false;
    uint32_t v = PC7_LEAD(c) ? (uint32_t)(c - '?') : 0;
    for (size_t k = PC7_LEAD(c); k < chars; k++) {
        int b = c == '*' ? b64val(s[at + k]) : pc6val(s[at + k]);
        if (b < 0)
            return false;
        v = v << 6 | (uint32_t)b;
    }
    *hit = PAGE7_HIT(c);
    *slot = -1;
    if (*hit) {
        int k = c - 'O';
        if (!l->page_key[k] && l->known)
            return false; /* a hit on no page: the firmware's cache is not this */
        v |= (l->page_key[k] ? l->page_key[k] - 1u : 0u) << 6;
        *slot = k;
    } else if (c != '*') {
        *slot = (int)((v >> 6) & (TEXT_PAGE_SLOTS - 1u));
    }
    *pc = c == '*' ? v : d->code_base + (v << 1);
    *i = at + chars;
    return true;
}

/* Version 7's sample line: its number (2 chars '?' + 6 bits), then as version 6's (a sample without a tag
 * has the tag of the sample before it), each PC perhaps a hit in the page cache (the line's copy in
 * l: kept only once the whole line read). */
static bool parse_samples7(struct text_decoder *d, const char *s, size_t len, bool tagged, struct sample_line *l,
                           const struct ev_sink *sink)
{
    int hi = len >= 3 ? pc6val(s[1]) : -1, lo = len >= 3 ? pc6val(s[2]) : -1; /* '?' + 6 bits each */
    if (hi < 0 || lo < 0)
        return false;
    l->number = (uint32_t)(hi << 6 | lo);
    bool fresh = l->number % PAGE7_EPOCH == 0;
    l->known = fresh || (d->page_synced && l->number == ((d->page_line + 1u) & 4095u));
    if (fresh)
        memset(l->page_key, 0, sizeof l->page_key);
    else
        memcpy(l->page_key, d->page_key, sizeof l->page_key);
    l->n = l->n_defs = 0;
    d->front_len = 0; /* front-coded names refer only within their line */
    for (size_t i = 3; i < len;) {
        if (tagged && s[i] == '=') { /* an entry without its index: the next sample's tag gives it */
            if (l->n_defs == LINE_DEFS)
                return false;
            l->defs[l->n_defs] = ++i;
            l->def_before[l->n_defs] = l->n;
            uint32_t tag;
            size_t at;
            if (!repeat_entry(d, s, len, &i, ENTRY_CHECK_DEF, sink) || i >= len ||
                !sample_tag7(s, len, (at = i, &at), &tag, &l->def_index[l->n_defs]) || l->def_index[l->n_defs] < 0)
                return false;
            l->n_defs++;
            continue;
        }
        size_t n = l->n;
        if (n == 64)
            return false;
        char c = s[i];
        bool has_tag = tagged && !PC7_LEAD(c) && !PAGE7_HIT(c) && c != '.' && c != '*', hit;
        l->tags[n] = 0;
        l->indexes[n] = -1;
        if (has_tag && !sample_tag7(s, len, &i, &l->tags[n], &l->indexes[n]))
            return false;
        int slot;
        if (!sample_pc7(d, l, s, len, &i, &l->pcs[n], &slot, &hit))
            return false;
        if (tagged && !has_tag) {
            if (!n)
                return false; /* a line's first sample has its tag */
            l->tags[n] = l->tags[n - 1];
            l->indexes[n] = l->indexes[n - 1];
        }
        if (slot >= 0 && !hit)
            l->page_key[slot] = ((l->pcs[n] - d->code_base) >> 7) + 1u;
        l->n++;
    }
    return true;
}

/* "$" or "%" samples in the alphabet d->pc_digits says; false when malformed. */
static bool parse_samples(struct text_decoder *d, const char *s, size_t len, bool tagged, struct sample_line *l,
                          const struct ev_sink *sink)
{
    if (d->paged)
        return parse_samples7(d, s, len, tagged, l, sink);
    size_t i = 1;
    l->n = l->n_defs = 0;
    while (i < len) {
        if (tagged && s[i] == '=') {
            if (l->n_defs == LINE_DEFS)
                return false;
            l->defs[l->n_defs] = ++i;
            l->def_before[l->n_defs++] = l->n;
            if (!repeat_entry(d, s, len, &i, ENTRY_CHECK_DEF, sink))
                return false;
            continue;
        }
        size_t n = l->n;
        if (n == 64)
            return false;
        l->tags[n] = 0;
        l->indexes[n] = -1;
        if (d->compact) {
            /* version 6: a sample without a tag has the one before it in the line; the first has one */
            if (tagged && pc6val(s[i]) < 0 && s[i] != '*' && s[i] != '.') {
                if (!sample_tag6(s, len, &i, &l->tags[n], &l->indexes[n]))
                    return false;
            } else if (tagged) {
                if (!n)
                    return false;
                l->tags[n] = l->tags[n - 1];
                l->indexes[n] = l->indexes[n - 1];
            }
            if (!sample_pc6(d, s, len, &i, &l->pcs[n]))
                return false;
        } else if ((tagged && !sample_tag(d, s, len, &i, &l->tags[n], &l->indexes[n])) ||
                   !sample_pc(d, s, len, &i, &l->pcs[n])) {
            return false;
        }
        l->n++;
    }
    return true;
}

/* The sample forms: version 2's base64 PCs, version 3's digits (to 5), version 6's, version 7's. */
static uint32_t form_of(const struct text_decoder *d)
{
    return d->paged ? 7 : d->compact ? 6 : d->pc_digits ? 3 : 2;
}

static bool parse_as(struct text_decoder *d, uint32_t form, const char *s, size_t len, bool tagged,
                     struct sample_line *l, const struct ev_sink *sink)
{
    bool digits = d->pc_digits, compact = d->compact, paged = d->paged;
    d->pc_digits = form == 3;
    d->compact = form == 6;
    d->paged = form == 7;
    bool ok = parse_samples(d, s, len, tagged, l, sink);
    d->pc_digits = digits;
    d->compact = compact;
    d->paged = paged;
    return ok;
}

/* A sample line of another version than the announce's (its PCs are in the other alphabet, or a
 * version 1 line, "~CC", under a version 3 announce): named as such, not decoded. Its '=' entries
 * are not used either, so its names are unsure. */
static void other_version(struct text_decoder *d, uint32_t version, bool tagged, const struct ev_sink *sink)
{
    d->stats.other_version_lines++;
    d->page_synced = false; /* (a version 7 line it may have been) */
    d->stats.other_version = version;
    d->stats.announced_version = d->version;
    if (tagged)
        names_unsure(d, sink);
}

/* The first sample line read before any announce: its number, when it reads in version 7's form
 * (text_stats.first_number: a host that joined a running stream). */
static void first_number(struct text_decoder *d, const char *s, size_t len, bool tagged, const struct ev_sink *sink)
{
    struct sample_line l;
    uint32_t version = d->version;
    d->version = 7; /* (its entries, as version 7's) */
    if (parse_as(d, 7, s, len, tagged, &l, sink))
        d->stats.first_number = 1u + l.number;
    d->version = version;
}

/* "$" or "%" samples; a "%" line may name task indexes on the way ('=' and an @N entry), each
 * for the samples after it. The whole line is checked before anything from it is used. `v1`: the
 * line's check is a CRC-12 ("~CC"), version 1's. A reservoir's group ('&') gives its kept samples and
 * what they stand for (0 and 0 for a plain line). */
static void emit_samples(struct text_decoder *d, const char *s, size_t len, bool tagged,
                         const struct sample_line *l, uint64_t stands_for, uint32_t kept, const struct ev_sink *sink);

static void stream_samples(struct text_decoder *d, const char *s, size_t len, bool tagged, bool v1,
                           uint64_t stands_for, uint32_t kept, const struct ev_sink *sink)
{
    struct sample_line l;
    if (d->have_base && v1 && (d->pc_digits || d->compact)) {
        other_version(d, 1, tagged, sink);
        return;
    }
    /* once a line read only in another form (version 2's base64, version 3's digits, version 6's)
     * showed the mismatch, a line that reads in both is taken as the other version's too, until an
     * announce */
    if (!d->have_base && !d->stats.no_base && !v1)
        first_number(d, s, len, tagged, sink);
    bool first_try = !d->other_seen && parse_samples(d, s, len, tagged, &l, sink);
    if (!first_try && !d->have_base && !v1) {
        /* no announce yet: version 7's and 6's samples are counted too, and their '=' entries (a late
         * host's first lines: a new task's name) named, not taken for a malformed line */
        static const uint32_t early[] = {8, 6}; /* (8: version 7's lines, and its numbered names) */
        uint32_t version = d->version;
        bool digits = d->pc_digits, compact = d->compact, paged = d->paged, numbered = d->numbered;
        for (size_t k = 0; k < sizeof early / sizeof *early && !first_try; k++) {
            d->version = early[k]; /* in that form both: version 7's entries take the next sample's index */
            d->pc_digits = false;
            d->compact = early[k] == 6;
            d->paged = early[k] == 8;
            d->numbered = early[k] == 8;
            first_try = parse_samples(d, s, len, tagged, &l, sink);
            if (first_try)
                emit_samples(d, s, len, tagged, &l, stands_for, kept, sink);
        }
        d->version = version;
        d->pc_digits = digits;
        d->compact = compact;
        d->paged = paged;
        d->numbered = numbered;
        if (first_try)
            return;
    }
    if (!first_try && d->have_base && !v1) {
        /* version 7's last: its lines read in few other forms, but its form takes many (a line
         * number, then PC chars) */
        static const uint32_t forms[] = {6, 3, 2, 7};
        for (size_t k = 0; k < sizeof forms / sizeof *forms; k++)
            if (forms[k] != form_of(d) && parse_as(d, forms[k], s, len, tagged, &l, sink)) {
                d->other_seen = true;
                other_version(d, forms[k], tagged, sink);
                return;
            }
    }
    if (!first_try && !(d->other_seen && parse_samples(d, s, len, tagged, &l, sink))) {
        textline_bad(d);
        d->page_synced = false;
        if (tagged)
            names_unsure(d, sink);
        return;
    }
    emit_samples(d, s, len, tagged, &l, stands_for, kept, sink);
}

/* Lines counted as not read so far (malformed, too long, of another or a newer version): any of
 * them may have been a numbered sample line. */
static uint64_t doubtful_lines(const struct text_stats *t)
{
    return t->bad_lines + t->long_lines + t->other_version_lines + t->newer_lines;
}

/* Whether version 7's lines not read now are the cost of joining a running stream, not a loss: no
 * line read with the firmware's page cache yet, and none dropped (a first line cut by the join is
 * forgiven, not counted) or of another version since the decoder began. */
static bool joining(const struct text_decoder *d)
{
    return !d->page_ever_synced && !doubtful_lines(&d->stats);
}

/* Version 7's sample lines are numbered (12 bits): a number skipped, beyond the lines counted as not
 * read in between, is a line lost whole on the way (a serial adapter's overrun), whose samples no
 * other count sees. After an announce the firmware went on or started again at 0
 * (cmprof_stream_announce; its repeats go on): the smaller gap is taken, never a false one. */
static void count_skipped_lines(struct text_decoder *d, uint32_t number)
{
    uint64_t doubtful = doubtful_lines(&d->stats);
    if (d->number_known) { /* (page_line: the last numbered line's, before this one's) */
        uint64_t gap = (number - d->page_line - 1u) & 4095u;
        if (d->number_may_restart && number < gap) { /* numbered afresh: the stream began again */
            gap = number;
            d->stats.first_restart = d->stats.restarts++ ? d->stats.first_restart : d->line_offset;
        }
        uint64_t excused = doubtful - d->doubtful_mark;
        d->stats.skipped_lines += gap > excused ? gap - excused : 0u;
    }
    d->number_known = true;
    d->number_may_restart = false;
    d->doubtful_mark = doubtful;
}

/* A sample line parsed whole: its samples, each after the '=' entries before it. */
static void emit_samples(struct text_decoder *d, const char *s, size_t len, bool tagged,
                         const struct sample_line *l, uint64_t stands_for, uint32_t kept, const struct ev_sink *sink)
{
    size_t n = l->n;
    bool unread = false; /* version 7: a line missed before it since its page cache began */
    if (!d->have_base) {
        d->stats.no_base += n;
        n = 0; /* the names still count: they outlive the samples */
    } else if (d->paged) {
        memcpy(d->page_key, l->page_key, sizeof d->page_key);
        count_skipped_lines(d, l->number);
        d->page_line = l->number;
        d->page_synced = l->known;
        unread = !l->known;
        *(joining(d) ? &d->stats.unread_joining : &d->stats.unread_paged) += unread ? n : 0u;
        d->page_ever_synced |= l->known;
    }
    struct ev e = ev_blank(EV_PC);
    e.pc.has_tag = tagged;
    e.offset = d->line_offset;
    e.pc.taken = stands_for; /* a reservoir's group: each sample stands for stands_for / kept */
    e.pc.kept = kept;
    d->front_len = 0; /* the entries again, in the line's order (version 7's front-coded names) */
    if (d->paged && l->number % PAGE7_EPOCH == 0) { /* version 8's numbered names: afresh with the pages */
        d->num_ref_len = 0;
        d->num_ref_ok = true;
    } else if (d->paged && !l->known) {
        d->num_ref_ok = false; /* a line of the epoch missed: its numbered names are not known here */
    }
    for (size_t k = 0, next_def = 0; k <= n; k++) {
        for (; next_def < l->n_defs && l->def_before[next_def] <= k; next_def++) {
            size_t at = l->defs[next_def];
            if (d->paged)
                entry_v5(d, s, len, &at, ENTRY_NEW, l->def_index[next_def], sink);
            else
                repeat_entry(d, s, len, &at, ENTRY_NEW, sink);
        }
        if (k == n)
            break;
        if (unread) /* its '=' entries still name (they read alone), its samples do not */
            continue;
        e.pc.addr = l->pcs[k];
        e.pc.tag = l->indexes[k] >= 0 ? index_tag(d, l->indexes[k]) : l->tags[k];
        d->stats.unsent_tags += tagged && e.pc.tag == EV_TAG_UNSENT;
        ev_emit(sink, &e);
    }
    d->stats.samples += unread ? 0u : n;
}

static uint32_t b64_3(const char *s, bool *ok)
{
    int a = b64val(s[0]), b = b64val(s[1]), c = b64val(s[2]);
    *ok = a >= 0 && b >= 0 && c >= 0;
    return (uint32_t)a << 12 | (uint32_t)b << 6 | (uint32_t)c;
}

/* '#' lines: pairs of (bucket index, new samples), 3 base64 chars each. */
static void stream_hist(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    if ((len - 1) % 6 != 0 || len < 7 || !d->have_hist) {
        if (!d->have_hist && (len - 1) % 6 == 0)
            d->stats.no_base++;
        else
            textline_bad(d);
        return;
    }
    for (size_t i = 1; i < len; i += 6) { /* validate first: a line is used whole or not at all */
        bool ok1, ok2;
        uint32_t idx = b64_3(s + i, &ok1);
        b64_3(s + i + 3, &ok2);
        if (!ok1 || !ok2 || idx > d->hist_sbins) {
            textline_bad(d);
            return;
        }
    }
    for (size_t i = 1; i < len; i += 6) {
        bool ok;
        uint32_t idx = b64_3(s + i, &ok), delta = b64_3(s + i + 3, &ok);
        if (idx == d->hist_sbins) {
            d->stats.hist_out += delta;
            continue;
        }
        struct ev e = ev_blank(EV_BUCKET);
        e.bucket.addr = d->hist_sbase + (idx << d->hist_sshift);
        e.bucket.bytes = 1u << d->hist_sshift;
        e.bucket.samples = delta;
        e.offset = d->line_offset;
        d->stats.buckets++;
        ev_emit(sink, &e);
    }
}

static bool field_u64(const char *s, const char *end, const char *key, uint64_t *out, int base)
{
    const char *p = s;
    size_t k = strlen(key);
    while (p + k <= end) { /* find " key" */
        if ((p == s || p[-1] == ' ') && memcmp(p, key, k) == 0) {
            const char *q = p + k;
            return textline_uint(&q, end, "", out, base);
        }
        p++;
    }
    return false;
}

/* The newest stream version this host reads. */
#define STREAM_VERSION 9u

unsigned text_stream_version(void)
{
    return STREAM_VERSION;
}

/* An announced number out of its range: the announce is refused, by the field's name. */
static bool refuse(struct text_decoder *d, const char *field, uint64_t value, const char *range)
{
    d->stats.refused_announces++;
    d->stats.refused_field = field;
    d->stats.refused_value = value;
    d->stats.refused_range = range;
    return false;
}

/* The announce's numbers, before any arithmetic uses them: the firmware's fields are 32 bits; its
 * clocks 1 kHz or more (0: not given); a mean sampling period of a minute at most. */
static bool announce_in_range(struct text_decoder *d, uint64_t clk, uint64_t tclk, uint64_t sclk, uint64_t period,
                              uint64_t jitter)
{
    const char *clock = "0 (not given) or 1000..4294967295 Hz";
    if (clk > UINT32_MAX || (clk && clk < 1000))
        return refuse(d, "clk", clk, clock);
    if (tclk > UINT32_MAX || (tclk && tclk < 1000))
        return refuse(d, "tclk", tclk, clock);
    if (sclk > UINT32_MAX || (sclk && sclk < 1000))
        return refuse(d, "sclk", sclk, clock);
    if (period > UINT32_MAX)
        return refuse(d, "period", period, "0..4294967295 timer ticks");
    if (jitter > UINT32_MAX)
        return refuse(d, "jitter", jitter, "a mask of 0..4294967295 timer ticks");
    if (tclk && (double)period + (double)jitter / 2.0 > 60.0 * (double)tclk)
        return refuse(d, "period", period, "a mean sampling period (period + jitter / 2 ticks of tclk) of 60 s at most");
    return true;
}

/* "@cmprof v= base= clk= tclk= sclk= period= jitter= bid= arch= timer=": the firmware's announce. */
static void control_announce(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    const char *end = s + len, *p;
    uint64_t ver = 0, clk = 0, tclk = 0, sclk = 0, period = 0, jitter = 0, base = 0;
    if (field_u64(s, end, "v=", &ver, 10) && ver > STREAM_VERSION) {
        /* a newer firmware: its lines are not read (counted), until an announce of a known version */
        d->newer_version = ver;
        d->stats.newer_version = ver > d->stats.newer_version ? ver : d->stats.newer_version;
        d->have_base = false;
        return;
    }
    if (!field_u64(s, end, "v=", &ver, 10) || ver < 1 || !field_u64(s, end, "base=", &base, 16) ||
        base > UINT32_MAX) {
        textline_bad(d);
        return;
    }
    field_u64(s, end, "clk=", &clk, 10);
    field_u64(s, end, "tclk=", &tclk, 10);
    field_u64(s, end, "sclk=", &sclk, 10);
    field_u64(s, end, "period=", &period, 10);
    field_u64(s, end, "jitter=", &jitter, 10);
    if (!announce_in_range(d, clk, tclk, sclk, period, jitter))
        return;
    d->newer_version = 0;
    d->version = (uint32_t)ver;
    d->other_seen = false;
    const char *bid = NULL;
    size_t bid_len = 0;
    for (p = s; p + 5 <= end; p++)
        if (memcmp(p, " bid=", 5) == 0) {
            bid = p + 5;
            bid_len = (size_t)(end - bid);
            for (size_t k = 0; k < bid_len; k++)
                if (bid[k] == ' ') {
                    bid_len = k;
                    break;
                }
        }
    d->have_base = true;
    d->pc_digits = ver >= 3; /* version 4: version 3 and a reservoir's '&' lines */
    d->compact = ver >= 6;   /* version 6: 3-char PCs, a tag only where it changes */
    d->paged = ver >= 7;     /* version 7: the page cache and the line's number */
    d->numbered = ver >= 8;  /* version 8: numbered names (version 9: against names ending in 2 digits) */
    d->number_may_restart = true;
    d->number_known &= d->paged;
    d->code_base = (uint32_t)base;
    for (p = s; p + 6 <= end; p++) /* " arch=A timer=T", as the firmware writes it */
        if (memcmp(p, " arch=", 6) == 0) {
            const char *t = p + 1, *te = t;
            for (int spaces = 0; te < end && !(*te == ' ' && ++spaces == 2); te++) {
            }
            struct ev target = {.type = EV_TARGET, .offset = d->line_offset, .target = {t, (size_t)(te - t)}};
            ev_emit(sink, &target);
            break;
        }
    struct ev e = {.type = EV_STREAM_INFO,
                   .info = {.clock_hz = clk, .period = period, .timer_hz = tclk, .section_hz = sclk,
                            .jitter = (uint32_t)jitter, .code_base = (uint32_t)base,
                            .build_id = bid ? bid : "", .build_id_len = bid_len},
                   .offset = d->line_offset};
    ev_emit(sink, &e);
}

/* "@hist base= shift= bins=": the streamed histogram's layout. */
static void control_hist(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    const char *end = s + len;
    uint64_t base = 0, shift = 0, bins = 0;
    if (!field_u64(s, end, "base=", &base, 16) || !field_u64(s, end, "shift=", &shift, 10) ||
        !field_u64(s, end, "bins=", &bins, 10) || base > UINT32_MAX || shift < 1 || shift > 16 ||
        bins == 0 || bins >= (1u << 18)) {
        textline_bad(d);
        return;
    }
    d->have_hist = true;
    d->hist_sbase = (uint32_t)base;
    d->hist_sshift = (uint32_t)shift;
    d->hist_sbins = (uint32_t)bins;
    struct ev e = {.type = EV_HIST_HEADER, .offset = d->line_offset,
                   .hist = {.base = (uint32_t)base, .bucket_bytes = 1u << shift}};
    ev_emit(sink, &e);
}

/* "@task I TAG NAME": a task index's tag and name. */
static void control_task(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    uint64_t v;
    size_t i = 6;
    int t = task_index(s, len, &i);
    const char *p = s + (i < len ? i + 1 : len);
    if (t < 0 || i + 10 > len || s[i] != ' ' || s[i + 9] != ' ' || !textline_uint(&p, s + i + 9, "", &v, 16) ||
        v > UINT32_MAX) {
        textline_bad(d);
        names_unsure(d, sink);
        return;
    }
    d->slash_named |= s[6] == '/'; /* not "+AB", index 63 written in full */
    struct ev e = {.type = EV_TASK_NAME, .offset = d->line_offset,
                   .task_name = {.tag = (uint32_t)v, .name = s + i + 10, .name_len = len - i - 10,
                                 .pending = name_index(d, t, (uint32_t)v, d->version >= 3, sink)}};
    ev_emit(sink, &e);
}

/* 6 chars of tag at s[*i] (32 bits, big-endian base64). */
static bool tag6(const char *s, size_t len, size_t *i, uint32_t *tag)
{
    if (*i + 6 > len)
        return false;
    *tag = 0;
    for (size_t k = 0; k < 6; k++) {
        int c = b64val(s[*i + k]);
        if (c < 0 || (k == 0 && c > 3))
            return false;
        *tag = *tag << 6 | (uint32_t)c;
    }
    *i += 6;
    return true;
}

/* A name of 1 char of length then the name, at s[*i]. */
static bool counted_name(const char *s, size_t len, size_t *i, const char **name, size_t *n)
{
    int c = *i < len ? b64val(s[*i]) : -1;
    if (c < 0 || *i + 1 + (size_t)c > len)
        return false;
    *name = s + *i + 1;
    *n = (size_t)c;
    *i += 1 + (size_t)c;
    return true;
}

/* Version 7: a '=' entry's name, whole (its length and it: the reference of the line's next ones)
 * or front-coded (32 + the chars it shares with the last name the line sent whole before it, the
 * rest's length, the rest; built in `built`). False when malformed (it shares more than that). */
static bool entry_name7(struct text_decoder *d, const char *s, size_t len, size_t *i, char built[64],
                        const char **name, size_t *n)
{
    int c = *i < len ? b64val(s[*i]) : -1;
    if (c < 32) {
        if (!counted_name(s, len, i, name, n))
            return false;
        memcpy(d->front, *name, *n); /* (at most 63 chars) */
        d->front_len = (uint8_t)*n;
        return true;
    }
    size_t shared = (size_t)c - 32u, rest_len;
    const char *rest;
    ++*i;
    if (shared > d->front_len || !counted_name(s, len, i, &rest, &rest_len) || shared + rest_len > 64u)
        return false;
    memcpy(built, d->front, shared);
    memcpy(built + shared, rest, rest_len);
    *name = built;
    *n = shared + rest_len;
    return true;
}

/* Version 8: a numbered name's 2 chars at s[i]: a lead that is no base64 char (NUM8's k-th: k x 64)
 * and a base64 char; the difference of the two numbers is their value - 832. False: not one. */
/* Numbered names are read after a version 8 announce, and before any (no base64 char leads one: a
 * host that attached late reads them before the next announce). */
#define NUMBERED(d) ((d)->numbered || !(d)->version)
static const char NUM8[] = "#$%&'()*,-.:;<>?@[]^_`{|}~";
static bool num_delta(const char *s, size_t len, size_t i, int32_t *delta)
{
    const char *lead = i + 1 < len && s[i] ? strchr(NUM8, s[i]) : NULL;
    int lo = lead ? b64val(s[i + 1]) : -1;
    if (lo < 0)
        return false;
    *delta = (int32_t)((lead - NUM8) * 64 + lo) - 832;
    return true;
}

/* ref's name (n chars) with its trailing number (its last digits, at most 9) plus delta, in as many
 * digits, at out; false when it has none, or the number leaves them. */
static bool num_name(const char *ref, size_t n, int32_t delta, char out[64])
{
    size_t d = 0;
    int64_t v = 0, scale = 1;
    while (d < n && d < 9u && ref[n - 1u - d] >= '0' && ref[n - 1u - d] <= '9') {
        v += (ref[n - 1u - d] - '0') * scale;
        scale *= 10;
        d++;
    }
    v += delta;
    if (!d || v < 0 || v >= scale)
        return false;
    memcpy(out, ref, n - d);
    for (size_t k = n; k-- > n - d; v /= 10)
        out[k] = (char)('0' + v % 10);
    return true;
}

/* Whether a name ends in two digits: version 9's numbered names refer to such names only. Before an
 * announce (version 8 or 9?) a numbered name is read only against such a name written last: both
 * versions' reference then. */
static bool ends_in_digits(const char *s, size_t n)
{
    return n >= 2u && s[n - 1u] >= '0' && s[n - 1u] <= '9' && s[n - 2u] >= '0' && s[n - 2u] <= '9';
}

/* A version 8 '=' entry's numbered name: the epoch's last name with another number, when this host
 * has it (NULL: it missed a line of the epoch, or came in after its start). */
static const char *epoch_numbered(struct text_decoder *d, int32_t delta, char built[64], size_t *n)
{
    d->num_ref_ok = d->num_ref_ok && d->num_ref_len && (d->have_base || ends_in_digits(d->num_ref, d->num_ref_len)) &&
                    num_name(d->num_ref, d->num_ref_len, delta, built);
    *n = d->num_ref_len;
    return d->num_ref_ok ? built : NULL;
}

/* Version 5: the name id's name is `name` from here on. */
static void keep_name_id(struct text_decoder *d, uint32_t id, const char *name, size_t n)
{
    memcpy(d->name_ids[id], name, n);
    d->name_id_len[id] = (uint8_t)n;
    d->name_id_epoch[id] = d->names_epoch + 1u;
}

/* The tag of an index whose own tag a version 5 entry left out, for a host that began after it
 * was sent: between the RAM a task's control block lives in and the pending tags. */
#define INDEX_TAG(t) (0xFFFFA000u + (uint32_t)(t))

/* A version 5 '=' entry at s[*i]: index, 2 chars of head (0x800: a tag follows, 0x400: a name
 * follows; the low 10 bits the name's id), the tag in 6 chars, the length and the name. Without its
 * name it refers to the id's, without its tag it keeps the index's. When the host missed that (a
 * dropped line, a late start), the index waits for its next repeat (@N), as after a drop. */
static bool entry_v5(struct text_decoder *d, const char *s, size_t len, size_t *i, int emit, int given,
                     const struct ev_sink *sink)
{
    int t = given >= 0 ? given : task_index(s, len, i); /* version 7: the next sample's index, given */
    uint32_t tag = 0;
    const char *name = NULL;
    size_t n = 0;
    int32_t delta = 0, retired_delta = 0;
    bool retired = NUMBERED(d) && t >= 0 && *i < len && s[*i] == '='; /* version 8: the index's last name */
    if (retired && !num_delta(s, len, *i + 1, &retired_delta))
        return false;
    *i += retired ? 3u : 0u;
    bool numbered = NUMBERED(d) && t >= 0 && num_delta(s, len, *i, &delta); /* version 8 */
    int hi = t >= 0 && *i + 2 <= len ? b64val(s[*i]) : -1, lo = hi >= 0 ? b64val(s[*i + 1]) : -1;
    if (!numbered && (hi < 0 || lo < 0))
        return false;
    *i += 2;
    uint32_t head = numbered ? 0u : (uint32_t)(hi << 6 | lo), id = head & (TEXT_NAME_IDS - 1u);
    if ((head & 0x800u) && !tag6(s, len, i, &tag))
        return false;
    char built[64]; /* a front-coded name (version 7) */
    if ((head & 0x400u) &&
        !(d->paged ? entry_name7(d, s, len, i, built, &name, &n) : counted_name(s, len, i, &name, &n)))
        return false;
    if (emit == ENTRY_CHECK_DEF)
        return true;
    if (numbered)
        name = epoch_numbered(d, delta, built, &n);
    else if (name)
        keep_name_id(d, id, name, n);
    if (name && (numbered || (head & 0x400u)) && NUMBERED(d) && (d->version < 9 || ends_in_digits(name, n))) {
        /* the epoch's last name written out (version 9: ending in two digits) */
        memcpy(d->num_ref, name, n);
        d->num_ref_len = (uint8_t)n;
        d->num_ref_ok = true;
    }
    if (!numbered && !name && d->name_id_epoch[id] == d->names_epoch + 1u) {
        name = d->name_ids[id];
        n = d->name_id_len[id];
    }
    tag = (head & 0x800u) ? tag : d->task_tags[t];
    if (name && ev_tag_pending(tag)) /* the index's tag came before this host began: one of its own */
        tag = INDEX_TAG(t);
    if (!name) { /* the name, or the index's tag, came in a line this host missed */
        d->stats.names_waited_id++;
        d->task_tags[t] = tag;
        d->task_epoch[t] = d->names_epoch - 1u;
        return true;
    }
    char was[64];
    if (retired && num_name(name, n, retired_delta, was)) { /* as an "@N" entry of the index, first */
        struct ev r = {.type = EV_TASK_NAME, .offset = d->line_offset,
                       .task_name = {.tag = INDEX_TAG(t), .name = was, .name_len = n,
                                     .pending = name_index(d, t, INDEX_TAG(t), false, sink)}};
        ev_emit(sink, &r);
    }
    struct ev e = {.type = EV_TASK_NAME, .offset = d->line_offset,
                   .task_name = {.tag = tag, .name = name, .name_len = n, .pending = name_index(d, t, tag, true, sink)}};
    ev_emit(sink, &e);
    return true;
}

/* One entry of an "@N" line at s[*i]: index, 6 chars of tag, 1 of length, the name (a '=' entry
 * before version 5 too). False when malformed; names it only when `emit`. */
static bool repeat_entry(struct text_decoder *d, const char *s, size_t len, size_t *i, int emit,
                         const struct ev_sink *sink)
{
    if (d->version >= 5 && (emit == ENTRY_NEW || emit == ENTRY_CHECK_DEF))
        return entry_v5(d, s, len, i, emit, d->paged ? 0 : -1, sink); /* (version 7: checked only here) */
    /* version 9: '.' for the index after the entry before's, under its own tag (a round's run) */
    bool next = (emit == ENTRY_CHECK || emit == ENTRY_REPEAT) && *i < len && s[*i] == '.' &&
                (d->version >= 9 || !d->have_base);
    int t = next ? (d->rep_prev >= 0 && d->rep_prev < 62 + 4095 ? d->rep_prev + 1 : -1) : task_index(s, len, i);
    bool own = next || (t >= 0 && *i < len && s[*i] == '='); /* version 7: the index's own tag, INDEX_TAG */
    if (t < 0 || *i + (own ? 2u : 7u) > len)
        return false;
    uint32_t tag = own ? INDEX_TAG(t) : 0u;
    for (size_t k = 0; k < 6 && !own; k++) {
        int c = b64val(s[*i + k]);
        if (c < 0 || (k == 0 && c > 3))
            return false;
        tag = tag << 6 | (uint32_t)c;
    }
    *i += own ? 1u : 6u; /* ('.' or '=') */
    d->rep_prev = t;
    char built[64];
    const char *name = s + *i + 1;
    size_t n;
    int32_t delta;
    if (NUMBERED(d) && num_delta(s, len, *i, &delta)) { /* version 8: the entry before, numbered */
        *i += 2;
        if (!d->have_base && (d->rep_ref_lost || !ends_in_digits(d->rep_ref, d->rep_ref_len))) {
            d->rep_ref_lost = true; /* before an announce: version 9's reference may be another */
            d->rep_ref_len = 0;
            return true;
        }
        if (!d->rep_ref_len || !num_name(d->rep_ref, d->rep_ref_len, delta, built))
            return false;
        name = built;
        n = d->rep_ref_len;
    } else {
        int c = b64val(s[*i]);
        if (c < 0 || *i + 1 + (size_t)c > len)
            return false;
        n = (size_t)c;
        *i += 1 + n;
    }
    if (d->version < 9 || ends_in_digits(name, n)) { /* version 9: a reference ends in two digits */
        memcpy(d->rep_ref, name, n);
        d->rep_ref_len = (uint8_t)n;
        d->rep_ref_lost = false;
    }
    if (emit == ENTRY_REPEAT || emit == ENTRY_NEW) {
        struct ev e = {.type = EV_TASK_NAME, .offset = d->line_offset,
                       .task_name = {.tag = tag, .name = name, .name_len = n,
                                     .pending = name_index(d, t, tag, emit == ENTRY_NEW, sink)}};
        ev_emit(sink, &e);
    }
    return true;
}

/* "@N" and entries: names repeated for a host that attached late, used whole or not at all. */
static void control_repeats(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    size_t i = 2;
    d->rep_ref_len = 0; /* (version 8: numbered entries refer within the line) */
    d->rep_ref_lost = false;
    d->rep_prev = -1;
    while (i < len)
        if (!repeat_entry(d, s, len, &i, ENTRY_CHECK, sink)) {
            textline_bad(d);
            names_unsure(d, sink);
            return;
        }
    d->rep_ref_len = 0;
    d->rep_ref_lost = false;
    d->rep_prev = -1;
    for (i = 2; i < len;)
        repeat_entry(d, s, len, &i, ENTRY_REPEAT, sink);
}

/* "@lost N", "@full tasks=N", "^~N": one count, the event's payload. */
static void control_count(struct text_decoder *d, const char *p, const char *end, const char *key, enum ev_type type,
                          const struct ev_sink *sink)
{
    uint64_t n;
    /* the firmware counts lost samples and dropped evidence in 32 bits; its task table has 1..4158 slots */
    if (!textline_uint(&p, end, key, &n, 10) || p != end || n > (type == EV_TABLE_FULL ? 4158u : UINT32_MAX) ||
        (type == EV_TABLE_FULL && n == 0)) {
        textline_bad(d);
        return;
    }
    struct ev e = {.type = type, .offset = d->line_offset};
    if (type == EV_LOST)
        e.lost.samples = n;
    else if (type == EV_STACK_DROPPED)
        e.stack_dropped.records = n;
    else
        e.table_full.slots = n;
    ev_emit(sink, &e);
}

static void stream_control(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    const char *end = s + len;
    uint64_t v;
    const char *p;
    if (textline_starts(s, len, "@cmprof "))
        control_announce(d, s, len, sink);
    else if (textline_starts(s, len, "@hist "))
        control_hist(d, s, len, sink);
    else if (textline_starts(s, len, "@task "))
        control_task(d, s, len, sink);
    else if (len > 2 && s[1] == 'N')
        control_repeats(d, s, len, sink);
    else if (textline_starts(s, len, "@secname ")) {
        p = s + 9;
        if (!textline_uint(&p, end, "", &v, 10) || p == end) {
            textline_bad(d);
            return;
        }
        struct ev e = {.type = EV_SECTION_NAME, .offset = d->line_offset,
                       .section_name = {.index = (uint32_t)v, .name = p, .name_len = (size_t)(end - p)}};
        ev_emit(sink, &e);
    } else if (textline_starts(s, len, "@sect ")) {
        textline_section(d, s + 1, end, sink); /* the same fields as a dump's "sect" line */
    } else if (textline_starts(s, len, "@sectev ")) {
        textline_section_event(d, s + 1, end, sink);
    } else if (textline_starts(s, len, "@target ")) { /* the core (Cortex-A/R's MIDR), before its sections */
        struct ev e = {.type = EV_TARGET, .offset = d->line_offset, .target = {s + 8, (size_t)(end - s - 8)}};
        ev_emit(sink, &e);
    } else if (textline_starts(s, len, "@lost ")) {
        control_count(d, s + 6, end, "", EV_LOST, sink);
    } else if (textline_starts(s, len, "@full ")) {
        control_count(d, s + 6, end, "tasks=", EV_TABLE_FULL, sink);
    } else {
        textline_bad(d);
    }
}

/* "&" S5 K2 then a "$" or "%" line's body: a group of samples the firmware kept, uniformly, of S taken
 * while its ring was full; K of them in the group (over one or more lines), each standing for S / K. */
static void stream_weighted(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    uint64_t stands_for = 0;
    uint32_t kept = 0;
    bool ok = len > 8 && (s[8] == LEAD_SAMPLES || s[8] == LEAD_TAGGED);
    for (size_t i = 1; ok && i < 8; i++) {
        int v = b64val(s[i]);
        ok = v >= 0;
        if (i < 6)
            stands_for = stands_for << 6 | (uint64_t)(v & 63);
        else
            kept = kept << 6 | (uint32_t)(v & 63);
    }
    if (!ok || kept == 0 || stands_for < kept) {
        textline_bad(d);
        return;
    }
    stream_samples(d, s + 8, len - 8, s[8] == LEAD_TAGGED, false, stands_for, kept, sink);
}

/* Where a whole stream line (its lead, its check) begins inside s, after its first byte; 0 when none.
 * With `announce`, only an announce's. */
static size_t line_inside(const char *s, size_t len, bool announce)
{
    for (size_t k = 1; k + 4 < len; k++) {
        char c = s[k];
        bool lead = announce ? len - k > 8 && memcmp(s + k, "@cmprof ", 8) == 0
                             : c == LEAD_SAMPLES || c == LEAD_TAGGED || c == LEAD_CONTROL || c == LEAD_HIST ||
                                   c == LEAD_GROUP;
        if (lead && checked_body(s + k, len - k))
            return k;
    }
    return 0;
}

/* A line cut by a target reset, then the announce the firmware sent as it started again, with no
 * newline between them (the reset cut the line): the announce is read after the cut line, which
 * stays counted malformed. Otherwise the restart went unseen and the lines numbered afresh after it
 * were counted as lines lost. */
static void announce_after_cut(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    size_t k = line_inside(s, len, true);
    if (k) {
        d->line_offset += k;
        d->stats.lines++;
        stream_line(d, s + k, len - k, sink);
    }
}

bool stream_line(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    if (len < 2 || (s[0] != LEAD_SAMPLES && s[0] != LEAD_TAGGED && s[0] != LEAD_CONTROL && s[0] != LEAD_HIST &&
                    s[0] != LEAD_GROUP && s[0] != LEAD_STACK))
        return false;
    if (s[0] == LEAD_STACK && !(len > (s[1] == STACK_DROPPED ? 5u : 16u) && has_check(s, len)))
        return false; /* a log line that happens to start with '^' */
    if (s[0] == LEAD_GROUP && !(len > 12 && has_check(s, len)))
        return false; /* a log line that happens to start with '&' */
    if ((s[0] == LEAD_CONTROL || s[0] == LEAD_HIST) && !(len > 4 && has_check(s, len)))
        return false; /* an ordinary log line that happens to start with '@' or '#' */
    if (d->newer_version && s[0] != LEAD_CONTROL) { /* a newer firmware's samples: not read, counted */
        d->page_synced = false;
        d->stats.stream_lines++;
        d->stats.newer_lines++;
        return true;
    }
    size_t body = checked_body(s, len);
    d->stats.stream_lines++;
    if (!body) {
        d->stats.bad_checks++;
        d->page_synced = false; /* a sample line, perhaps: version 7's page cache is unsure */
        textline_bad(d);
        names_unsure(d, sink); /* even a '$' or '#': one bit turns '%' into either */
        announce_after_cut(d, s, len, sink);
        return true;
    }
    if (s[0] == LEAD_CONTROL)
        stream_control(d, s, body, sink);
    else if (s[0] == LEAD_HIST)
        stream_hist(d, s, body, sink);
    else if (s[0] == LEAD_GROUP)
        stream_weighted(d, s, body, sink);
    else if (s[0] == LEAD_STACK && s[1] == STACK_DROPPED) /* the samples whose evidence was dropped so far */
        control_count(d, s + 2, s + body, "", EV_STACK_DROPPED, sink);
    else if (s[0] == LEAD_STACK) /* a sample's stack evidence (textline.c) */
        textline_stack(d, s, body, sink);
    else
        stream_samples(d, s, body, s[0] == LEAD_TAGGED, s[len - 3] == CHECK_CRC12, 0, 0, sink);
    return true;
}

bool stream_lost_names(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    bool names = textline_starts(s, len, "@N") || textline_starts(s, len, "@task ");
    if (!names && has_check(s, len) && len <= TEXT_LINE_MAX) { /* its marker hit: '%' or '@' would pass */
        char fixed[TEXT_LINE_MAX];
        memcpy(fixed, s, len);
        static const char could_name[] = {LEAD_TAGGED, LEAD_CONTROL, LEAD_GROUP, '\0'};
        for (const char *m = could_name; *m && !names; m++) { /* ('&': a reservoir's group holds a '%' line) */
            fixed[0] = *m;
            names = checked_body(fixed, len) != 0;
        }
    }
    if (!names)
        return false;
    d->stats.stream_lines++;
    d->stats.bad_checks++;
    d->page_synced = false;
    textline_bad(d);
    names_unsure(d, sink);
    return true;
}

bool stream_unglue(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    size_t k = len < 6 || !has_check(s, len) ? 0 : line_inside(s, len, false);
    if (!k)
        return false;
    struct ev e = {.type = EV_LOG, .offset = d->line_offset, .log = {s, k}};
    d->stats.log_lines++;
    d->stats.glued++;
    ev_emit(sink, &e);
    d->line_offset += k;
    stream_line(d, s + k, len - k, sink);
    return true;
}

/* A "p" line's PCs, parsed. */
