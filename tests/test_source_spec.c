/* What a SOURCE argument is, asked of the transports' registry before anything is opened: the file
 * it reads (so --record and -o never write over it), the settings it takes, and which sampler made
 * its samples (the lockstep advice names it). */
#include "../app/batch.h"
#include "../profile/ingest.h"
#include "../source/source.h"
#include "check.h"

#include <string.h>

static bool same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static void test_the_file_a_spec_reads(void)
{
    CHECK(same(src_spec_path("capture.txt"), "capture.txt"));
    CHECK(same(src_spec_path("/dev/ttyUSB0"), "/dev/ttyUSB0"));
    CHECK(same(src_spec_path("-"), "-"));
    CHECK(same(src_spec_path("gdb:/dev/ttyACM0"), "/dev/ttyACM0")); /* a Black Magic Probe */
    CHECK(src_spec_path("gdb:localhost:3333") == NULL);
    CHECK(src_spec_path("tcp:localhost:1234") == NULL);
    CHECK(src_spec_path("openocd:localhost") == NULL);
    CHECK(src_spec_path("openocd:localhost,swo=72000000") == NULL);
    CHECK(src_spec_path("rtt:localhost:3333") == NULL); /* was taken for a file named so */
    CHECK(src_spec_path("rtt:openocd:localhost") == NULL);
}

static void test_the_settings_a_spec_takes(void)
{
    CHECK(src_spec_takes("gdb:localhost:3333") & SRC_TAKES_UNWIND);
    CHECK(src_spec_takes("gdb:localhost:3333") & SRC_TAKES_TASK_VAR);
    CHECK(src_spec_takes("gdb:/dev/ttyACM0") & SRC_TAKES_UNWIND);
    CHECK(src_spec_takes("rtt:localhost:3333") == SRC_TAKES_RTT_BLOCK);
    CHECK(src_spec_takes("openocd:localhost") == 0);
    CHECK(src_spec_takes("capture.txt") == 0);
    CHECK(src_spec_takes("-") == 0);
}

static void test_the_packets_a_spec_sends(void)
{
    CHECK(src_spec_sends_itm("gdb:localhost:3333")); /* text instead with --task-var or stacks */
    CHECK(src_spec_sends_itm("openocd:localhost"));
    CHECK(src_spec_sends_itm("openocd:localhost,swo=72000000"));
    CHECK(!src_spec_sends_itm("rtt:localhost:3333"));
    CHECK(!src_spec_sends_itm("tcp:localhost:1234"));
    CHECK(!src_spec_sends_itm("capture.bin"));
}

static enum prof_sampler sampler_of(const char *spec, enum detect_format format)
{
    struct prof *p = prof_new(NULL);
    struct ingest_options o = {.format = format};
    struct ingest *in = ingest_new(p, &o);
    enum prof_sampler s = batch_sampler(spec, in);
    ingest_free(in);
    prof_free(p);
    return s;
}

static void test_the_sampler_a_spec_names(void)
{
    CHECK(sampler_of("gdb:localhost:3333", DETECT_TEXT) == PROF_SAMPLER_HALTING);
    CHECK(sampler_of("openocd:localhost", DETECT_ITM) == PROF_SAMPLER_PCSR);
    /* the SWO trace OpenOCD sets up carries the DWT's own PC samples, not reads of DWT_PCSR */
    CHECK(sampler_of("openocd:localhost,swo=72000000", DETECT_ITM) == PROF_SAMPLER_DWT);
    CHECK(sampler_of("openocd:localhost,swo=72000000", DETECT_TPIU) == PROF_SAMPLER_DWT);
    CHECK(sampler_of("rtt:localhost:3333", DETECT_TEXT) == PROF_SAMPLER_FIRMWARE);
    CHECK(sampler_of("capture.bin", DETECT_ITM) == PROF_SAMPLER_DWT);
    CHECK(sampler_of("capture.txt", DETECT_TEXT) == PROF_SAMPLER_FIRMWARE);
}

int main(void)
{
    RUN_TEST(test_the_file_a_spec_reads);
    RUN_TEST(test_the_settings_a_spec_takes);
    RUN_TEST(test_the_packets_a_spec_sends);
    RUN_TEST(test_the_sampler_a_spec_names);
    return check_summary();
}
