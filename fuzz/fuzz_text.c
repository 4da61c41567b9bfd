/* libFuzzer target: the text decoder alone (dump lines and checked live-stream lines), fed whole
 * and then split at a point the input chooses; both runs must give the same events. */
#include "text_digest.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t cut = (size_t)data[0] * 257u % size;
    struct digest whole = text_digest(data + 1, size - 1, size - 1);
    struct digest split = text_digest(data + 1, size - 1, cut < size - 1 ? cut : 0);
    if (whole.h != split.h || whole.n != split.n)
        abort(); /* chunk invariance broken */
    return 0;
}
