/*
 * rw_adv_ctorlib.c: a library the program is linked with (not opened by dlopen) whose constructor starts two
 * threads, for memtrace run --mode rewrite (RewriteAdversarialTest). Natively its constructor runs before
 * any LD_PRELOAD library's, so the threads exist before memtrace's runtime rewrites the code: `spinner`
 * loops in this library's code, loading `go` and counting, until lib_finish sets it; `waiter` blocks in
 * libc's read until lib_finish writes to its pipe, then stores lib_data[0..1000) with fill_lib. lib_finish
 * joins both and returns the sum of lib_data (1000 * 999 / 2 * 3 = 1498500) plus 1 when the spinner spun.
 */
#include <pthread.h>
#include <unistd.h>

long lib_data[1000];
volatile int go;
volatile long spins;
static pthread_t spinner_thread, waiter_thread;
static int go_pipe[2];

__attribute__((noinline)) void fill_lib(long *a, long k)
{
    for (long i = 0; i < 1000; i++) a[i] = i * k;
}

static void *spinner(void *arg)
{
    (void)arg;
    while (!go) spins = spins + 1;
    return 0;
}

static void *waiter(void *arg)
{
    (void)arg;
    char c;
    if (read(go_pipe[0], &c, 1) == 1) fill_lib(lib_data, 3);
    return 0;
}

__attribute__((constructor)) static void start(void)
{
    if (pipe(go_pipe) != 0) return;
    pthread_create(&spinner_thread, 0, spinner, 0);
    pthread_create(&waiter_thread, 0, waiter, 0);
    while (spins == 0) usleep(100); /* the spinner runs before the constructor returns */
}

long lib_finish(void)
{
    go = 1;
    if (write(go_pipe[1], "g", 1) != 1) return -1;
    pthread_join(spinner_thread, 0);
    pthread_join(waiter_thread, 0);
    long s = 0;
    for (int i = 0; i < 1000; i++) s += lib_data[i];
    return s + (spins > 0);
}
