/* corpus.h: what every case of the bug corpus shares (as Juliet's std_testcase.h and io.c): output helpers
 * defined in corpus_io.c, another translation unit, so gcc -O2 cannot see through them and keeps every access
 * a case makes. Each case file defines NAME_bad() (the bug) and NAME_good() (its twin, which must stay silent
 * and print what the plain build prints); main.c runs one of them by name. */
#ifndef CORPUS_H
#define CORPUS_H
#include <stddef.h>
#include <wchar.h>
#ifdef __cplusplus
extern "C" {
#endif
void print_line(const char *s);
void print_wline(const wchar_t *s);
void print_int(long v);
void print_bytes(const void *p, size_t n);   /* a checksum of the bytes, one line */
size_t opaque(size_t n);                      /* n, unknown to the compiler */
void *opaque_ptr(void *p);                    /* p, unknown to the compiler */
#ifdef __cplusplus
}
#endif
#endif
