/* Events that every cmprof decoder produces, and the sink they go to. Decoders are push state
 * machines (x_feed(state, buf, len, sink)): they give the same events however the input is split. */
#ifndef CMPROF_DECODE_EVENT_H
#define CMPROF_DECODE_EVENT_H

#include <stddef.h>
#include <stdint.h>

enum ev_type {
    EV_PC,           /* a PC sample: addr; tag when has_tag; count > 0: it stands for value / count
                        samples (a firmware reservoir's group, '&' lines), else for one */
    EV_SLEEP,        /* a PC sample taken while the core slept (ITM 0x15 0x00) */
    EV_BUCKET,       /* histogram bucket: addr = first byte, size bytes, count samples */
    EV_HIST_HEADER,  /* histogram block: addr = base, size = bucket bytes, count = n, value = out */
    EV_TASK_NAME,    /* tag = task identifier, text = its name; value = the EV_TAG_PENDING tag its stream
                        index's samples carried before this first name (0: none) */
    EV_SECTION,      /* index; run (struct ev_run) */
    EV_LOG,          /* a text line that is not part of a dump: text */
    EV_SOFTWARE,     /* ITM stimulus write: index = port (page included), value, size bytes */
    EV_OVERFLOW,     /* ITM overflow: packets were lost in the target */
    EV_SYNC,         /* ITM synchronisation packet */
    EV_TIMESTAMP,    /* local timestamp: value = delta, index = TC relation (format 2: 0) */
    EV_GLOBAL_TS,    /* global timestamp: index = 1 or 2, value = bits, size = payload bytes */
    EV_EXTENSION,    /* ITM extension: value = page/info, index = SH bit */
    EV_EXCEPTION,    /* exception trace: index = exception number, value = function (1 enter, 2 exit, 3 return) */
    EV_EVENT_COUNTER,/* DWT event counter wrap bits: value */
    EV_DATA_TRACE,   /* DWT data trace: index = comparator, kind 0 PC / 1 address / 2 read / 3 write, value, size */
    EV_STREAM_INFO,  /* the firmware announces itself: info (struct ev_stream_info), text = build-id in hex
                        (may be empty) */
    EV_LOST,         /* count = samples the firmware dropped so far (cumulative) */
    EV_SECTION_NAME, /* index, text = name */
    EV_SECTION_EVENT,/* a PMU event a section counts: index = section, kind = its slot (0..), tag = the event
                        number; run (its count in the last run, and min, max, sum; no run count) */
    EV_STACK,        /* a sample's call stack (a halting source walked it): addr = the sample's PC, pcs[0..count)
                        = its callers' call sites, innermost first */
    EV_TARGET,       /* what the firmware runs on: text = "arch=ARMv7-A timer=PMU-cycle-counter" (from the announce) */
    EV_PCS,          /* count untagged PC samples at once, in order: pcs[0..count) (the same as count
                        EV_PC events; a text dump's raw block arrives this way) */
    EV_NAMES_UNSURE, /* a stream line that may have named tasks was dropped: every task index named before
                        it is pending (its samples carry EV_TAG_PENDING) until it is named again */
    EV_TASK_UNKNOWN, /* tag = EV_TAG_PENDING(index): the samples that index carried while it was pending will
                        get no name (the name that came is a new task's, given before its first sample; theirs
                        was lost) */
    EV_STACK_WORDS,  /* a sample's stack evidence from the firmware ('^' lines): addr = the sample's PC, index =
                        how many samples before the last one emitted it is (0: the last), value = the stacked
                        LR, size = the stack words the firmware scanned above the interrupted SP, pcs[0..2 count)
                        = (word offset, word) pairs of those that look like return addresses, by offset */
    EV_TABLE_FULL    /* the firmware's task name table (count slots) was full: some tags went out as
                        EV_TAG_UNSENT (the last type: tests size tables by it) */
};

