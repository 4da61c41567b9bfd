/* Bytes in, profile out: detects the stream format (or takes it as given), runs the matching
 * decoder chain and feeds its events to the profile model. Shared by batch mode and the TUI. */
#ifndef CMPROF_INGEST_H
#define CMPROF_INGEST_H

#include "../decode/detect.h"
#include "../decode/itm.h"
#include "../decode/text.h"
#include "../decode/tpiu.h"
#include "profile.h"

struct ingest {
    struct prof *prof;
    enum detect_format format; /* DETECT_UNKNOWN until decided */
    uint8_t pending[DETECT_WINDOW];
    size_t n_pending;
    struct text_decoder text;
    struct itm_decoder itm;
    struct tpiu_decoder tpiu;
    struct ev_sink sink;
    uint64_t pc_samples, buckets, logs, sections;
};

/* format: DETECT_UNKNOWN to detect from the first bytes. tpiu_id: the ITM source in TPIU frames. */
void ingest_init(struct ingest *in, struct prof *prof, enum detect_format format, uint8_t tpiu_id, bool wait_sync);
void ingest_feed(struct ingest *in, const uint8_t *buf, size_t len);
/* End of input: decide the format if still undecided and flush the decoders. */
void ingest_finish(struct ingest *in);
void ingest_free(struct ingest *in);

#endif
