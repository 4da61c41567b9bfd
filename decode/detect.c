/* Format detection. A text dump is almost all printable ASCII with line ends; orbflow is zero-
 * delimited frames whose COBS codes and sums check out; a TPIU stream carries full syncs
 * (FF FF FF 7F); anything else is taken as raw ITM. */
#include "detect.h"

#include "orbflow.h"

#include <string.h>

/* A run of zeros (an idle line, ITM sync, orbflow delimiters) tells nothing: what follows it is
 * judged, with one zero kept as the delimiter before it. */
static size_t skip_zeros(const uint8_t **buf, size_t len)
{
    size_t zeros = detect_leading_zeros(*buf, len);
    if (zeros <= 1)
        return len;
    *buf += zeros - 1;
    return len - (zeros - 1);
}

enum detect_format detect_format(const uint8_t *buf, size_t len)
{
    if (len == 0)
        return DETECT_UNKNOWN;
    len = skip_zeros(&buf, len);
    if (len > DETECT_WINDOW)
        len = DETECT_WINDOW;
    size_t printable = 0, newlines = 0;
    for (size_t i = 0; i < len; i++) {
        uint8_t b = buf[i];
        if (b == '\n' || b == '\r')
            newlines++;
        if ((b >= 0x20 && b < 0x7F) || b == '\n' || b == '\r' || b == '\t')
            printable++;
    }
    /* all printable with no line end yet is text too: a boot banner longer than the window */
    if (printable * 100 >= len * 95 && (newlines > 0 || len < 80 || printable == len))
        return DETECT_TEXT;
    if (orbflow_detect(buf, len))
        return DETECT_ORBFLOW;
    for (size_t i = 0; i + 3 < len; i++)
        if (buf[i] == 0xFF && buf[i + 1] == 0xFF && buf[i + 2] == 0xFF && buf[i + 3] == 0x7F)
            return DETECT_TPIU;
    return DETECT_ITM;
}

enum detect_format detect_format_so_far(const uint8_t *buf, size_t len)
{
    enum detect_format f = detect_format(buf, len);
    const uint8_t *rest = buf;
    size_t n = skip_zeros(&rest, len);
    if (f == DETECT_ITM && n < DETECT_WINDOW && orbflow_possible(rest, n))
        return DETECT_UNKNOWN; /* ITM only because nothing else fits yet, and orbflow still may */
    return f;
}

size_t detect_leading_zeros(const uint8_t *buf, size_t len)
{
    size_t n = 0;
    while (n < len && buf[n] == 0)
        n++;
    return n;
}

const char *detect_name(enum detect_format f)
{
    switch (f) {
    case DETECT_TEXT:
        return "text";
    case DETECT_ITM:
        return "itm";
    case DETECT_TPIU:
        return "tpiu";
    case DETECT_ORBFLOW:
        return "orbflow";
    default:
        return "auto";
    }
}

int detect_parse(const char *name)
{
    static const char *const names[] = {"auto", "text", "itm", "tpiu", "orbflow"};
    for (int i = 0; i < 5; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}
