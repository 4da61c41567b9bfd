/* The GDB sampler's default pace on a simulated clock: a scripted server on a socketpair answers each
 * interrupt as late as the test says, and each halt is asked for at the time the pace set, found from
 * gdb_wait_ms() (which reads no clock), so the waits are the pace's own, the same on any machine. */
#include "../source/gdb.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SHORT 0.002 /* a wait this short the sampler sleeps itself in gdb_step() (but for this test) */

struct sim {
    struct gdb_sampler *g;
    int srv;        /* the server's end */
    double now;
    int interrupts; /* so far */
    bool waited;    /* the test moved the clock to the interrupt: the wait was SHORT or more */
    int after_slow, in_a_row, longest; /* interrupts after the slow one; runs of them after short waits */
    double (*cost)(int n); /* how long the n-th interrupt takes to answer */
    char in[8192];
    size_t len;
};

static void reply(struct sim *s, const char *text)
{
    unsigned sum = 0;
    for (const char *p = text; *p; p++)
        sum += (unsigned char)*p;
    char frame[300];
    int n = snprintf(frame, sizeof frame, "$%s#%02x", text, sum & 0xFF);
    CHECK(write(s->srv, frame, (size_t)n) == n);
}

/* What the sampler sent, answered: an interrupt after its cost (the clock moves on), a packet at once. */
static void serve(struct sim *s)
{
    ssize_t got = recv(s->srv, s->in + s->len, sizeof s->in - s->len, MSG_DONTWAIT);
    if (got > 0)
        s->len += (size_t)got;
    size_t k = 0;
    while (k < s->len) {
        char c = s->in[k];
        if (c == 0x03) {
            if (s->interrupts >= 3) {
                s->after_slow++;
                s->in_a_row = s->waited ? 0 : s->in_a_row + 1;
                s->longest = s->in_a_row > s->longest ? s->in_a_row : s->longest;
            }
            s->waited = false;
            s->now += s->cost(++s->interrupts);
            reply(s, "T02thread:01;");
            k++;
            continue;
        }
        char *end = c == '$' ? memchr(s->in + k, '#', s->len - k) : NULL;
        if (c != '$') {
            k++; /* acks */
            continue;
        }
        if (!end || (size_t)(end - s->in) + 3 > s->len)
            break;
        const char *pkt = s->in + k + 1;
        size_t n = (size_t)(end - pkt);
        if (n >= 10 && strncmp(pkt, "qSupported", 10) == 0)
            reply(s, "PacketSize=1000");
        else if (n == 1 && pkt[0] == '?')
            reply(s, "S05");
        else if (n >= 1 && pkt[0] == 'p')
            reply(s, "00010008");
        else if (n >= 1 && pkt[0] == 'm')
            reply(s, "E01");
        else if (!(n == 1 && pkt[0] == 'c'))
            reply(s, "");
        k = (size_t)(end - s->in) + 3;
    }
    memmove(s->in, s->in + k, s->len - k);
    s->len -= k;
}

/* While the target runs: the time the pace interrupts at, or now when gdb_wait_ms() says 0 (then,
 * unless the caller waits, gdb_step() sleeps the last stretch itself); short_wait when that is under
 * SHORT after now (the resume). */
static double halt_due(const struct gdb_sampler *g, double now, bool *short_wait)
{
    double lo = now, hi = now + 7200;
    if (gdb_wait_ms(g, now) == 0)
        hi = now; /* due now */
    else
        for (int k = 0; k < 200; k++) {
            double mid = (lo + hi) / 2;
            *(gdb_wait_ms(g, mid) == 0 ? &hi : &lo) = mid;
        }
    *short_wait = hi - now < SHORT;
    return hi + 1e-9; /* (just past it) */
}

static double steady(int n)
{
    (void)n;
    return 0.01; /* a probe that takes 10 ms to stop the core */
}

static double slow_third(int n)
{
    return n == 3 ? 5.0 : 0.01; /* ... once 5 s */
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 200 s on the simulated clock: the share of it the core was halted (st: the sampler's figures);
 * -1 when the sampler could not start. Unless the caller waits, the sampler sleeps short waits for real,
 * and the simulated clock moves on by the time each step took, as a real caller's does (else a loaded
 * host's oversleep, which the sampler rightly counts as running, came out of the next halt's time: 8 %
 * halted beside four CPU hogs). */
static double run(struct sim *s, double (*cost)(int n), struct gdb_stats *st, bool caller_waits)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    *s = (struct sim){.srv = sv[1], .now = 1000.0, .cost = cost};
    s->g = gdb_open_fd(sv[0], false, 0, s->now);
    CHECK(s->g != NULL);
    if (!s->g)
        return -1;
    if (caller_waits) /* deterministic: every wait on the simulated clock */
        gdb_caller_waits(s->g);
    uint8_t out[8192];
    double start = s->now;
    while (s->now < start + 200 && !gdb_failed(s->g)) {
        if (gdb_ready(s->g) && gdb_fd(s->g) < 0) { /* running */
            bool short_wait;
            s->now = halt_due(s->g, s->now, &short_wait);
            s->waited = !short_wait;
        } else {
            serve(s);
        }
        double before = caller_waits ? 0 : seconds_now();
        gdb_step(s->g, out, sizeof out, s->now);
        if (!caller_waits)
            s->now += seconds_now() - before;
    }
    gdb_get_stats(s->g, st);
    CHECK(gdb_failed(s->g) == NULL);
    close(sv[1]);
    gdb_close(s->g);
    return st->halted_s / (st->halted_s + st->running_s);
}

