/* libFuzzer target: the GDB sampler's conversation (source/gdb.c over source/rsp.c) with a server
 * whose every byte comes from the input (conversation.h: one byte of settings, then the server's
 * records). The end of the input closes the server's side, and gdb_close() runs its course. */
#include "../source/gdb.h"
#include "conversation.h"

#include <stdlib.h>
#include <string.h>

/* A stand-in for the ELF's unwinder: every odd word up the stack is a caller, as far as max, so
 * the walk asks for as much stack as the sampler will read; an EXC_RETURN in LR asks for PSP. */
static size_t fake_unwind(void *ctx, const uint32_t regs[16],
                          bool (*read32)(void *rctx, uint32_t addr, uint32_t *value), void *rctx, uint32_t *out,
                          size_t max, uint32_t *psp_return)
{
    (void)ctx;
    size_t n = 0;
    uint32_t v;
    for (uint32_t k = 0; k < 8192 && n < max && read32(rctx, regs[13] + 4u * k, &v); k++)
        if (v & 1u)
            out[n++] = v & ~1u;
    *psp_return = regs[14] >= 0xFFFFFFE0u && (regs[14] & 4u) ? regs[14] : 0;
    return n;
}

/* Settings byte: bit 0 a task variable, bit 1 its names; bits 2-3 stack depth 0/4/16/64; bits 4-5
 * the rate: gentle, max, 50/s, 5000/s; bit 6 a Black Magic Probe (scan and attach first). */
static struct gdb_sampler *start(uint8_t cfg, int fd, double now)
{
    static const double rates[4] = {0, -1, 50, 5000};
    static const unsigned depths[4] = {0, 4, 16, GDB_STACK_DEPTH_MAX};
    struct gdb_sampler *g = gdb_open_fd(fd, (cfg & 64) != 0, rates[(cfg >> 4) & 3], now);
    if (!g)
        return NULL;
    if (cfg & 1)
        gdb_set_task_var(g, 0x20000010u, (cfg & 2) ? 4 : -1);
    if (depths[(cfg >> 2) & 3])
        gdb_set_unwind(g, depths[(cfg >> 2) & 3], fake_unwind, NULL);
    return g;
}

static bool sampler_failed(void *g)
{
    return gdb_failed(g);
}

static void sampler_step(void *g, double *now)
{
    uint8_t out[8192];
    int w = gdb_wait_ms(g, *now);
    if (gdb_fd(g) < 0 && w >= 0 && w <= 2)
        *now += 0.005; /* past the next halt: gdb_step() would sleep the last stretch for real */
    gdb_step(g, out, sizeof out, *now);
}

static void sampler_close(void *g)
{
    gdb_close(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    if (size < 1 || !conversation_open(sv))
        return 0;
    double now = 1000.0;
    struct gdb_sampler *g = start(data[0], sv[0], now);
    if (!g) {
        close(sv[0]);
        close(sv[1]);
        return 0;
    }
    conversation_run(data + 1, size - 1, sv[1], &now, g, sampler_failed, sampler_step);
    struct gdb_stats st;
    gdb_get_stats(g, &st);
    char text[400] = "";
    gdb_advice(&st, text, sizeof text);
    conversation_end(sv[1], g, sampler_close);
    return 0;
}
