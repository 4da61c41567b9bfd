/* Format detection from a stream's first bytes. */
#include "../decode/detect.h"
#include "check.h"

#include <string.h>

static void test_text(void)
{
    const char *s = "boot\r\nprof raw n=2\np 08000100 08000102\nend\n";
    CHECK(detect_format((const uint8_t *)s, strlen(s)) == DETECT_TEXT);
}

static void test_itm(void)
{
    const uint8_t s[] = {0, 0, 0, 0, 0, 0x80, 0x17, 0xb4, 0x02, 0x00, 0x08, 0x15, 0x00};
    CHECK(detect_format(s, sizeof s) == DETECT_ITM);
}

static void test_itm_that_is_mostly_printable(void)
{
    uint8_t s[256];
    for (size_t i = 0; i < sizeof s; i += 2) { /* port-0 printf: 01 'c' pairs; 0x01 is not text */
        s[i] = 0x01;
        s[i + 1] = 'a';
    }
    CHECK(detect_format(s, sizeof s) == DETECT_ITM);
}

static void test_tpiu(void)
{
    const uint8_t s[] = {0x12, 0xFF, 0xFF, 0xFF, 0x7F, 0x03, 0x17, 0x78, 0x56, 0x34, 0x12, 0x16, 0x7A,
                         0x56, 0x34, 0x12, 0x15, 0x00, 0x70, 0x70, 0x08};
    CHECK(detect_format(s, sizeof s) == DETECT_TPIU);
}

static void test_empty_and_names(void)
{
    CHECK(detect_format(NULL, 0) == DETECT_UNKNOWN);
    CHECK(detect_parse("auto") == DETECT_UNKNOWN && detect_parse("tpiu") == DETECT_TPIU);
    CHECK(detect_parse("swo") == -1);
    CHECK(strcmp(detect_name(DETECT_ITM), "itm") == 0);
}

int main(void)
{
    RUN_TEST(test_text);
    RUN_TEST(test_itm);
    RUN_TEST(test_itm_that_is_mostly_printable);
    RUN_TEST(test_tpiu);
    RUN_TEST(test_empty_and_names);
    return check_summary();
}
