/* The --diff baseline reader on valid, damaged and random reports: the rows it keeps, the errors
 * it names, and never a crash (run under ASan/UBSan too). */
#include "../report/baseline.h"
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

/* A report an editor saved with a UTF-8 byte order mark reads as without it (it said "not a JSON
 * report"); a report of no samples is refused as that (it said 'no "total" and "rows"', which it had). */
static void test_byte_order_mark_and_empty_report(void)
{
    static char text[sizeof REPORT + 3] = "\xEF\xBB\xBF";
    memcpy(text + 3, REPORT, sizeof REPORT);
    struct baseline b;
    char err[300] = "";
    CHECK(load(text, sizeof text - 1, &b, err, sizeof err) == 0 && b.total == 1000 && b.n == 3);
    baseline_free(&b);
    const char *empty = "{\"total\": 0, \"group\": \"function\", \"rows\": []}";
    CHECK(load(empty, strlen(empty), &b, err, sizeof err) == -1 &&
          strstr(err, "\"total\" is 0: a report of no samples cannot be a baseline"));
}

/* A report an editor saved as UTF-16 (its byte order mark, FF FE or FE FF) is said to be that, with
 * what to do, where it said only that the text was no JSON; the marks are the text decoder's too
 * (base/bom.h). */
static void test_utf16_report(void)
{
    static const char le[] = "\xFF\xFE{\0\"\0t\0", be[] = "\xFE\xFF\0{\0\"\0t";
    const char *const texts[] = {le, be};
    for (int i = 0; i < 2; i++) {
        struct baseline b;
        char err[300] = "";
        CHECK(load(texts[i], sizeof le - 1, &b, err, sizeof err) == -1 &&
              strstr(err, i ? "UTF-16 (big-endian)" : "UTF-16 (little-endian)") && strstr(err, "save it as UTF-8"));
    }
}

/* Names of any length come back whole; \u escapes as UTF-8 (the report writes controls that way). */
static void test_long_names_and_escapes(void)
{
    static char text[8192], name[3001];
    memset(name, 'n', sizeof name - 1);
    snprintf(text, sizeof text, "{\"total\": 3, \"group\": \"function\", \"rows\": [{\"name\": \"%s\", "
             "\"samples\": 2}, {\"name\": \"a\\u0001\\u00e9\\u20ac\", \"samples\": 1}]}", name);
    struct baseline b;
    char err[300] = "";
    CHECK(load(text, strlen(text), &b, err, sizeof err) == 0);
    CHECK(baseline_samples(&b, name) == 2 && baseline_samples(&b, "a\x01\xc3\xa9\xe2\x82\xac") == 1);
    name[sizeof name - 2] = '\0'; /* one byte shorter: another name */
    CHECK(baseline_samples(&b, name) == 0);
    baseline_free(&b);
}

/* Counts that cannot be a report's: refused at the line where they are. */
static void test_absurd_counts(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"{\n\"total\": 1,\n\"rows\": [{\"name\": \"a\", \"samples\": 500},\n{\"name\": \"b\", \"samples\": 500}]}",
         "line 2: \"total\" is 1 but the rows' samples add up to 1000"},
        {"{\"total\": 10,\n\"rows\": [\n{\"name\": \"a\", \"samples\": -1}]}", "line 3: a sample count below 0"},
        {"{\"total\": 10,\n\"rows\": [\n{\"name\": \"a\", \"samples\": 1e300}]}", "line 3: a sample count below 0"},
        {"{\"total\": -10,\n\"rows\": []}", "line 1: a sample count below 0"},
        {"{\"total\": 10,\n\"rows\": [\n{\"name\": \"a\"}]}", "line 3: a row without its samples"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct baseline b;
        char err[300] = "";
        CHECK(load(cases[i].text, strlen(cases[i].text), &b, err, sizeof err) == -1);
        CHECK(strstr(err, path) && strstr(err, cases[i].want));
    }
    /* two decimals per row: 3 rows of a third each add up to within a hundredth */
    const char *thirds = "{\"total\": 1, \"rows\": [{\"name\": \"a\", \"samples\": 0.33}, {\"name\": \"b\", "
                         "\"samples\": 0.33}, {\"name\": \"c\", \"samples\": 0.33}]}";
    struct baseline b;
    char err[300] = "";
    CHECK(load(thirds, strlen(thirds), &b, err, sizeof err) == 0);
    baseline_free(&b);
}

