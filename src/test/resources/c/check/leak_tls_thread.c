/* A block whose only pointer is the __thread variable of a thread still running at exit: reachable, as
 * LeakSanitizer takes every live thread's TLS for a root. With "gone", the twin: the thread drops the pointer,
 * and the block is a leak (RunCheckTlsRootsTest, in cc --check and both modes of run --check).
 * main allocates and hands the pointer over hidden (xor), so no stale copy of it is left in the thread's stack
 * or registers: what keeps it is the TLS variable alone. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HIDE 0x5a5a5a5a5a5a5a5aUL

__thread char *kept;            /* extern: gcc -O2 keeps a store it cannot see unread */
static volatile uintptr_t handoff;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready, gone;

__attribute__((noinline)) static void give(void)
{
    char *p = malloc(24);
    memset(p, 1, 24);
    handoff = (uintptr_t)p ^ HIDE;
}

__attribute__((noinline)) static void adopt(void)
{
    uintptr_t v = handoff ^ HIDE;
    if (!gone) kept = (char *)v;
    handoff = 0;
}

/* stale copies of the pointer in dead frames would keep the block reachable */
__attribute__((noinline)) static void scrub(void)
{
    char junk[16384];
    memset(junk, 0, sizeof junk);
    __asm__ volatile("" : : "r"(junk) : "memory");
}

static void *work(void *arg)
{
    adopt();
    scrub();
    pthread_mutex_lock(&lock);
    ready = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    for (;;) pause();           /* still running when main returns */
    return arg;
}

int main(int argc, char **argv)
{
    gone = argc > 1 && strcmp(argv[1], "gone") == 0;
    give();
    scrub();
    pthread_t t;
    if (pthread_create(&t, NULL, work, NULL) != 0) return 1;
    pthread_mutex_lock(&lock);
    while (!ready) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    printf("done\n");
    return 0;
}
