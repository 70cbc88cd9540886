/* rc.h: what every case of bench/check-recall shares. Output and opaque helpers live in rc_io.c, another
 * translation unit, so gcc -O2 cannot see through them and keeps every access a case makes. A case file
 * defines bad() (one bug) and good() (its twin, which must stay silent and print what the plain build
 * prints); RC_MAIN runs `./case bad` or `./case good` and prints "done". */
#ifndef RC_H
#define RC_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
void rc_sum(const void *p, size_t n);   /* prints a checksum of n bytes */
void rc_int(long v);                    /* prints v */
size_t rc_n(size_t n);                  /* n, unknown to the compiler */
void *rc_p(void *p);                    /* p, unknown to the compiler */
void rc_keep(void *p);                  /* stores p in a global (reachable until rc_drop) */
void rc_drop(void);                     /* forgets the pointer rc_keep stored */
int rc_pipe(size_t n);                  /* the read end of a pipe holding n bytes 'P' */
int rc_main(int argc, char **argv, void (*bad)(void), void (*good)(void));
#ifdef __cplusplus
}
#endif
#define RC_MAIN \
    int main(int argc, char **argv) { return rc_main(argc, argv, bad, good); }
#endif