static void test_group_and_build(void)
{
    struct baseline b;
    char err[300] = "", why[300] = "";
    const char *text = "{\"total\": 2, \"group\": \"line\", \"stream\": {\"clock_hz\": 5, \"build_id\": \"abc123\"}, "
                       "\"rows\": [{\"name\": \"x.c:1\", \"samples\": 2}]}";
    CHECK(load(text, strlen(text), &b, err, sizeof err) == 0);
    CHECK(strcmp(b.build_id, "abc123") == 0);
    CHECK(baseline_check_group(&b, "base.json", "line", err, sizeof err) == 0);
    CHECK(baseline_check_group(&b, "base.json", "function", err, sizeof err) == -1 && strstr(err, "base.json") &&
          strstr(err, "by line"));
    CHECK(!baseline_other_build(&b, "abc123", why, sizeof why) && !baseline_other_build(&b, "", why, sizeof why));
    CHECK(baseline_other_build(&b, "abc124", why, sizeof why) && strstr(why, "abc123") && strstr(why, "abc124"));
    b.group[0] = '\0';
    CHECK(baseline_check_group(&b, "base.json", "line", err, sizeof err) == -1 && strstr(err, "group"));
    baseline_free(&b);
}

/* A report that said its samples were not its ELF's program: its rows name the wrong functions, refused
 * (it was read as any other); "wrong_elf": false, and the code check's own nested flag, are no matter. */
static void test_wrong_elf_report(void)
{
    struct baseline b;
    char err[300] = "";
    const char *wrong = "{\"total\": 2, \"group\": \"function\", \"wrong_elf\": true, "
                        "\"rows\": [{\"name\": \"x\", \"samples\": 2}]}";
    CHECK(load(wrong, strlen(wrong), &b, err, sizeof err) == -1 && strstr(err, "wrong_elf") &&
          strstr(err, "baseline-test.json"));
    const char *right = "{\"total\": 2, \"group\": \"function\", \"code_check\": {\"wrong_elf\": true}, "
                        "\"wrong_elf\": false, \"rows\": [{\"name\": \"x\", \"samples\": 2}]}";
    CHECK(load(right, strlen(right), &b, err, sizeof err) == 0);
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

/* A file that holds more than one report's rows: refused at the line of what is extra. */
static void test_duplicates_and_trailing_data(void)
{
    static const struct {
        const char *text, *want;
        int line;
    } cases[] = {
        {"{\"total\": 3, \"group\": \"function\", \"rows\": [\n{\"name\": \"a\", \"samples\": 1},\n"
         "{\"name\": \"b\", \"samples\": 1},\n{\"name\": \"a\", \"samples\": 1}]}",
         "a second row named \"a\"", 4},
        {"{\"total\": 1, \"group\": \"function\", \"rows\": [{\"name\": \"a\", \"samples\": 1}]}\n"
         "{\"total\": 1, \"group\": \"function\", \"rows\": [{\"name\": \"a\", \"samples\": 1}]}\n",
         "a second report", 2},
        {"{\"total\": 1, \"group\": \"function\", \"rows\": [{\"name\": \"a\", \"samples\": 1}]}\n\nxyz",
         "data after the end", 3},
        {"{\"total\": 1, \"group\": \"function\", \"rows\": [{\"name\": \"a\", \"samples\": 1}]}  \n\t\n",
         NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct baseline b;
        char err[300] = "", want_line[32];
        int rc = load(cases[i].text, strlen(cases[i].text), &b, err, sizeof err);
        if (!cases[i].want) {
            CHECK(rc == 0);
            if (rc == 0)
                baseline_free(&b);
            continue;
        }
        snprintf(want_line, sizeof want_line, " line %d: ", cases[i].line);
        CHECK(rc == -1 && strstr(err, cases[i].want) && strstr(err, want_line) && strstr(err, path));
        if (rc != -1 || !strstr(err, want_line))
            fprintf(stderr, "  case %zu: %s\n", i, err);
    }
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
    RUN_TEST(test_byte_order_mark_and_empty_report);
    RUN_TEST(test_utf16_report);
    RUN_TEST(test_long_names_and_escapes);
    RUN_TEST(test_absurd_counts);
    RUN_TEST(test_group_and_build);
    RUN_TEST(test_wrong_elf_report);
    RUN_TEST(test_compare);
    RUN_TEST(test_duplicates_and_trailing_data);
    RUN_TEST(test_damaged_and_random_reports);
    remove(path);
    return check_summary();
}
