/* The bytes of a stream's lines that name tasks, found by a walk of each line in its version
 * (docs/stream.md): for the tests that bound the names' share of a stream (test_stream_load.c,
 * test_zephyr.c). Header-only: each test includes it once. */
#ifndef CMPROF_TEST_WIRE_NAMES_H
#define CMPROF_TEST_WIRE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline size_t b64_value(char c)
{
    const char *p = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", c);
    return p && c ? (size_t)(p - "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") : 0;
}

/* A task index in base64 at s[i] (version 2 to 6 '=' entries' index): 1 or 3 chars. */
static inline size_t index_len(const char *s, size_t i)
{
    return s[i] == '+' ? 3u : 1u;
}

/* A sample's tag at s[i]: its length. Versions 2 to 5: every sample has one (an index, '-' and 2
 * chars of an exception, '/'); version 6 (tag6): one char of 19, a leader and one, '+' and 2, '-'
 * and 2, '/', or none (the sample before it's: the next char is a PC's); version 7 below. */
static inline size_t tag_len(uint32_t version, const char *s, size_t i)
{
    if (version >= 7) { /* one char of 37, '}' and one, '+' and 2, '-' and 1, '~' and 2, '/', or none */
        if (s[i] && strchr("0123456789:;<>\"#$%&'(),opqrstuvwxyz{|/", s[i]))
            return 1;
        return s[i] == '}' || s[i] == '-' ? 2u : s[i] == '+' || s[i] == '~' ? 3u : 0u;
    }
    if (s[i] == '-' || s[i] == '+')
        return 3;
    if (version < 6)
        return 1;
    if (s[i] && strchr("0123456789:;<>\"#$%&/", s[i]))
        return 1;
    return s[i] && strchr("'(),", s[i]) ? 2u : 0u;
}

/* A sample's PC at s[i]: versions 2 to 5, 4 chars or '*' and 6; version 6, 3, '.' and 4, '*' and 6;
 * version 7 as 6, or 2 from 'O' to 'n' (a page hit). */
static inline size_t pc_len(uint32_t version, const char *s, size_t i)
{
    if (s[i] == '*')
        return 7;
    if (version >= 7 && s[i] >= 'O' && s[i] <= 'n') /* a page the host has: its slot, the offset */
        return 2;
    if (version >= 6)
        return s[i] == '.' ? 5u : 3u;
    return 4;
}

/* A '=' entry at s[i] (after the '='): version 3 and 4, the index, 6 chars of tag, the name's length
 * and it; version 5 on, the index (none from version 7), a head of 2 (0x800: a tag of 6 follows,
 * 0x400: the name's length and it; version 7: or 32 + the chars shared with the line's last name,
 * the rest's length and it). Its length. */
static inline size_t def_len(uint32_t version, const char *s, size_t i)
{
    size_t len = version >= 7 ? 0u : index_len(s, i); /* version 7: no index (the next sample's tag) */
    if (version >= 8 && s[i] == '=') /* version 8: the index's last name inside, numbered: 3 chars */
        return 3u + def_len(version, s, i + 3u);
    if (version >= 8 && s[i] && strchr("#$%&'()*,-.:;<>?@[]^_`{|}~", s[i])) /* numbered: 2 chars */
        return 2u;
    if (version < 5)
        return len + 6u + 1u + b64_value(s[i + len + 6u]);
    size_t head = b64_value(s[i + len]) << 6 | b64_value(s[i + len + 1u]);
    len += 2u + (head & 0x800u ? 6u : 0u);
    if ((head & 0x400u) && version >= 7 && b64_value(s[i + len]) >= 32u) /* front-coded: shared, rest */
        return len + 2u + b64_value(s[i + len + 1u]);
    return len + (head & 0x400u ? 1u + b64_value(s[i + len]) : 0u);
}

/* The bytes of a line that are names, in the stream version of the last announce before it: all of
 * an @task or @N line (new names, and names repeated), the '=' entries of a sample line, of a
 * reservoir's '&' group line too (new names given where their samples begin). *exact: the walk of a
 * sample line ended right at its "!CC" (a walker that misreads the line's items cannot). */
static inline size_t name_bytes(uint32_t version, const char *s, size_t n, bool *exact)
{
    *exact = true;
    if ((n > 6 && memcmp(s, "@task ", 6) == 0) || (n > 2 && memcmp(s, "@N", 2) == 0))
        return n;
    size_t i = s[0] == '&' ? 8u : 0u; /* '&', taken (5), kept (2), then the sample line */
    if (n < i + 5u || s[i] != '%')
        return 0;
    size_t named = 0, body_end = n - 4u; /* up to the "!CC\n" */
    for (i += version >= 7 ? 3u : 1u; i < body_end;) { /* version 7: the line's number, 2 chars */
        if (s[i] == '=') {
            size_t len = 1u + def_len(version, s, i + 1u);
            named += len;
            i += len;
            continue;
        }
        i += tag_len(version, s, i);
        i += pc_len(version, s, i);
    }
    *exact = i == body_end && s[body_end] == '!';
    return named;
}

/* The stream version an announce line gives, or `version` for any other line. */
static inline uint32_t version_after(uint32_t version, const char *s, size_t n)
{
    if (n > 11 && memcmp(s, "@cmprof v=", 10) == 0)
        return (uint32_t)(s[10] - '0');
    return version;
}

#endif
