/* libFuzzer target: the openocd: sampler (its Tcl reply parser and state machine) on one end of a
 * socket pair, the input playing OpenOCD on the other. Input: [take] [known] [DEMCR, 4 bytes LE]
 * then chunks [n] [dt] [n bytes of reply]: each chunk is sent, the clock moves on dt * 20 ms and
 * the sampler steps, its output taken `take * 16 + 5` bytes at a time. What is left after the last
 * whole chunk answers the close. Checked: the sampler only sends whole, wrapped commands, one at a
 * time (never a command before the last one's reply, the close's apart), and every sample it
 * counts comes out as exactly one ITM PC-sample packet. */
#include "../decode/itm.h"
#include "../source/openocd.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define WRAP_HEAD "list [catch {"
#define WRAP_TAIL "} r] $r"

struct peer {
    int fd;
    char cmd[1024]; /* the command being received */
    size_t len;
    size_t commands, replies; /* commands the sampler sent whole; replies the input ended (0x1a) */
};

/* Read what the sampler sent: each command must be wrapped and end with 0x1a. */
static void drain(struct peer *p)
{
    char in[4096];
    ssize_t got;
    while ((got = read(p->fd, in, sizeof in)) > 0)
        for (ssize_t i = 0; i < got; i++) {
            if (in[i] != 0x1a) {
                if (p->len + 1 >= sizeof p->cmd)
                    abort(); /* a command longer than any the sampler makes */
                p->cmd[p->len++] = in[i];
                continue;
            }
            p->cmd[p->len] = '\0';
            size_t tail = strlen(WRAP_TAIL);
            if (strncmp(p->cmd, WRAP_HEAD, strlen(WRAP_HEAD)) != 0 || p->len < tail ||
                strcmp(p->cmd + p->len - tail, WRAP_TAIL) != 0)
                abort(); /* not the wrapped form: the reply would not carry the catch code */
            p->len = 0;
            p->commands++;
        }
}

static uint64_t samples_out; /* PC samples (and sleeps) the ITM decoder found in the output */

static void on_event(void *ctx, const struct ev *e)
{
    (void)ctx;
    if (e->type == EV_PC || e->type == EV_SLEEP)
        samples_out++;
    else if (e->type == EV_PCS)
        samples_out += e->pcs.n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 6)
        return 0;
    size_t take = (size_t)data[0] * 16u + 5u;
    struct ocd_original first = {.known = data[1] & 1, .demcr = (uint32_t)data[2] | (uint32_t)data[3] << 8 |
                                                                (uint32_t)data[4] << 16 | (uint32_t)data[5] << 24};
    data += 6, size -= 6;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    struct peer p = {.fd = sv[1]};
    double now = 1000.0;
    char err[300];
    struct ocd_sampler *o = ocd_open_fd(sv[0], now, &first, err, sizeof err);
    if (!o) {
        close(sv[1]);
        return 0;
    }
    struct itm_decoder itm;
    itm_init(&itm, false);
    struct ev_sink sink = {on_event, NULL};
    samples_out = 0;
    static uint8_t out[4096 + 16];
    while (size >= 2 && (size_t)data[0] + 2u <= size && !ocd_failed(o)) {
        size_t n = data[0];
        now += data[1] * 0.02;
        if (write(p.fd, data + 2, n) != (ssize_t)n)
            break;
        for (size_t i = 0; i < n; i++)
            p.replies += data[2 + i] == 0x1a;
        data += n + 2, size -= n + 2;
        size_t got;
        do {
            got = ocd_step(o, out, take, now);
            if (got > take)
                abort();
            itm_feed(&itm, out, got, &sink);
            drain(&p);
            if (p.commands > p.replies + 1)
                abort(); /* a command sent before the last one's reply came */
        } while (got == take);
    }
    struct ocd_stats st;
    ocd_get_stats(o, &st);
    if (samples_out != st.samples + st.sleeps)
        abort(); /* a counted sample lost, or one made up */
    ssize_t w = size ? write(p.fd, data, size) : 0; /* the rest answers the close, then the server leaves */
    (void)w;
    shutdown(p.fd, SHUT_WR);
    ocd_close(o);
    drain(&p);
    close(p.fd);
    return 0;
}