/* The sampler keeps to the caller's clock, also after it slept a wait under 2 ms itself: it took the
 * monotonic clock's reading then, and a caller on another clock (this test, the fuzz target) saw its
 * times jump hours (a halted share of -137,000 %). */
static void test_on_the_callers_clock(void)
{
    struct sim s;
    struct gdb_stats st = {0}; /* (as it is when the sampler could not start) */
    double share = run(&s, steady, &st, false); /* its short waits slept for real */
    printf("     %d halts, halted %.2f %% of %.1f s\n", s.interrupts, 100 * share, st.halted_s + st.running_s);
    CHECK(share > 0.09 && share < 0.11);
    CHECK(st.halted_s + st.running_s > 199 && st.halted_s + st.running_s < 201);
    CHECK(s.interrupts > 1500);
}

/* One slow halt, paid back whole; then the pace goes on at its mean, with no run of halts flat out:
 * the slow halt moved the average halt 1/16 of its length, and each mean stretch, that much too long,
 * was taken back by the next waits (the pace keeps a deadline) at the shortest wait, 0.25 ms, until
 * the average decayed. */
static void test_slow_halt_then_no_flat_out(void)
{
    struct sim s;
    struct gdb_stats st = {0}; /* (as it is when the sampler could not start) */
    double share = run(&s, slow_third, &st, true);
    printf("     %d halts after the slow one, the longest run of them each under 2 ms after the last: %d; "
           "halted %.2f %%\n", s.after_slow, s.longest, 100 * share);
    CHECK(s.after_slow > 1000);
    CHECK(s.longest <= 3);
    CHECK(share > 0.09 && share < 0.11);
}

static double slow_first(int n)
{
    return n == 1 ? 5.0 : 0.01; /* the first interrupt answered in 5 s (a probe waking up), then 10 ms */
}

/* One conversation of `seconds` on the simulated clock, from where s's clock and interrupt count are,
 * with the pace's account carried in and out (a reconnect: the probe layer carries it so). */
static void converse(struct sim *s, double seconds, struct gdb_pace *pace, struct gdb_stats *st)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    s->srv = sv[1];
    s->len = 0;
    s->g = gdb_open_fd(sv[0], false, 0, s->now);
    CHECK(s->g != NULL);
    if (!s->g)
        return;
    gdb_caller_waits(s->g);
    gdb_set_pace(s->g, pace);
    uint8_t out[8192];
    double end = s->now + seconds;
    while (s->now < end && !gdb_failed(s->g)) {
        if (gdb_ready(s->g) && gdb_fd(s->g) < 0) { /* running */
            bool short_wait;
            double due = halt_due(s->g, s->now, &short_wait);
            if (due >= end) { /* the link drops while the core runs */
                s->now = end;
                gdb_step(s->g, out, sizeof out, s->now);
                break;
            }
            s->now = due;
            s->waited = !short_wait;
        } else {
            serve(s);
        }
        gdb_step(s->g, out, sizeof out, s->now);
    }
    gdb_get_stats(s->g, st);
    gdb_get_pace(s->g, pace);
    CHECK(gdb_failed(s->g) == NULL);
    close(sv[1]);
    gdb_close(s->g);
}

/* A 5 s halt, then the link drops 3 s later and is taken again: the new conversation keeps the pace's
 * debt (45 s of running owed), so the run's halted share stays about 10 %; a fresh pace forgot it and
 * halted at 10 % from the reconnect on, 16 % over the run. */
static void test_reconnect_keeps_the_debt(void)
{
    struct sim s = {.now = 1000.0, .cost = slow_third};
    struct gdb_pace pace = {0};
    struct gdb_stats a = {0}, b = {0};
    converse(&s, 8, &pace, &a); /* two quick halts, the slow one (5 s), 3 s running: the link drops */
    CHECK(s.interrupts == 3 && a.halted_s > 5);
    converse(&s, 60, &pace, &b);
    double halted = a.halted_s + b.halted_s, all = halted + a.running_s + b.running_s; /* as probes.c sums them */
    double share = halted / all;
    printf("     %d halts, halted %.2f %% of %.1f s over the conversations\n", s.interrupts, 100 * share, all);
    CHECK(fabs(pace.halted_s - halted) < 1e-6 && fabs(pace.halted_s + pace.running_s - all) < 1e-6);
    CHECK(share > 0.09 && share < 0.11);
}

/* A slow first halt (5 s) is owed whole (45 s of running), and after that the pace is its usual one:
 * the first halt set the average halt to 5 s, each later one moved it a sixteenth of the way to 10 ms,
 * so the stretches stayed tens of seconds long (the start sparse for minutes). */
static void test_slow_first_halt_not_sparse_after(void)
{
    struct sim s = {.now = 1000.0, .cost = slow_first};
    struct gdb_pace pace = {0};
    struct gdb_stats st = {0};
    converse(&s, 100, &pace, &st);
    double share = pace.halted_s / (pace.halted_s + pace.running_s);
    printf("     %d halts in 100 s after a 5 s first one; halted %.2f %%\n", s.interrupts, 100 * share);
    CHECK(s.interrupts > 400); /* 45-50 s owed, then about 1 halt every 100 ms: 500 */
    CHECK(share > 0.09 && share < 0.11);
}

int main(void)
{
    RUN_TEST(test_on_the_callers_clock);
    RUN_TEST(test_slow_halt_then_no_flat_out);
    RUN_TEST(test_reconnect_keeps_the_debt);
    RUN_TEST(test_slow_first_halt_not_sparse_after);
    return check_summary();
}
