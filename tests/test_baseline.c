/* The --diff baseline reader on valid, damaged and random reports: the rows it keeps, the errors
 * it names, and never a crash (run under ASan/UBSan too). */
#include "../app/baseline.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *path = "build/tests/baseline-test.json";

static int load(const char *text, size_t len, struct baseline *b, char *err, size_t errlen)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -2;
    fwrite(text, 1, len, f);
    fclose(f);
    return baseline_load(path, b, err, errlen);
}

static const char REPORT[] =
    "{\n  \"total\": 1000,\n  \"group\": \"function\",\n  \"decoder\": {\"bytes\": 5, \"x\": [1, 2.5e3, -1]},\n"
    "  \"warnings\": [\"a \\\"quoted\\\" \\u00e9 word\"],\n  \"rows\": [\n"
    "    {\"samples\": 700, \"percent\": 70.0, \"name\": \"hot_a\", \"file\": \"a.c\", \"approximate\": false},\n"
    "    {\"samples\": 299.5, \"name\": \"b\\\\c\", \"line\": 0},\n    {\"name\": \"z\", \"samples\": 0.5}\n  ]\n}\n";

static void test_valid_report(void)
{
    struct baseline b;
    char err[300] = "";
    CHECK(load(REPORT, sizeof REPORT - 1, &b, err, sizeof err) == 0);
    CHECK(b.total == 1000 && b.n == 3 && strcmp(b.group, "function") == 0);
    CHECK(baseline_samples(&b, "hot_a") == 700 && baseline_samples(&b, "b\\c") == 299.5 &&
          baseline_samples(&b, "z") == 0.5 && baseline_samples(&b, "nope") == 0);
    baseline_free(&b);
}

static void test_compare(void)
{
    /* 250 of 1000 against 200 of 1000: z = 2.68, significant alone, not among 100 rows */
    struct baseline_delta d = baseline_compare(250, 1000, 200, 1000, 1);
    CHECK(d.significant && d.z > 2.6 && d.z < 2.7 && d.delta > 0.049 && d.delta < 0.051);
    d = baseline_compare(250, 1000, 200, 1000, 100);
    CHECK(!d.significant);
    d = baseline_compare(0, 1000, 0, 1000, 5);
    CHECK(!d.significant && d.z == 0);
}

static void test_damaged_and_random_reports(void)
{
    uint32_t rng = 77;
    size_t n = sizeof REPORT - 1;
    int refused = 0, accepted = 0;
    static char buf[sizeof REPORT + 64];
    for (int k = 0; k < 3000; k++) {
        size_t len = 0;
        for (size_t i = 0; i < n; i++) { /* copy with deletions, insertions, flips */
            rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
            uint32_t m = rng % 97;
            if (m == 0)
                continue;
            if (m == 1 && len < sizeof buf)
                buf[len++] = (char)(rng >> 8);
            char c = REPORT[i];
            if (m == 2)
                c = "{}[],:\"\\0e-"[rng % 11];
            if (len < sizeof buf)
                buf[len++] = c;
        }
        if (k % 10 == 0)
            len = rng % (len + 1); /* cut short */
        struct baseline b;
        char err[300] = "";
        int rc = load(buf, len, &b, err, sizeof err);
        if (rc == 0) {
            accepted++;
            baseline_free(&b);
        } else {
            refused += strstr(err, "byte offset") != NULL || strstr(err, "--diff") != NULL;
        }
    }
    CHECK(accepted + refused == 3000 && refused > 0);
}

int main(void)
{
    RUN_TEST(test_valid_report);
    RUN_TEST(test_compare);
    RUN_TEST(test_damaged_and_random_reports);
    remove(path);
    return check_summary();
}
