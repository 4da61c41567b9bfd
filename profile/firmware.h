/* What the firmware told about itself, kept with the profile it describes: its announce (clocks,
 * period, build-id, target) and its timed sections' figures. ingest.c gives them to every profile
 * it feeds; prof_reset() keeps them (they are the firmware's state, not counts of a window). */
#ifndef CMPROF_PROFILE_FIRMWARE_H
#define CMPROF_PROFILE_FIRMWARE_H

#include "profile.h"

#include <stdbool.h>
#include <stdint.h>

#define PROF_SECTIONS 32
#define PROF_SECTION_EVENTS 4

/* A section's figures as the firmware reports them (cumulative: count, min, max, sum). */
struct prof_run {
    uint64_t current; /* the last run's */
    uint64_t count;   /* runs so far (not for a PMU event) */
    uint64_t min, max, sum;
    uint64_t long_runs; /* runs past the firmware clock's 32-bit range: current and max saturated, sum exact */
};

struct prof_section_event { /* a PMU event counted per run (Cortex-A/R) */
    bool seen;
    uint32_t event;
    uint64_t current, min, max, sum;
};

struct prof_section {
    char name[32];
    bool seen;
    uint64_t count, current, min, max, sum;
    uint64_t long_runs; /* runs past the firmware clock's 32-bit range: current and max saturated, sum exact */
    struct prof_section_event ev[PROF_SECTION_EVENTS];
};

struct prof_stream_info {       /* what the firmware announced */
    bool present;
    uint64_t clock_hz, timer_hz, section_hz, period, jitter;
    uint32_t code_base;
    char build_id[41];          /* hex, "" when not announced */
    char arch[16], timer[24];   /* "ARMv7-A", "PMU-cycle-counter": "" when not announced */
    uint32_t midr;              /* the core's MIDR when the firmware gave it (Cortex-A/R), else 0 */
};

/* The announce (present false until one came). */
const struct prof_stream_info *prof_stream_info(const struct prof *p);
void prof_set_stream_info(struct prof *p, const struct prof_stream_info *info);

/* Section i (below PROF_SECTIONS; NULL past them): seen false until its first figures came. */
const struct prof_section *prof_section(const struct prof *p, uint32_t i);
/* Whether any section's figures came. */
bool prof_sections_seen(const struct prof *p);
/* Section i's figures, one of its PMU events' (slot below PROF_SECTION_EVENTS), its name; past
 * the tables, nothing. */
void prof_section_run(struct prof *p, uint32_t i, const struct prof_run *run);
void prof_section_event(struct prof *p, uint32_t i, uint32_t slot, uint32_t event, const struct prof_run *run);
void prof_section_name(struct prof *p, uint32_t i, const char *name, size_t len);

/* The name of a PMU event number (ARMv7 common events, and the Cortex-A9's own when the announce
 * names that core): "instructions", "cycles"..., or NULL. */
const char *prof_event_name(const struct prof *p, uint32_t event);
/* Instructions per cycle of section s: its INST_RETIRED sum over its time, when its clock counts
 * core cycles (section_hz 0 or the core clock); negative when unknown. */
double prof_section_ipc(const struct prof *p, const struct prof_section *s);

#endif
