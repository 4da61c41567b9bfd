/* Decoder for the firmware's text output (firmware/cmprof.h):
 *  - the dump: "prof raw" blocks of p (PC) and g (tag) lines, "prof hist" blocks of h (bucket)
 *    lines, "end", task names and section lines, and call stacks ("stack PC CALLER...", from a
 *    halting source);
 *  - the live stream (docs/stream.md): '$'/'%' sample lines and '@' control lines, each checked
 *    by a CRC-12; a line that fails its check is dropped whole and counted.
 * Any other line is passed on as a log line. A malformed dump line is dropped whole and counted.
 * CR, LF and CRLF all end a line; a capture may start mid-line or mid-block. */
#ifndef CMPROF_DECODE_TEXT_H
#define CMPROF_DECODE_TEXT_H

#include "dumptasks.h"
#include "event.h"
#include "../base/bom.h"

#include <stdbool.h>

#define TEXT_LINE_MAX 1024u
#define TEXT_STACK_MAX 64u /* callers a "stack" line may carry */
#define TEXT_TASKS (62u + 4096u + 2u)
#define TEXT_PAGE_SLOTS 32u /* stream version 7's page cache */
#define TEXT_NAME_IDS 1024u /* stream version 5's name ids: 10 bits */ /* stream task indexes: 0..61 in one char, 62.. after '+' */

struct text_stats {
    uint64_t bytes;
    uint64_t lines;
    uint64_t samples;      /* PC samples emitted */
    uint64_t buckets;      /* non-empty histogram buckets emitted */
    uint64_t blocks;       /* dump blocks closed */
    uint64_t bad_lines;    /* malformed dump lines, dropped */
    uint64_t long_lines;   /* lines over TEXT_LINE_MAX, dropped */
    uint64_t tag_mismatch; /* raw blocks whose g lines did not match their p lines: tags dropped */
    uint64_t orphan_lines; /* h or g lines with no block to belong to */
    uint64_t log_lines;
    uint64_t first_bad;    /* 1 + byte offset of the first malformed line, 0 when none */
    uint64_t bad_checks;   /* stream lines whose CRC did not match (included in bad_lines) */
    uint64_t no_base;      /* stream samples dropped before the first announce gave the code base */
    uint64_t stream_lines;
    uint64_t hist_out;     /* streamed histogram samples outside the buckets */
    uint64_t missing;      /* samples a dump header announced that its block did not deliver */
    uint64_t missing_hist; /* ... of them, in histogram blocks (whose 16-bit buckets saturate) */
    uint64_t unended;      /* a dump block the input ended in, before its "end" line (its samples are counted) */
    uint64_t nul_bytes;    /* NUL bytes (line noise) removed from lines */
    uint64_t not_kept;     /* samples a dump says were taken but overwritten in its ring */
    uint64_t glued;        /* stream lines found glued onto the end of a log line, and cut off */
    uint64_t partial_first; /* a malformed first line of a stream joined in mid-line: not an error */
    uint64_t partial_last;  /* an unterminated last line that does not decode, cut when reading stopped: not an error */
    uint64_t partial_last_bytes; /* ... its bytes (said as a loss: its samples are not counted) */
    uint64_t unsent_tags;  /* stream samples whose tag the firmware could not send ('/'): EV_TAG_UNSENT */
    uint64_t names_unsure; /* dropped stream lines that may have named tasks (EV_NAMES_UNSURE) */
    uint64_t names_waited; /* samples of a named index sent pending after such a line, until its next name */
    uint64_t names_waited_id; /* version 5 '=' entries whose name (by id) or tag came in a line this host missed */
    uint64_t names_unknown; /* of them, samples whose name was lost (EV_TASK_UNKNOWN) */
    uint64_t max_wait;     /* the most samples one index waited for its name after such a line */
    uint64_t other_version_lines; /* sample lines of another version than the announce's: not decoded */
    uint32_t other_version, announced_version; /* the last such line's version, and the announce's */
    uint64_t newer_version; /* the highest version announced that this host does not read (0: none) */
    uint64_t newer_lines;   /* sample and histogram lines under such an announce: not read */
    uint64_t unread_paged;  /* version 7 samples in lines after a missed one, before the page cache started
                               afresh: not read (docs/stream.md) */
    uint64_t unread_joining; /* version 7 samples in the lines a host that joined a running stream read before
                                its first whole group of 8 (no line missed since it began): not read, no loss */
    uint64_t restarts;      /* sample lines numbered afresh after an announce: the firmware's stream began
                               again (a reset, or cmprof_stream_announce() called again) */
    uint64_t first_restart; /* the byte offset of the first such line */
    uint64_t skipped_lines; /* version 7 sample lines whose numbers were skipped, beyond the lines counted
                               malformed in between: lines lost whole on the way, their samples not counted */
    uint64_t first_number;  /* 1 + the number of the first version 7 sample line read before any announce
                               (0: none): above 1, the host joined a running stream */
    uint64_t refused_announces; /* announces with a number out of range: refused */
    const char *refused_field, *refused_range; /* the last one's field, and its range */
    uint64_t refused_value;
};

