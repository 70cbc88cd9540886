/* CWE-416: two handles share one buffer; closing the first frees it, the second still reads through its own
 * pointer. Twin: the buffer is freed when the last handle closes. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

struct handle { char *buf; int owns; };

static void close_handle(struct handle *h) { if (h->owns) free(h->buf); h->buf = NULL; }

static void run(int refcounted)
{
    char *data = malloc(32);
    strcpy(data, "shared payload");
    struct handle a = { data, !refcounted }, b = { data, refcounted };
    close_handle(&a);
    print_int(b.buf[7]); /* BAD */
    close_handle(&b);
}

void uaf_shared_buffer_bad(void) { run((int)opaque(0)); }
void uaf_shared_buffer_good(void) { run((int)opaque(1)); }
