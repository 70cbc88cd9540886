/* CWE-122: a rows x cols matrix in one block, indexed [r * cols + c] with c up to cols inclusive: the last
 * row's last write is one element past the block. Twin: c < cols. */
#include <stdlib.h>
#include "corpus.h"

static void fill(size_t rows, size_t cols, size_t cmax)
{
    double *m = malloc(rows * cols * sizeof *m);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cmax; c++)
            m[r * cols + c] = (double)(r + c); /* BAD */
    print_bytes(m, rows * cols * sizeof *m);
    free(m);
}

void heap_2d_index_bad(void) { fill(opaque(5), opaque(6), opaque(7)); }
void heap_2d_index_good(void) { fill(opaque(5), opaque(6), opaque(6)); }