struct text_decoder {
    char line[TEXT_LINE_MAX];
    size_t line_len;
    bool line_too_long;
    bool joined_mid_line;   /* set by the caller for a live source: its first line may be a tail */
    bool first_line_done;
    uint8_t mark_held[BOM_MAX]; /* private: the bytes of a byte order mark matched at the start so far */
    uint8_t mark_len;
    bool mark_over;         /* private: past where a mark can stand */
    uint64_t line_offset;
    int block;              /* private: none, raw, hist */
    uint32_t *pcs, *tags;   /* the open raw block, emitted when it closes */
    size_t n_pcs, n_tags, cap_pcs, cap_tags;
    uint64_t block_offset;
    uint32_t hist_base, hist_shift, hist_index;
    uint64_t announced;     /* the open block's n=, 0 when it had no header */
    uint64_t delivered;     /* samples its lines carried (hist: bucket counts + out) */
    bool failed_alloc;
    bool have_base;
    bool pc_digits;  /* version 3: a sample's 4 PC chars are '0' + 6 bits, not base64 */
    bool compact;    /* version 6: 3 PC chars '?' + 6 bits, a tag only where it changes */
    bool paged;      /* version 7: version 6 with the page cache, the line's number, other chars */
    /* version 7's page cache (docs/stream.md), as the sample lines read so far left it */
    uint32_t page_key[TEXT_PAGE_SLOTS];   /* the page + 1 at each slot (0: none) */
    uint32_t page_line;                   /* the last sample line's number */
    bool page_synced;                     /* the cache is the firmware's: no line missed since it began */
    bool page_ever_synced;                /* a line read with the firmware's cache since the decoder began */
    bool number_known;       /* a numbered line read since the decoder began */
    bool number_may_restart; /* an announce since it: the firmware may have started again at 0 */
    uint64_t doubtful_mark;  /* lines counted malformed or not read, as of the last numbered line */
    char front[64];    /* version 7: the last name the line sent whole (front-coded names refer to it; */
    uint8_t front_len; /* 0: none yet in the line) */
    bool numbered;     /* version 8: numbered names (another's with another trailing number) */
    char num_ref[64];  /* version 8: the last name a '=' entry wrote out since the page epoch began;
                          version 9: the last ending in two digits */
    uint8_t num_ref_len; /* (0: none yet) */
    bool num_ref_ok;   /* ... known: every line read since the epoch's first */
    char rep_ref[64];  /* version 8: the "@N" line's entry before (0: the line's first); version 9: its
                          last entry ending in two digits */
    uint8_t rep_ref_len;
    bool rep_ref_lost; /* (before an announce) a numbered entry of the line could not be read */
    int rep_prev;      /* version 9: the "@N" line's entry before's index ('.': the next), -1 none */
    uint32_t version;        /* of the last announce read (0: none) */
    bool other_seen;         /* a sample line of another version came since that announce */
    uint64_t newer_version;  /* the last announce's, when newer than this host reads (its lines are not) */
    uint32_t code_base;
    uint32_t task_tags[TEXT_TASKS]; /* stream task index -> tag */
    uint32_t names_epoch;            /* dropped lines that may have named tasks, so far */
    uint32_t task_epoch[TEXT_TASKS]; /* names_epoch when the index was last named: older, it is pending */
    uint32_t task_waiting[TEXT_TASKS]; /* its samples sent pending since that drop */
    /* version 5: the names the firmware sent under each name id, for the entries that refer to them */
    char name_ids[TEXT_NAME_IDS][64]; /* text_init leaves it unwritten: keep name_id_len next */
    uint8_t name_id_len[TEXT_NAME_IDS];
    uint32_t name_id_epoch[TEXT_NAME_IDS]; /* names_epoch + 1 when its name came (older: unsure; 0: never) */
    bool slash_named;        /* an "@task /" line came: '/' is index 63 (firmware before issue 30
                                with over 62 slots), not a tag with no slot */
    bool have_hist;          /* streamed histogram layout, from @hist */
    uint32_t hist_sbase, hist_sshift, hist_sbins;
    struct text_stats stats;
    struct dumptasks dump_tasks; /* a dump's task lines, read as a whole */
};

void text_init(struct text_decoder *d);
void text_feed(struct text_decoder *d, const uint8_t *buf, size_t len, const struct ev_sink *sink);
/* End of input: a last line without a newline and an unclosed block are emitted. */
void text_finish(struct text_decoder *d, const struct ev_sink *sink);
/* The source came back after going away: the line it was inside is cut (its bytes dropped: the gap is
 * the source's to say), and the next one may begin mid-line (joined_mid_line), as at a live start. */
void text_rejoin(struct text_decoder *d);
void text_free(struct text_decoder *d);
/* The counters a report lists (at most DEC_COUNTERS_MAX); returns how many. */
size_t text_counters(const struct text_stats *st, struct dec_counter *out);
/* What the decoder saw, e.g. "120 lines, 3 malformed", in buf. */
void text_describe(const struct text_stats *st, char *buf, size_t len);
/* The newest firmware stream version this host reads (it reads every one from 1 on). */
unsigned text_stream_version(void);

#endif
