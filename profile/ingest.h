/* Bytes in, profile out: detects the stream format (or takes it as given), runs the matching
 * decoder chain and feeds its events to the profile model. Shared by batch mode and the TUI. */
#ifndef CMPROF_INGEST_H
#define CMPROF_INGEST_H

#include "../decode/detect.h"
#include "../decode/event.h"
#include "firmware.h"
#include "profile.h"
#include "timeline.h"

/* The decoders' state stays inside ingest.c: the views and reports ask through the functions
 * below, and read what the firmware announced and timed from the profile (firmware.h). */
struct ingest;

struct ingest_options {
    enum detect_format format;  /* DETECT_UNKNOWN: detect from the first bytes */
    const char *format_option;  /* the user's option that set it ("-f", "--tpiu-offset"), or NULL: said
                                 * when it reads no sample from bytes the detection reads as another */
    uint8_t tpiu_id;            /* the ITM source in TPIU frames (and the stream tag in orbflow frames) */
    bool wait_sync;             /* ITM: ignore bytes until the first sync packet */
    unsigned tpiu_offset;       /* 1 + the byte TPIU frames begin at (--tpiu-offset); 0: found by content */
    bool mid_stream;            /* the input may begin mid-stream (a port, a capture of one): its first line
                                 * may be the tail of one, not a malformed line */
    bool flat_stacks;           /* leave the firmware's stack evidence aside (--stack-depth 0) */
    uint64_t max_samples;       /* 0: no limit; else samples past it are not counted (--samples) */
    void (*on_log)(void *ctx, const char *text, size_t len); /* optional: firmware log lines */
    void *log_ctx;
};

/* Stack evidence from the firmware's sampler (EV_STACK_WORDS), unwound with the ELF's CFI. */
struct ingest_stacks {
    uint64_t evidence;    /* samples that came with it */
    uint64_t unwound;     /* of them, walked into a stack (counted samples, with an ELF) */
    uint64_t unproven;    /* of those, walks that ended at a frame they could not prove */
    uint64_t unmatched;   /* evidence whose sample was not the one it names (a line lost between) */
    uint64_t no_symbols;  /* evidence with no ELF to unwind it with */
    uint64_t ignored;     /* evidence left aside as asked (--stack-depth 0: a flat profile) */
};

/* What came in so far, counted. */
struct ingest_counts {
    enum detect_format format;  /* DETECT_UNKNOWN until decided */
    bool undecided;             /* bytes wait for the format's detection */
    uint64_t bytes;             /* fed in, whatever the format */
    double samples;             /* counted in the whole run's profile */
    bool announced;             /* the firmware's announce came (its figures: prof_stream_info) */
    uint64_t bad;               /* malformed lines and bad ITM packets */
    uint64_t overflows, syncs;  /* ITM overflow and sync packets */
    uint64_t lost;              /* samples the firmware reports it dropped (its last count) */
    uint64_t missing;           /* dump samples announced and not delivered */
    uint64_t past_limit;        /* samples decoded after --samples was reached */
    uint64_t log_lines, stream_lines, blocks; /* text: log lines, stream lines, dump blocks */
    uint64_t no_base;           /* stream samples that came before any announce */
    uint64_t unplaced;          /* of them, while no announce came yet (one kind in ingest_losses) */
    uint64_t joined;            /* samples skipped while joining a running stream (ingest_joined): no loss */
    uint64_t joined_bytes;      /* a trace stream's bytes skipped so (ingest_joined) */
    struct ingest_stacks stacks;
    bool unreadable;            /* taken for ITM, no sync in them: no format reads the bytes (a wrong baud?) */
    uint64_t byte_looks;        /* times the first bytes were worked out (a UTF-16 scan, a detection) for
                                 * ingest_losses: once per new bytes, not per call */
};

/* The first profile gets every event (NULL when out of memory). */
struct ingest *ingest_new(struct prof *prof, const struct ingest_options *o);
void ingest_feed(struct ingest *in, const uint8_t *buf, size_t len);
/* The source came back after going away (a reconnect): a text line it was inside when it went is cut,
 * and the first line after may be the tail of one, neither a malformed line (a half line glued to the
 * next connection's first read as one that failed its check); raw ITM waits for its next sync, not a
 * bad packet ("TPIU frames read as ITM? try -f tpiu", it said). TPIU frames are aligned again from
 * what comes (a frame cut by the gap put the rest out of step), orbflow's begin at the next delimiter
 * (the cut one is the gap's, not a bad frame), and their ITM waits for its next sync. */
void ingest_rejoin(struct ingest *in);
/* The profiles fed, the whole run's first (--samples counts against it; its symbols unwind the
 * stack evidence); the others (the live view's window) get every sample too. At most
 * INGEST_PROFILES; the list replaces the one before. */
