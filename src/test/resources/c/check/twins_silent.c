/* Correct code in shapes that once made the checker report (issue 23's false-positive hunt: public suites'
 * no-defect twins and real programs' test suites). Every case must run silently under memtrace cc --check at
 * -O0 and -O2 and print what the plain build prints. `./twins_silent CASE` runs one case, no argument all.
 *
 * scope_pair: two structs declared in a loop body, each addressed by a call (so they live in gcc's ASan
 * frame, based at %rbx, not %rsp), their fields written at constant offsets one after the other. The second's
 * scope starts (gcc unpoisons its shadow) between the two groups of stores; a group check of all four stores
 * at the first one found the second struct still out of scope ("stack use after scope", xz's
 * tests/test_filter_flags.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t id; void *options; } filter;
typedef struct { uint32_t start; } offset_options;
static const uint64_t filter_ids[] = {4, 5, 6, 7, 9};

__attribute__((noinline)) static void decode(const filter *in, filter *out) {
    out->id = in->id;
    if (in->options) {
        offset_options *o = malloc(sizeof *o);
        *o = *(const offset_options *)in->options;
        out->options = o;
    } else {
        out->options = NULL;
    }
}

static unsigned long scope_pair(void) {
    unsigned long sum = 0;
    for (unsigned i = 0; i < sizeof filter_ids / sizeof filter_ids[0]; i++) {
        if (filter_ids[i] & 1) {
            filter decoded = {filter_ids[i], NULL};
            filter encoded = {filter_ids[i], NULL};
            decode(&encoded, &decoded);
            sum += decoded.options == NULL;
            offset_options o = {.start = 257};
            encoded.options = &o;
            decode(&encoded, &decoded);
            offset_options *d = decoded.options;
            sum += d->start;
            free(d);
        }
    }
    return sum;
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    if (!only || !strcmp(only, "scope_pair")) printf("scope_pair %lu\n", scope_pair());
    return 0;
}
