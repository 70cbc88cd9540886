/* Threads fault mode cannot trace (issue 26): first a pthread (100 stores to data), then a thread made by
   a raw clone3 on an mmapped stack that stores 0..99 into data and exits. argv[1]: "shared" (the child
   keeps the parent's TLS) or "own" (CLONE_SETTLS with a block of its own, not glibc's). Prints "pthread ok",
   then "clone3 thread ok" or "clone3 failed: ERROR" (exit 3). */
#define _GNU_SOURCE
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>
#include <asm/prctl.h>
long data[100];
volatile int done;
static void *worker(void *arg) { for (int i = 0; i < 100; i++) data[i] = i; return arg; }
int main(int argc, char **argv) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    printf("pthread ok\n");
    fflush(stdout);
    char *stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    static uint64_t tlsblock[512];
    struct clone_args ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
    if (!strcmp(argv[1], "own")) { ca.flags |= CLONE_SETTLS; tlsblock[0] = (uint64_t)&tlsblock[256]; ca.tls = (uint64_t)&tlsblock[256]; }
    ca.stack = (uint64_t)stack;
    ca.stack_size = 1 << 16;
    long r;
    register long rax __asm__("rax") = SYS_clone3;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xor %%ecx, %%ecx\n"
                     "2:\n\t"
                     "movq %%rcx, data(,%%rcx,8)\n\t"
                     "inc %%rcx\n\t"
                     "cmp $100, %%rcx\n\t"
                     "jne 2b\n\t"
                     "movl $1, done(%%rip)\n\t"
                     "mov $60, %%eax\n\t"
                     "xor %%edi, %%edi\n\t"
                     "syscall\n"
                     "1:"
                     : "+a"(rax) : "D"(&ca), "S"(sizeof ca) : "rcx", "r11", "memory");
    r = rax;
    if (r < 0) { printf("clone3 failed: %s\n", strerror((int)-r)); return 3; }
    while (!done) sched_yield();
    printf("clone3 thread ok\n");
    return 0;
}