#define INGEST_PROFILES 4
void ingest_set_profiles(struct ingest *in, struct prof *const *profs, size_t n);
void ingest_counts(const struct ingest *in, struct ingest_counts *out);
enum detect_format ingest_format(const struct ingest *in); /* DETECT_UNKNOWN until decided */
/* The samples' order (-o trace), from the first sample; NULL before. Restart: the order starts over. */
const struct timeline *ingest_timeline(const struct ingest *in);
void ingest_restart_timeline(struct ingest *in);
/* What the input shows so far when no sample came: "no data from the source yet", "12 log lines
 * and no samples so far: ...", "300 bytes so far: not enough to tell the format yet"... */
void ingest_waiting(const struct ingest *in, char *buf, size_t len);

/* When no sample came: why, if the stream tells, in buf ("" when it does not): the firmware
 * announced itself, so the line works and sampling never started. */
void ingest_no_samples_hint(const struct ingest *in, char *buf, size_t len);
/* Why a capture shows no profile although its firmware talked: it announced a sampler (a period)
 * and sent no sample, with or without section timings (INGEST_QUIET_NO_SAMPLES); or stream samples
 * came and no announce ever placed them (INGEST_QUIET_NO_ANNOUNCE). The cause in one sentence in
 * text (naming QEMU's limit when a Cortex-R samples on its PMU's overflow); "" and
 * INGEST_QUIET_NONE otherwise. */
enum ingest_quiet { INGEST_QUIET_NONE, INGEST_QUIET_NO_SAMPLES, INGEST_QUIET_NO_ANNOUNCE };
enum ingest_quiet ingest_quiet(const struct ingest *in, char *text, size_t len);
const char *ingest_quiet_name(enum ingest_quiet q); /* "no_samples", "no_announce" or NULL */
/* The source paused (closed, reconnecting): decide the format from what came so far, so a short
 * stream is not held back waiting for a full detection window; unless those bytes may still be
 * the start of orbflow (zeros alone, frames cut short), when the bytes after them decide. */
void ingest_settle(struct ingest *in);
/* End of input: decide the format if still undecided and flush the decoders. */
void ingest_finish(struct ingest *in);
void ingest_free(struct ingest *in); /* (NULL: nothing to free) */

/* Every way this input lost or refused data so far, one sentence each ("" when none): missing
 * dump samples, dropped lines, bad packets, firmware overflows, --samples.
 * Returns how many were written (at most max). */
#define INGEST_LOSS_TEXT 400
size_t ingest_losses(const struct ingest *in, char (*out)[INGEST_LOSS_TEXT], size_t max);
/* What the decoders did that is no loss, one sentence each: trace of other TPIU source IDs or
 * orbflow streams skipped (not this run's to read), TPIU frames aligned by content for want of a
 * full sync, the bytes before the first ID change read as the wanted source's. Returns how many were
 * written (at most max). */
size_t ingest_notes(const struct ingest *in, char (*out)[INGEST_LOSS_TEXT], size_t max);

/* What joining a stream that ran before this host read it cost, which is no loss: the profile
 * begins once the host can place samples, and those skipped before say nothing of the shares.
 * A text stream's samples before its first announce (once one came: a stream that never announces
 * lost them, ingest_losses), and version 7's before the first whole group of 8 lines read with no
 * line missed since the start (after a missed line, a loss). The samples skipped, each part, and
 * one sentence in text ("" when none). */
struct ingest_joined {
    uint64_t skipped, before_announce, before_pages;
    uint64_t bytes; /* a trace stream's bytes before it could be read (the ITM bytes before its first
                       sync, the TPIU bytes before its first whole frame), once read */
};
void ingest_joined(const struct ingest *in, struct ingest_joined *out, char *text, size_t len);

/* Why the callers view is empty, in one sentence ("" when it is not): no stack evidence came (a
 * firmware sampler built without CMPROF_STACKS, or a dump), or it came and none could be used. */
void ingest_stacks_note(const struct ingest *in, char *text, size_t len);

/* Every decoder's counters, as the reports list them: the bytes read, then each decoder's own. */
#define INGEST_COUNTERS (1 + 4 * DEC_COUNTERS_MAX)
size_t ingest_counters(const struct ingest *in, struct dec_counter out[INGEST_COUNTERS]);
/* What the decoders saw of the input, for a report that has no samples to show: "itm stream, 4096
 * bytes, 2 bad packets, ...; first bad byte at byte offset 17". */
void ingest_describe(const struct ingest *in, char *buf, size_t len);
/* After ingest_finish: the bytes of the packet, frame or line the input ended inside, not decoded
 * (*what: "ITM packet", "TPIU frame", "orbflow frame", "line"; *offset: where it began); 0: none, or
 * no sample was read at all (bytes of another format end anywhere). A
 * live run a stop cut ends so by nature; a capture file that does was cut short. */
uint64_t ingest_ended_inside(const struct ingest *in, const char **what, uint64_t *offset);
/* A trace stream's bytes that could not be read as it (noise, bytes skipped looking for sync once
 * it was read, or all of them when it never was), out of *total fed; 0 for text, and when no sample
 * was read at all. */
uint64_t ingest_unread(const struct ingest *in, uint64_t *total);

#endif
