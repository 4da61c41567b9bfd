/* Format detection and decoder chains in front of the profile model. */
#include "ingest.h"

#include <stdio.h>
#include <string.h>

static void on_event(void *ctx, const struct ev *e)
{
    struct ingest *in = ctx;
    switch (e->type) {
    case EV_PC:
        prof_add_pc(in->prof, e->addr, e->has_tag != 0, e->tag);
        if (in->window)
            prof_add_pc(in->window, e->addr, e->has_tag != 0, e->tag);
        break;
    case EV_SLEEP:
        prof_add_sleep(in->prof);
        if (in->window)
            prof_add_sleep(in->window);
        break;
    case EV_BUCKET:
        prof_add_bucket(in->prof, e->addr, e->size, e->count);
        if (in->window)
            prof_add_bucket(in->window, e->addr, e->size, e->count);
        break;
    case EV_TASK_NAME:
        prof_task_name(in->prof, e->tag, e->text, e->text_len);
        break;
    case EV_LOG:
        if (in->on_log)
            in->on_log(in->log_ctx, e->text, e->text_len);
        break;
    case EV_SECTION:
        if (e->index < INGEST_SECTIONS) {
            struct ingest_section *s = &in->section[e->index];
            s->seen = true;
            s->count = e->count;
            s->current = e->value;
            s->min = e->min;
            s->max = e->max;
            s->sum = e->sum;
        }
        break;
    case EV_SECTION_NAME:
        if (e->index < INGEST_SECTIONS)
            snprintf(in->section[e->index].name, sizeof in->section[e->index].name, "%.*s", (int)e->text_len,
                     e->text);
        break;
    case EV_LOST:
        in->lost = e->count;
        break;
    case EV_STREAM_INFO: {
        struct ingest_stream_info *i = &in->info;
        i->present = true;
        i->clock_hz = e->value;
        i->timer_hz = e->min;
        i->section_hz = e->max;
        i->period = e->count;
        i->jitter = e->size;
        i->code_base = e->addr;
        size_t n = e->text_len < 40 ? e->text_len : 40;
        memcpy(i->build_id, e->text, n);
        i->build_id[n] = '\0';
        uint8_t id[20];
        size_t k = 0;
        for (; k < n / 2; k++) {
            unsigned v;
            if (sscanf(i->build_id + 2 * k, "%2x", &v) != 1)
                break;
            id[k] = (uint8_t)v;
        }
        if (k)
            prof_stream_build_id(in->prof, id, k);
        break;
    }
    default:
        break;
    }
}

static void tpiu_to_itm(void *ctx, const uint8_t *buf, size_t len)
{
    struct ingest *in = ctx;
    itm_feed(&in->itm, buf, len, &in->sink);
}

void ingest_init(struct ingest *in, struct prof *prof, enum detect_format format, uint8_t tpiu_id, bool wait_sync)
{
    memset(in, 0, sizeof *in);
    in->prof = prof;
    in->format = format;
    in->sink = (struct ev_sink){on_event, in};
    text_init(&in->text);
    itm_init(&in->itm, wait_sync);
    tpiu_init(&in->tpiu, tpiu_id);
}

static void decode(struct ingest *in, const uint8_t *buf, size_t len)
{
    switch (in->format) {
    case DETECT_TEXT:
        text_feed(&in->text, buf, len, &in->sink);
        break;
    case DETECT_TPIU: {
        struct tpiu_byte_sink bs = {tpiu_to_itm, in};
        tpiu_feed(&in->tpiu, buf, len, &bs);
        break;
    }
    default:
        itm_feed(&in->itm, buf, len, &in->sink);
        break;
    }
}

void ingest_feed(struct ingest *in, const uint8_t *buf, size_t len)
{
    in->bytes += len;
    if (in->format == DETECT_UNKNOWN) {
        size_t take = DETECT_WINDOW - in->n_pending;
        if (take > len)
            take = len;
        memcpy(in->pending + in->n_pending, buf, take);
        in->n_pending += take;
        buf += take;
        len -= take;
        if (in->n_pending < DETECT_WINDOW)
            return;
        in->format = detect_format(in->pending, in->n_pending);
        decode(in, in->pending, in->n_pending);
    }
    if (len)
        decode(in, buf, len);
}

void ingest_finish(struct ingest *in)
{
    if (in->format == DETECT_UNKNOWN && in->n_pending) {
        in->format = detect_format(in->pending, in->n_pending);
        decode(in, in->pending, in->n_pending);
    }
    if (in->format == DETECT_TEXT)
        text_finish(&in->text, &in->sink);
}

void ingest_free(struct ingest *in)
{
    text_free(&in->text);
}
