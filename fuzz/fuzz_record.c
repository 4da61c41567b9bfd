/* libFuzzer target: --record's promise, "replaying it gives the same profile". The input is what
 * a source delivered; the live loop's side feeds it in the pieces a source would, settles the
 * format at a pause as the loop does, and reports; the replay is batch_main on the recording as a
 * file, the path the tool takes for a file source. The recording may be cut anywhere (the tool
 * killed, a full disk): both sides then see the cut bytes. The JSON reports must match whenever
 * both told the same format (a pause can make the live side decide on fewer bytes); a replay that
 * finds no samples must say so in one line. fuzz_ingest covers the decoders and reports on their
 * own; this one covers detection from a recording's start, batch_main, and the live/replay match. */
#include "../app/batch.h"
#include "../profile/ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A scenario ELF for names (FUZZ_ELF, or the one fuzz.sh uses); batch_main needs one. */
static const char *elf_path(void)
{
    const char *elf = getenv("FUZZ_ELF");
    return elf ? elf : "build/scenarios/m3_loops/fw.elf";
}

struct shape {
    struct batch_options o;
    size_t piece, pause; /* pieces the source delivers; the byte count at the first pause */
};

static char *live_report(const struct shape *s, const uint8_t *data, size_t size, enum detect_format *told)
{
    static struct sym_table *syms; /* the live loop opens its ELF once (batch_main each time) */
    char err[256], *text = NULL;
    size_t len;
    if (!syms && !(syms = sym_open(s->o.elf, err, sizeof err))) { /* not the input's fault */
        fprintf(stderr, "fuzz_record: %s (set FUZZ_ELF to a scenario ELF)\n", err);
        exit(1);
    }
    struct prof *p = prof_new(syms);
    struct ingest_options io = {.format = s->o.format, .tpiu_id = s->o.tpiu_id, .wait_sync = s->o.wait_sync};
    struct ingest *in = p ? ingest_new(p, &io) : NULL;
    if (!in)
        abort();
    for (size_t off = 0; off < size; off += s->piece) {
        size_t n = size - off < s->piece ? size - off : s->piece;
        ingest_feed(in, data + off, n);
        if (off < s->pause && off + n >= s->pause)
            ingest_settle(in); /* the source closed, or the format waited long enough */
    }
    ingest_finish(in);
    *told = ingest_format(in);
    FILE *f = open_memstream(&text, &len);
    char why[200];
    batch_report(&s->o, p, in, sym_warning(syms), f, why, sizeof why);
    fclose(f);
    ingest_free(in);
    prof_free(p);
    return text;
}

static char *replay_report(struct shape *s, const uint8_t *data, size_t size, int *status, char **err_text)
{
    char path[64], *text = NULL;
    size_t len, err_len;
    int fd = memfd_create("recording", 0);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
        abort();
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    s->o.source = path;
    FILE *out = open_memstream(&text, &len), *err = open_memstream(err_text, &err_len);
    *status = batch_main(&s->o, out, err);
    fclose(out);
    fclose(err);
    close(fd);
    return text;
}

/* A replay that found no samples: its last line says so, and any before it are warnings. */
static int one_line_reason(const char *err)
{
    const char *line = err, *nl;
    for (; (nl = strchr(line, '\n')) && nl[1]; line = nl + 1)
        if (strncmp(line, "cmprof-top: warning: ", 21) != 0)
            return 0;
    return nl && strncmp(line, "cmprof-top: no samples in '", 27) == 0;
}

static void broken(const char *promise, const char *live, const char *replay, const char *err)
{
    fprintf(stderr, "fuzz_record: %s\n--- live:\n%s\n--- replay:\n%s\n--- replay's errors:\n%s\n", promise, live,
            replay, err);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    struct shape s = {.o = {.elf = elf_path(), .output = OUT_JSON}};
    s.o.format = (enum detect_format)(data[0] % 8 < 5 ? data[0] % 8 : 0); /* auto, more often */
    s.o.tpiu_id = (uint8_t)(1 + (data[0] >> 3 & 1));
    s.o.wait_sync = data[0] >> 4 & 1;
    s.piece = data[1] ? (size_t)data[1] * 17u : 1u;
    data += 4, size -= 4;
    s.pause = data[-2] == 0xFF ? (size_t)-1 : size * data[-2] / 255u; /* 0xFF: no pause */
    size_t cut = size * data[-1] / 255u; /* 0xFF: the whole recording */
    enum detect_format told;
    int status;
    char *err = NULL, *live = live_report(&s, data, cut, &told);
    char *replay = replay_report(&s, data, cut, &status, &err);
    if ((status != 0 && status != 2 && status != 5) || (status == 2 && !one_line_reason(err)))
        broken("no samples: exit 2 and one line that says why, nothing else", live, replay, err);
    if (status == 5 && !strstr(replay, "\"wrong_elf\": true")) /* 5: samples not the ELF's program (host.md) */
        broken("exit 5 only for a report that says wrong_elf", live, replay, err);
    /* the replay's own format: the report names it as "format": "..." */
    char want[40];
    snprintf(want, sizeof want, "\"format\": \"%s\"", detect_name(told));
    if (strstr(replay, want) && strcmp(live, replay) != 0)
        broken("the same bytes, the same format, another profile", live, replay, err);
    free(live);
    free(replay);
    free(err);
    return 0;
}
