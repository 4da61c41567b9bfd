/* Trace Event Format writer (see trace.h): metadata events name the process and the lanes, then
 * the runs and section runs as complete events; times in microseconds. */
#include "trace.h"

#include "../base/grow.h"

#include "intern.h"
#include "period.h"

#include "emit.h"

#include <stdlib.h>
#include <string.h>

/* the one lane of a capture with no task tag at all, named so that the viewer says why */
#define NO_TAGS "whole run (the capture carries no task tags: one lane)"
#define NO_TAGS_WARNING "the capture carries no task tags, so the trace has one lane: a firmware stream " \
                        "built with CMPROF_TAG (or --task-var with a gdb: source) gives one lane per task"
#define SECTION_TID 100000u /* section lanes after any task lane */

static void lane_name(FILE *out, unsigned tid, const char *name, unsigned order)
{
    fprintf(out, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %u, \"ts\": 0, \"args\": {\"name\": ",
            tid);
    emit_json_string(out, name);
    fprintf(out, "}},\n{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": 1, \"tid\": %u, \"ts\": 0, "
            "\"args\": {\"sort_index\": %u}}", tid, order);
}

/* A lane: its label as a JSON string, escaped once. */
struct lane {
    char *json;
};

/* Where a tag's runs go: a small cache in front of the label lookup (a firmware has a few tasks,
 * and a run's label is asked for each of hundreds of thousands of runs). */
struct lane_slot {
    bool used, has_tag;
    uint32_t tag;
    size_t lane;
};
#define LANE_CACHE 64

struct lanes {
    struct intern *labels; /* lane number = label number */
    struct lane *lane;
    size_t cap;
    struct lane_slot cache[LANE_CACHE];
};

/* The lane of a run's tag, named (a metadata event) when first used; SIZE_MAX when out of memory. */
static size_t lane_of(FILE *out, struct prof *p, struct lanes *l, const struct timeline_run *r, bool no_tags)
{
    struct lane_slot *c = &l->cache[(r->tag * 2654435761u) >> 26 & (LANE_CACHE - 1)];
    if (c->used && c->tag == r->tag && c->has_tag == r->has_tag)
        return c->lane;
    char buf[64];
    const char *label = r->has_tag ? prof_tag_label(p, r->tag, buf, sizeof buf) : no_tags ? NO_TAGS : PROF_UNTAGGED;
    size_t before = intern_count(l->labels), id = intern_id(l->labels, label);
    if (id == SIZE_MAX)
        return SIZE_MAX;
    if (id == before) {
        if (!grow_array((void **)&l->lane, &l->cap, id + 1, sizeof *l->lane, 16))
            return SIZE_MAX;
        size_t len = 0;
        l->lane[id].json = NULL;
        FILE *m = open_memstream(&l->lane[id].json, &len);
        if (!m)
            return SIZE_MAX;
        emit_json_string(m, label);
        if (fclose(m) != 0)
            return SIZE_MAX;
        lane_name(out, (unsigned)id + 1, label, (unsigned)id + 1);
    }
    *c = (struct lane_slot){true, r->has_tag, r->tag, id};
    return id;
}

/* Whether no run carries a task tag. */
static bool untagged(const struct timeline *t)
{
    const struct timeline_run *runs;
    size_t n = timeline_runs(t, &runs);
    for (size_t i = 0; i < n; i++)
        if (runs[i].has_tag)
            return false;
    return true;
}

/* The runs, each a complete event on its label's lane. false when out of memory. */
static bool write_runs(FILE *out, struct prof *p, const struct timeline *t, double us)
{
    struct lanes l = {intern_new(), NULL, 0, {{0}}};
    const struct timeline_run *runs;
    size_t n = timeline_runs(t, &runs), i = 0;
    uint64_t start = 0;
    bool no_tags = untagged(t);
    for (; l.labels && i < n; start += runs[i++].length) {
        size_t id = lane_of(out, p, &l, &runs[i], no_tags);
        if (id == SIZE_MAX)
            break;
        fprintf(out, ",\n{\"name\": %s, \"cat\": \"task\", \"ph\": \"X\", \"pid\": 1, \"tid\": %zu, \"ts\": %.3f, "
                "\"dur\": %.3f, \"args\": {\"samples\": %u}}", l.lane[id].json, id + 1, (double)start * us,
                (double)runs[i].length * us, runs[i].length);
    }
    for (size_t k = 0; l.labels && k < intern_count(l.labels) && k < l.cap; k++)
        free(l.lane[k].json);
    free(l.lane);
    intern_free(l.labels);
    return i == n;
}

