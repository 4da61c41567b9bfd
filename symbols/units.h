/* Private to symbols/: compilation units read on demand (units.c, merge.c), the layer above the
 * readers (readers.h). It sorts the unit index, chooses a reader for each unit (the fast reader,
 * else libdwarf here or in its child) and merges what they read into the table; the lookups and
 * open.c call it. */
#ifndef CMPROF_SYMBOLS_UNITS_H
#define CMPROF_SYMBOLS_UNITS_H

#include "readers.h"

/* Sort the unit index and load the units that state no addresses; false when out of memory. */
bool symt_units_ready(struct sym_table *t);
/* Before an address is resolved: load every unit that covers it. */
void symt_require(struct sym_table *t, uint32_t addr);
/* The same for many addresses, each unit read once; false when it could not look (no memory):
 * then lookups must still ask symt_require. */
bool symt_require_many(struct sym_table *t, const uint32_t *addrs, size_t n);
/* Once the units over a are read, are those over every address in (a, b) read too? (hint: as
 * for LAST_LE_FROM, kept between calls with ascending a) */
bool symt_units_between(const struct sym_table *t, uint32_t a, uint32_t b, long *hint);

/* Does a unit state a range over addr (read or not)? */
bool symt_unit_covers(const struct sym_table *t, uint32_t addr);

/* Move a loaded batch of units (merge.c) into t: sorted, then merged into the table's sorted
 * arrays; its rows stay where they are. on_demand: units the index gave addresses for, loaded for
 * those (their ranges are clipped to them). False when out of memory. */
bool symt_merge_stage(struct sym_table *t, struct sym_stage *stage, bool on_demand);

#endif
