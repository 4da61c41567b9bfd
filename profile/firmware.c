/* The firmware's announce and section timings, kept with the profile. */
#include "firmware.h"
#include "prof_int.h"

#include <stdio.h>
#include <string.h>

const struct prof_stream_info *prof_stream_info(const struct prof *p)
{
    return &p->info;
}

void prof_set_stream_info(struct prof *p, const struct prof_stream_info *info)
{
    p->info = *info;
}

const struct prof_section *prof_section(const struct prof *p, uint32_t i)
{
    return i < PROF_SECTIONS ? &p->section[i] : NULL;
}

bool prof_sections_seen(const struct prof *p)
{
    bool timed = false;
    for (int k = 0; k < PROF_SECTIONS; k++)
        timed |= p->section[k].seen;
    return timed;
}

void prof_section_run(struct prof *p, uint32_t i, const struct prof_run *run)
{
    if (i >= PROF_SECTIONS)
        return;
    struct prof_section *s = &p->section[i];
    s->seen = true;
    s->count = run->count;
    s->current = run->current;
    s->min = run->min;
    s->max = run->max;
    s->sum = run->sum;
    s->long_runs = run->long_runs;
}

void prof_section_event(struct prof *p, uint32_t i, uint32_t slot, uint32_t event, const struct prof_run *run)
{
    if (i >= PROF_SECTIONS || slot >= PROF_SECTION_EVENTS)
        return;
    struct prof_section_event *x = &p->section[i].ev[slot];
    x->seen = true;
    x->event = event;
    x->current = run->current;
    x->min = run->min;
    x->max = run->max;
    x->sum = run->sum;
}

void prof_section_name(struct prof *p, uint32_t i, const char *name, size_t len)
{
    if (i < PROF_SECTIONS)
        snprintf(p->section[i].name, sizeof p->section[i].name, "%.*s", (int)len, name);
}

/* The Cortex-A9's own event numbers (its TRM, "Performance Monitoring Unit"). */
static const char *a9_event_name(uint32_t event)
{
    switch (event) {
    case 0x68: return "instructions renamed";
    case 0x70: return "main execution unit instructions";
    case 0x71: return "second execution unit instructions";
    case 0x72: return "load/store instructions";
    case 0x73: return "floating-point instructions";
    case 0x74: return "NEON instructions";
    default: return NULL;
    }
}

const char *prof_event_name(const struct prof *p, uint32_t event)
{
    bool arm_a9 = p && p->info.midr >> 24 == 0x41u && (p->info.midr >> 4 & 0xfffu) == 0xc09u;
    if (event >= 0x40u)
        return arm_a9 ? a9_event_name(event) : NULL;
    switch (event) {
    case 0x00: return "software increments";
    case 0x01: return "L1I refills";
    case 0x03: return "L1D refills";
    case 0x04: return "L1D accesses";
    case 0x06: return "loads";
    case 0x07: return "stores";
    case 0x08: return "instructions";
    case 0x09: return "exceptions";
    case 0x0A: return "exception returns";
    case 0x10: return "branch mispredicts";
    case 0x11: return "cycles";
    case 0x12: return "branches";
    case 0x13: return "memory accesses";
    default: return NULL;
    }
}

double prof_section_ipc(const struct prof *p, const struct prof_section *s)
{
    const struct prof_stream_info *i = &p->info;
    bool cycles = !i->present || i->section_hz == 0 || i->section_hz == i->clock_hz;
    for (int k = 0; k < PROF_SECTION_EVENTS; k++)
        if (s->ev[k].seen && s->ev[k].event == 0x08 && cycles && s->sum > 0)
            return (double)s->ev[k].sum / (double)s->sum;
    return -1;
}