/* Section reports: each one's last run with its real duration, ending where the report came,
 * with the runs since the report before. Reports closer together than their runs (several between
 * two samples: the report's place is known to a sample) are laid end to end instead, so a lane's
 * events never overlap and none shrinks to nothing. */
static void write_sections(FILE *out, const struct prof *p, const struct timeline *t, double us)
{
    double hz = period_section_hz(prof_stream_info(p));
    double tick_us = hz > 0 ? 1e6 / hz : 1.0; /* unknown: a tick is shown as a microsecond */
    const char *unit = hz > 0 ? "us" : "ticks";
    double lane_end[TIMELINE_SECTIONS] = {0};
    bool named[TIMELINE_SECTIONS] = {false};
    const struct timeline_mark *marks;
    size_t n = timeline_marks(t, &marks);
    for (size_t i = 0; i < n; i++) {
        const struct timeline_mark *m = &marks[i];
        char name[48];
        const struct prof_section *s = prof_section(p, m->section);
        if (s && s->name[0])
            snprintf(name, sizeof name, "%s", s->name);
        else
            snprintf(name, sizeof name, "section %u", (unsigned)m->section);
        if (!named[m->section]) {
            char lane[64];
            snprintf(lane, sizeof lane, "section: %s", name);
            lane_name(out, SECTION_TID + m->section, lane, SECTION_TID + m->section);
            named[m->section] = true;
        }
        double end = (double)m->at * us, dur = (double)m->current * tick_us;
        double start = end - dur < lane_end[m->section] ? lane_end[m->section] : end - dur;
        end = start + dur;
        lane_end[m->section] = end;
        fputs(",\n{\"name\": ", out);
        emit_json_string(out, name);
        fprintf(out, ", \"cat\": \"section\", \"ph\": \"X\", \"pid\": 1, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, "
                "\"args\": {\"duration_%s\": %.3f, \"runs\": %llu, \"mean_%s\": %.3f}}",
                SECTION_TID + m->section, start, end - start, unit, dur, (unsigned long long)m->runs, unit,
                m->runs ? (double)m->sum * tick_us / (double)m->runs : 0.0);
    }
}

int trace_write(FILE *out, struct prof *p, const struct ingest *in, const char *elf, char *err, size_t errlen)
{
    const struct timeline *t = ingest_timeline(in);
    double ns = period_ns(prof_stream_info(p));
    double us = ns > 0 ? ns / 1000.0 : 1.0;
    fputs("{\"traceEvents\": [\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"ts\": 0, "
          "\"args\": {\"name\": ", out);
    emit_json_string(out, elf ? path_base(elf) : "firmware");
    fputs("}}", out);
    bool ok = !t || write_runs(out, p, t, us); /* none: no sample came in order */
    if (t)
        write_sections(out, p, t, us);
    bool no_tags = t && timeline_length(t) && untagged(t);
    fprintf(out, "\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"creator\": \"cmprof-top\", %s%s%s\"sample_us\": %.6f, "
            "\"time\": \"%s\", \"samples\": %llu, \"truncated\": %s}}\n", no_tags ? "\"warning\": \"" : "",
            no_tags ? NO_TAGS_WARNING : "", no_tags ? "\", " : "", us,
            ns > 0 ? "the announced sampling period" : "unknown: the capture announced no period, one sample is 1 us",
            (unsigned long long)(t ? timeline_length(t) : 0), t && timeline_truncated(t) ? "true" : "false");
    if (!ok)
        snprintf(err, errlen, "trace: out of memory");
    return ok ? 0 : -1;
}
