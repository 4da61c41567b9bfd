/* Events that every cmprof decoder produces, and the sink they go to. Decoders are push state
 * machines (x_feed(state, buf, len, sink)): they give the same events however the input is split. */
#ifndef CMPROF_DECODE_EVENT_H
#define CMPROF_DECODE_EVENT_H

#include <stddef.h>
#include <stdint.h>

enum ev_type {
    EV_PC,           /* a PC sample (ev.pc) */
    EV_SLEEP,        /* a PC sample taken while the core slept (ITM 0x15 0x00): no payload */
    EV_BUCKET,       /* a histogram bucket's samples (ev.bucket) */
    EV_HIST_HEADER,  /* a histogram block's layout (ev.hist) */
    EV_TASK_NAME,    /* a task's tag and name (ev.task_name) */
    EV_SECTION,      /* a timed section's figures (ev.section) */
    EV_LOG,          /* a text line that is not part of a dump (ev.log) */
    EV_SOFTWARE,     /* an ITM stimulus write (ev.software) */
    EV_OVERFLOW,     /* ITM overflow: packets were lost in the target; no payload */
    EV_SYNC,         /* ITM synchronisation packet; no payload */
    EV_TIMESTAMP,    /* an ITM local timestamp (ev.timestamp) */
    EV_GLOBAL_TS,    /* an ITM global timestamp (ev.global_ts) */
    EV_EXTENSION,    /* an ITM extension packet (ev.extension) */
    EV_EXCEPTION,    /* DWT exception trace (ev.exception) */
    EV_EVENT_COUNTER,/* DWT event counter wrap bits (ev.counter) */
    EV_DATA_TRACE,   /* DWT data trace (ev.data) */
    EV_STREAM_INFO,  /* the firmware announces itself (ev.info) */
    EV_LOST,         /* samples the firmware dropped so far (ev.lost) */
    EV_SECTION_NAME, /* a timed section's name (ev.section_name) */
    EV_SECTION_EVENT,/* a PMU event a section counts (ev.section_event) */
    EV_STACK,        /* a sample's call stack, walked by a halting source (ev.stack) */
    EV_TARGET,       /* what the firmware runs on (ev.target) */
    EV_PCS,          /* untagged PC samples at once, in order (ev.pcs): the same as that many EV_PC events
                        (a text dump's raw block arrives this way) */
    EV_NAMES_UNSURE, /* a stream line that may have named tasks was dropped: every task index named before
                        it is pending (its samples carry EV_TAG_PENDING) until it is named again; no payload */
    EV_TASK_UNKNOWN, /* pending samples that will get no name (ev.task_unknown) */
    EV_STACK_WORDS,  /* a sample's stack evidence from the firmware, '^' lines (ev.stack_words) */
    EV_STACK_DROPPED,/* samples whose stack evidence the firmware dropped so far (ev.stack_dropped) */
    EV_TABLE_FULL    /* the firmware's task name table was full (ev.table_full): some tags went out as
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

/* Each event type's payload, named for it in struct ev's union. Text and arrays are valid only
 * during the callback. */
struct ev_pc {                  /* EV_PC */
    uint32_t addr;
    uint32_t tag;               /* the task or handler, when has_tag */
    int has_tag;
    uint64_t taken, kept;       /* kept > 0: one of a firmware reservoir's group ('&' lines), kept of
                                   taken samples, so it stands for taken / kept; 0: it stands for one */
};

struct ev_pcs {                 /* EV_PCS */
    const uint32_t *addrs;      /* addrs[0..n) */
    uint64_t n;
};

struct ev_bucket {              /* EV_BUCKET */
    uint32_t addr;              /* its first byte */
    uint32_t bytes;
    uint64_t samples;
};

struct ev_hist_header {         /* EV_HIST_HEADER */
    uint32_t base;
    uint32_t bucket_bytes;
    uint64_t samples;           /* a dump's: the samples it counts, those outside its range included
                                   (a stream's: 0) */
    uint64_t out;               /* a dump's: the samples outside its range */
};

struct ev_task_name {           /* EV_TASK_NAME */
    uint32_t tag;               /* the task's identifier */
    uint32_t pending;           /* the EV_TAG_PENDING tag its stream index's samples carried before this
                                   first name (0: none) */
    const char *name;
    size_t name_len;
};

struct ev_section {             /* EV_SECTION */
    uint32_t index;
    struct ev_run run;
};

struct ev_log {                 /* EV_LOG */
    const char *line;
    size_t len;
};

struct ev_software {            /* EV_SOFTWARE: an ITM stimulus port write */
    uint32_t port;              /* page included */
    uint32_t bytes;             /* 1, 2 or 4 */
    uint64_t value;
};

struct ev_timestamp {           /* EV_TIMESTAMP: a local timestamp */
    uint64_t delta;
    uint32_t relation;          /* TC: its relation to the data (format 2: 0) */
    uint32_t bytes;             /* payload bytes (format 2: 0) */
};

struct ev_global_ts {           /* EV_GLOBAL_TS */
    uint32_t which;             /* 1 or 2 */
    uint32_t bytes;             /* payload bytes */
    uint64_t bits;
};

struct ev_extension {           /* EV_EXTENSION */
    uint32_t sh;                /* the SH bit (0: a stimulus port page) */
    uint32_t bytes;             /* continuation bytes */
    uint64_t info;              /* page or information */
};

struct ev_exception {           /* EV_EXCEPTION */
    uint32_t number;            /* the exception */
    uint32_t function;          /* 1 enter, 2 exit, 3 return */
    uint32_t bytes;             /* payload bytes */
};

struct ev_counter {             /* EV_EVENT_COUNTER */
    uint32_t bytes;             /* payload bytes */
    uint64_t wraps;             /* the counters' wrap bits */
};

struct ev_data_trace {          /* EV_DATA_TRACE */
    uint32_t comparator;
    uint32_t what;              /* 0 PC, 1 address, 2 read, 3 write */
    uint32_t bytes;             /* payload bytes */
    uint64_t value;
};

/* EV_STREAM_INFO: what the firmware announces about its sampling. */
struct ev_stream_info {
    uint64_t clock_hz;   /* the core's clock */
    uint64_t period;     /* sampling timer ticks between samples */
    uint64_t timer_hz;   /* the sampling timer's clock */
    uint64_t section_hz; /* the section timer's clock (0: unknown) */
    uint32_t jitter;     /* the mask of the period's random part */
    uint32_t code_base;  /* the address the stream's PCs count from */
    const char *build_id; /* in hex (may be empty) */
    size_t build_id_len;
};

struct ev_lost {                /* EV_LOST */
    uint64_t samples;           /* the firmware dropped so far (cumulative) */
};

struct ev_section_name {        /* EV_SECTION_NAME */
    uint32_t index;
    const char *name;
    size_t name_len;
};

struct ev_section_event {       /* EV_SECTION_EVENT */
    uint32_t section;
    uint32_t slot;              /* the section's event slot (0..) */
    uint32_t pmu_event;         /* the event number */
    struct ev_run run;          /* its count in the last run, and min, max, sum; no run count */
};

struct ev_stack {               /* EV_STACK */
    uint32_t pc;                /* the sample's */
    const uint32_t *callers;    /* callers[0..n): its callers' call sites, innermost first */
    uint64_t n;
};

struct ev_target {              /* EV_TARGET, from the announce: "arch=ARMv7-A timer=PMU-cycle-counter" */
    const char *text;
    size_t len;
};

struct ev_task_unknown {        /* EV_TASK_UNKNOWN */
    uint32_t tag;               /* EV_TAG_PENDING(index): the samples that index carried while it was
                                   pending will get no name (the name that came is a new task's, given
                                   before its first sample; theirs was lost) */
    uint32_t index;
    uint64_t samples;           /* how many */
};

struct ev_stack_words {         /* EV_STACK_WORDS */
    uint32_t pc;                /* the sample's */
    uint32_t back;              /* how many samples before the last one emitted it is (0: the last) */
    uint32_t lr;                /* the stacked LR */
    uint32_t scanned;           /* the stack words the firmware scanned above the interrupted SP */
    const uint32_t *pairs;      /* pairs[0..2 n): (word offset, word) of those that look like return
                                   addresses, by offset */
    uint64_t n;
};

struct ev_stack_dropped {       /* EV_STACK_DROPPED */
    uint64_t records;           /* cumulative: no room for them, or their sample's line went first */
};

struct ev_table_full {          /* EV_TABLE_FULL */
    uint64_t slots;
};

struct ev {
    enum ev_type type;
    uint64_t offset;  /* byte offset in the decoder's input where the event's packet or line began */
    union {           /* the payload of this type (none for EV_SLEEP, EV_OVERFLOW, EV_SYNC, EV_NAMES_UNSURE) */
        struct ev_pc pc;
        struct ev_pcs pcs;
        struct ev_bucket bucket;
        struct ev_hist_header hist;
        struct ev_task_name task_name;
        struct ev_section section;
        struct ev_log log;
        struct ev_software software;
        struct ev_timestamp timestamp;
        struct ev_global_ts global_ts;
        struct ev_extension extension;
        struct ev_exception exception;
        struct ev_counter counter;
        struct ev_data_trace data;
        struct ev_stream_info info;
        struct ev_lost lost;
        struct ev_section_name section_name;
        struct ev_section_event section_event;
        struct ev_stack stack;
        struct ev_target target;
        struct ev_task_unknown task_unknown;
        struct ev_stack_words stack_words;
        struct ev_stack_dropped stack_dropped;
        struct ev_table_full table_full;
    };
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
    /* (NULL: none) the bytes passed on have a hole here (TPIU: a stray change's frame dropped, the frames
     * re-aligned), so that the packet across it is not read from both sides (itm_hole) */
    void (*hole)(void *ctx);
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
