/*
 * rewrite_dlopen_lib.c: the library RewriteDlopenTest opens by dlopen, built as several libraries with
 * -DTAG=a, -DTAG=b (-DPAD: a function before the others, so its code lies elsewhere), -DCTOR (a
 * constructor that fills data[0..500)) and -DCTOR_THREAD (a constructor that starts a thread which fills
 * data[0..500), joined before dlopen returns). fill(n) stores
 * data[0..n), sum(n) loads it: fill_TAG and sum_TAG make one store or load per element and one load of
 * data's GOT slot per call (-O1 -fPIC).
 */
#ifdef CTOR_THREAD
#include <pthread.h>
#endif
#define JOIN(a, b) JOIN2(a, b)
#define JOIN2(a, b) a##_##b

long data[1000];

#ifdef PAD
__attribute__((noinline)) long pad(long x) { return x * 7 + (x >> 3) - (x << 5) + data[x & 7]; }
#endif

__attribute__((noinline)) void JOIN(fill, TAG)(long n) { for (long i = 0; i < n; i++) data[i] = i * SCALE; }
__attribute__((noinline)) long JOIN(sum, TAG)(long n) { long s = 0; for (long i = 0; i < n; i++) s += data[i]; return s; }

void fill(long n) { JOIN(fill, TAG)(n); }
long sum(long n) { return JOIN(sum, TAG)(n); }

#ifdef CTOR
__attribute__((constructor)) static void start(void) { JOIN(fill, TAG)(500); }
#endif

#ifdef CTOR_THREAD
static void *worker(void *arg) { JOIN(fill, TAG)((long)arg); return 0; }

__attribute__((constructor)) static void start(void)
{
    pthread_t t;
    if (pthread_create(&t, 0, worker, (void *)500L) == 0) pthread_join(t, 0);
}
#endif
