/* Bytes in, profile out: detects the stream format (or takes it as given), runs the matching
 * decoder chain and feeds its events to the profile model. Shared by batch mode and the TUI. */
#ifndef CMPROF_INGEST_H
#define CMPROF_INGEST_H

#include "../decode/detect.h"
#include "../decode/itm.h"
#include "../decode/text.h"
#include "../decode/orbflow.h"
#include "../decode/tpiu.h"
#include "profile.h"
#include "timeline.h"

#define INGEST_SECTIONS 32
#define INGEST_SECTION_EVENTS 4

struct ingest_section_event { /* a PMU event counted per run (Cortex-A/R) */
    bool seen;
    uint32_t event;
    uint64_t current, min, max, sum;
};

struct ingest_section {
    char name[32];
    bool seen;
    uint64_t count, current, min, max, sum;
    uint64_t long_runs; /* runs past the firmware clock's 32-bit range: current and max saturated, sum exact */
    struct ingest_section_event ev[INGEST_SECTION_EVENTS];
};



struct ingest_stream_info {     /* what the firmware announced (EV_STREAM_INFO) */
    bool present;
    uint64_t clock_hz, timer_hz, section_hz, period, jitter;
    uint32_t code_base;
    char build_id[41];          /* hex, "" when not announced */
    char arch[16], timer[24];   /* "ARMv7-A", "PMU-cycle-counter": "" when not announced */
    uint32_t midr;              /* the core's MIDR when the firmware gave it (Cortex-A/R), else 0 */
};

/* A sample as its stack evidence finds it: a '^' line's sample is in the line before (64 at most), a
 * dump's among its newest (CMPROF_STACK_RECORDS * CMPROF_STACK_EVERY: 128 by default; 1024 at most). */
#define INGEST_RECENT 1024
struct ingest_recent {
    uint32_t pc, tag;
    bool has_tag, counted;
};

/* Stack evidence from the firmware's sampler (EV_STACK_WORDS), unwound with the ELF's CFI. */
struct ingest_stacks {
    uint64_t evidence;    /* samples that came with it */
    uint64_t unwound;     /* of them, walked into a stack (counted samples, with an ELF) */
    uint64_t unproven;    /* of those, walks that ended at a frame they could not prove */
    uint64_t unmatched;   /* evidence whose sample was not the one it names (a line lost between) */
    uint64_t no_symbols;  /* evidence with no ELF to unwind it with */
    uint64_t ignored;     /* evidence left aside as asked (--stack-depth 0: a flat profile) */
    bool ignore;          /* leave the evidence aside */
};

struct ingest {
    struct prof *prof;
    struct prof *window;        /* optional: a second profile that also gets every sample */
    enum detect_format format; /* DETECT_UNKNOWN until decided */
    uint8_t pending[DETECT_WINDOW];
    size_t n_pending;
    uint64_t zeros_held;        /* leading zeros not in pending: a run of them tells no format */
    uint64_t noise;             /* leading bytes the detection found to be noise, not decoded */
    struct text_decoder text;
    struct itm_decoder itm;
    struct tpiu_decoder tpiu;
    struct orbflow_decoder orbflow;
    struct ev_sink sink;
    uint64_t bytes;             /* fed in, whatever the format */
    uint64_t lost;              /* samples the firmware reports it dropped */
    uint64_t max_samples;       /* 0: no limit; else samples past it are not counted (--samples) */
    uint64_t past_limit;        /* samples decoded after the limit was reached */
    struct ingest_stream_info info;
    struct ingest_section section[INGEST_SECTIONS];
    bool last_counted, last_has_tag; /* the last sample: counted, and its tag (a stack may follow) */
    uint32_t last_tag;
    void (*on_log)(void *ctx, const char *text, size_t len); /* optional: firmware log lines */
    void *log_ctx;
    struct timeline *timeline;  /* the samples' order (-o trace), from the first sample; NULL before */
    struct ingest_recent recent[INGEST_RECENT]; /* the last stream samples, for the stack evidence after them */
    uint64_t n_recent;
    struct ingest_stacks stacks;
};

/* format: DETECT_UNKNOWN to detect from the first bytes. tpiu_id: the ITM source in TPIU frames
 * (and the stream tag in orbflow frames). */
void ingest_init(struct ingest *in, struct prof *prof, enum detect_format format, uint8_t tpiu_id, bool wait_sync);
void ingest_feed(struct ingest *in, const uint8_t *buf, size_t len);
/* When no sample came: why, if the stream tells ("" when it does not): the firmware announced
 * itself, so the line works and sampling never started. */
const char *ingest_no_samples_hint(const struct ingest *in);
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
void ingest_free(struct ingest *in);

/* Every way this input lost or refused data so far, one sentence each ("" when none): missing
 * dump samples, dropped lines, bad packets, other TPIU sources, firmware overflows, --samples.
 * Returns how many were written (at most max). */
#define INGEST_LOSS_TEXT 200
size_t ingest_losses(const struct ingest *in, char (*out)[INGEST_LOSS_TEXT], size_t max);

/* Why the callers view is empty, in one sentence ("" when it is not): no stack evidence came (a
 * firmware sampler built without CMPROF_STACKS, or a dump), or it came and none could be used. */
void ingest_stacks_note(const struct ingest *in, char *text, size_t len);

/* The name of a PMU event number (ARMv7 common events): "instructions", "cycles"..., or NULL. */
const char *ingest_event_name(const struct ingest *in, uint32_t event);
/* Every decoder's counters, as the reports list them: the bytes read, then each decoder's own. */
#define INGEST_COUNTERS (1 + 4 * DEC_COUNTERS_MAX)
size_t ingest_counters(const struct ingest *in, struct dec_counter out[INGEST_COUNTERS]);
/* What the decoders saw of the input, for a report that has no samples to show: "itm stream, 4096
 * bytes, 2 bad packets, ...; first bad byte at byte offset 17". */
void ingest_describe(const struct ingest *in, char *buf, size_t len);
/* Instructions per cycle of section s: its INST_RETIRED sum over its time, when its clock counts
 * core cycles (section_hz 0 or the core clock); negative when unknown. */
double ingest_section_ipc(const struct ingest *in, const struct ingest_section *s);

#endif
