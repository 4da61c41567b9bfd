/* Section timings' bookkeeping: the clock they count in, the budgets (--budget NAME=US) and the
 * runs over them, and key r's fresh start in the section view. */
#include "view_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int view_add_budget(struct view *v, const char *spec)
{
    const char *eq = strchr(spec, '=');
    char *end;
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof v->budgets[0].name || v->n_budgets == VIEW_BUDGETS)
        return -1;
    double us = strtod(eq + 1, &end);
    if (*end || us <= 0)
        return -1;
    struct view_budget *bu = &v->budgets[v->n_budgets++];
    memcpy(bu->name, spec, (size_t)(eq - spec));
    bu->name[eq - spec] = '\0';
    bu->us = us;
    return 0;
}

double view_section_hz(const struct view *v)
{
    if (v->cpu_hz > 0)
        return v->cpu_hz;
    const struct prof_stream_info *info = prof_stream_info(v->prof);
    if (info->present && info->section_hz)
        return (double)info->section_hz;
    if (info->present && info->clock_hz)
        return (double)info->clock_hz;
    return 0;
}

/* A section time as a person reads it, within `width` columns when it can be: microseconds with two
 * decimals (fewer when long), timer ticks whole; past the width in thousands, millions... (k, M, G,
 * T). Returns the columns written. */
int view_section_time(char *buf, size_t len, double value, bool us, int width)
{
    int n = snprintf(buf, len, "%.*f", us ? 2 : 0, value);
    if (us && n > width)
        n = snprintf(buf, len, "%.0f", value);
    static const char suffix[] = "kMGT";
    for (int k = 0; n > width && k < 4; k++) {
        value /= 1000;
        if (value >= 999.95 && k < 3)
            continue; /* 15.1G, not 15050211k */
        n = snprintf(buf, len, "%.1f%c", value, suffix[k]);
        if (n > width)
            n = snprintf(buf, len, "%.0f%c", value, suffix[k]);
    }
    return n;
}

const struct view_budget *view_budget_for(const struct view *v, int index, const char *name)
{
    char idx[16];
    snprintf(idx, sizeof idx, "%d", index);
    for (int i = 0; i < v->n_budgets; i++)
        if ((name[0] && strcmp(v->budgets[i].name, name) == 0) || strcmp(v->budgets[i].name, idx) == 0)
            return &v->budgets[i];
    return NULL;
}

void view_check_budgets(struct view *v)
{
    double hz = view_section_hz(v);
    for (int i = 0; i < PROF_SECTIONS && i < 32; i++) {
        const struct prof_section *s = prof_section(v->prof, i);
        if (!s->seen || s->count == v->seen_count[i])
            continue;
        uint64_t runs = s->count - v->seen_count[i]; /* since the last report looked at */
        if (v->sect_reset[i]) {                       /* min/max since the reset */
            if (s->current < v->sect_min[i])
                v->sect_min[i] = s->current;
            if (s->current > v->sect_max[i])
                v->sect_max[i] = s->current;
        }
        const struct view_budget *bu = view_budget_for(v, i, s->name);
        if (bu && hz > 0) {
            double limit = bu->us * hz / 1e6; /* in ticks */
            /* runs over budget among the new ones: all of them when even the minimum is over; else
             * the latest, and the one that set a new maximum */
            uint64_t over = 0;
            if ((double)s->min > limit)
                over = runs;
            else
                over = ((double)s->current > limit) +
                       (s->max > v->seen_max[i] && (double)s->max > limit && s->max != s->current && runs > 1);
            v->budget_violations[i] += over;
        }
        v->seen_max[i] = s->max;
        v->seen_count[i] = s->count;
    }
}

void view_reset_sections(struct view *v)
{
    for (int i = 0; i < PROF_SECTIONS && i < 32; i++) {
        v->sect_reset[i] = true;
        v->sect_base_count[i] = prof_section(v->prof, i)->count;
        v->sect_base_sum[i] = prof_section(v->prof, i)->sum;
        v->sect_min[i] = UINT64_MAX;
        v->sect_max[i] = 0;
        v->budget_violations[i] = 0;
    }
    v->sect_reset_at = v->st.elapsed;
}