/* The tag of a sample whose task the firmware could not name: its name table was full and the
 * stream carried no tag for it ('/' in docs/stream.md). Exception 1 (reset) is never sampled as
 * a handler, so CMPROF_ISR_TAG(1) is free for this. */
#define EV_TAG_UNSENT 0xFFFFFE01u

/* The tag of a sample whose stream task index had no @task line yet (the host attached mid-stream
 * and the firmware repeats names only now and then): EV_TAG_PENDING(index). The index's first
 * EV_TASK_NAME carries this tag in its value, so the samples that waited for it take its name.
 * Above any RAM a task's control block lives in, below the exception tags. */
/* A line dropped for a bad check may have named tasks (an index given to a new task): the indexes
 * named before it are pending again, with the same tags, until their next name (EV_NAMES_UNSURE). */
#define EV_TAG_PENDING_BASE 0xFFFFC000u
#define EV_TAG_PENDING_SPAN 0x2000u
#define EV_TAG_PENDING(i) (EV_TAG_PENDING_BASE + (uint32_t)(i))
static inline int ev_tag_pending(uint32_t tag)
{
    return tag - EV_TAG_PENDING_BASE < EV_TAG_PENDING_SPAN;
}

/* EV_SECTION, EV_SECTION_EVENT: a timed section's figures (or one of its PMU events'). */
struct ev_run {
    uint64_t current; /* the last run's */
    uint64_t count;   /* runs so far */
    uint64_t min, max, sum;
    uint64_t long_runs; /* EV_SECTION: runs past the firmware clock's 32-bit range (current, max saturated) */
};

/* EV_STREAM_INFO: what the firmware announces about its sampling. */
struct ev_stream_info {
    uint64_t clock_hz;   /* the core's clock */
    uint64_t period;     /* sampling timer ticks between samples */
    uint64_t timer_hz;   /* the sampling timer's clock */
    uint64_t section_hz; /* the section timer's clock (0: unknown) */
    uint32_t jitter;     /* the mask of the period's random part */
    uint32_t code_base;  /* the address the stream's PCs count from */
};

struct ev {
    enum ev_type type;
    uint32_t addr;
    uint32_t tag;
    int has_tag;
    uint32_t size;
    uint32_t index;
    uint32_t kind;
    union {
        struct {                     /* the other events' numbers, as listed with their types */
            uint64_t value;
            uint64_t count;
            uint64_t min, max, sum;
        };
        struct ev_run run;           /* EV_SECTION, EV_SECTION_EVENT */
        struct ev_stream_info info;  /* EV_STREAM_INFO */
    };
    const char *text; /* valid only during the callback */
    const uint32_t *pcs; /* EV_PCS: valid only during the callback */
    size_t text_len;
    uint64_t offset;  /* byte offset in the decoder's input where the event's packet or line began */
};

/* One of a decoder's counters, as the reports name it. Each decoder lists its own (x_counters)
 * and says in a few words what it saw (x_describe), so that no report knows their fields. */
struct dec_counter {
    const char *name;
    uint64_t value;
};
#define DEC_COUNTERS_MAX 8 /* the most one decoder lists */

struct ev_sink {
    void (*event)(void *ctx, const struct ev *ev);
    void *ctx;
};

/* Where a framing decoder (TPIU, orbflow) passes the bytes of the stream it unwraps. */
struct byte_sink {
    void (*bytes)(void *ctx, const uint8_t *buf, size_t len);
    void *ctx;
};

/* A zeroed event of this type. Emitters in hot loops start from this rather than from an
 * initialiser: compilers zero a struct this size with `rep stos`, whose start-up cost shows in a
 * decoder's time per packet; a copy of a zero template becomes a few vector stores. */
static inline struct ev ev_blank(enum ev_type type)
{
    static const struct ev blank;
    struct ev e = blank;
    e.type = type;
    return e;
}

static inline void ev_emit(const struct ev_sink *sink, const struct ev *ev)
{
    if (sink && sink->event)
        sink->event(sink->ctx, ev);
}

#endif
