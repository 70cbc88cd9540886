/* RewriteGeneratedCodeTest: a program that makes code at run time, as a JIT does: an anonymous mapping made
 * executable by mmap, a store instruction written into it (mov %edi,(%rsi); ret) and called 1000 times. No
 * plan covers it, so rewrite mode runs it untraced and must say so. Exits 0 when the stores happened. */
#include <string.h>
#include <sys/mman.h>

static int cell;

int main(void)
{
    unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) return 2;
    static const unsigned char store[] = {0x89, 0x3e, 0xc3}; /* mov %edi,(%rsi); ret */
    memcpy(code, store, sizeof store);
    void (*f)(int, int *) = (void (*)(int, int *))code;
    for (int i = 1; i <= 1000; i++) f(i, &cell);
    return cell == 1000 ? 0 : 1;
}
