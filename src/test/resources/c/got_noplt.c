/*
 * Built with -fno-plt, linked with got_other.c: a call of a libc function is `call *f@GOTPCREL(%rip)` (the GOT
 * slot read, then the return address pushed) and a tail call `jmp *f@GOTPCREL(%rip)` (the slot read); a call
 * of got_other.c's function, relaxed by the linker into `addr32 call got_local`, only pushes. Prints where
 * call_libc is, so a Lackey log can be placed.
 */
#include <stdio.h>
#include <string.h>

void *got_local(void);

char buffer[64] = "memtrace";
void *volatile sink;

__attribute__((noinline)) size_t call_libc(int i) { return strlen(buffer + i) + 1; }

__attribute__((noinline)) size_t tail_libc(int i) { return strlen(buffer + i); }

__attribute__((noinline)) void call_local(void) { sink = got_local(); }

int main(int argc, char **argv) {
    size_t s = 0;
    for (int i = 0; i < 3; i++) {
        s += call_libc(i);
        s += tail_libc(i);
        call_local();
    }
    if (argc > 1) printf("%p\n", (void *) call_libc);
    printf("%zu\n", s);
    return 0;
}
