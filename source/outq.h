/* What a sampling source (gdb:, openocd:) has made and not yet handed to its reader: ITM packets
 * (an ITM synchronisation packet first), or text. Fixed size: a source reads its server's next
 * reply only while outq_room() says the samples it brings will fit. */
#ifndef CMPROF_SOURCE_OUTQ_H
#define CMPROF_SOURCE_OUTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct outq {
    uint8_t buf[4096];
    size_t len;
    bool synced; /* the ITM synchronisation packet went out */
};

size_t outq_room(const struct outq *q);
bool outq_bytes(struct outq *q, const void *data, size_t n); /* false (nothing added) when it does not fit */
bool outq_pc(struct outq *q, uint32_t pc);                   /* an ITM PC-sample packet */
bool outq_sleep(struct outq *q);                             /* an ITM "core asleep" PC-sample packet */
/* Hand out up to n bytes, oldest first; returns how many. */
size_t outq_take(struct outq *q, uint8_t *buf, size_t n);

#endif
