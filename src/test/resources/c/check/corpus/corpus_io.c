/* corpus_io.c: the corpus's output helpers (corpus.h). Built like the cases (checked or not). */
#include <stdio.h>
#include "corpus.h"

void print_line(const char *s) { printf("%s\n", s); }
void print_wline(const wchar_t *s) { printf("%ls\n", s); }
void print_int(long v) { printf("%ld\n", v); }
void print_bytes(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    unsigned long sum = 0;
    for (size_t i = 0; i < n; i++) sum = sum * 31 + b[i];
    printf("%zu bytes, sum %lx\n", n, sum);
}
size_t opaque(size_t n) { return n; }
void *opaque_ptr(void *p) { return p; }
