/*
 * rw_adv_throw.cc: C++ exceptions thrown through rewritten code other than the program's own recursion, for
 * memtrace run --mode rewrite (RewriteAdversarialTest): out of a qsort comparator, through libc's rewritten
 * qsort frames; out of std::sort's comparator; through calls made by `call *table(,%rax,8)`; and rethrown
 * from a catch block. Each Guard's destructor counts itself in `destroyed`; prints the counts.
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

long destroyed, compares;
int keys[256];

struct Guard {
    ~Guard() { destroyed = destroyed + 1; }
};

extern "C" int by_value(const void *a, const void *b)
{
    Guard g;
    if (++compares % 97 == 0) throw std::runtime_error("from qsort");
    return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) long level(int n);
long (*table[2])(int) = {level, level};

__attribute__((noinline)) long level(int n)
{
    Guard g;
    if (n == 0) throw n;
    return table[n & 1](n - 1) + 1;
}

int main()
{
    long caught = 0;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 256; i++) keys[i] = (i * 7919 + round) % 1000;
        try { qsort(keys, 256, sizeof keys[0], by_value); } catch (const std::runtime_error &) { caught++; }
        try {
            std::sort(keys, keys + 256, [](int a, int b) { Guard g; if (++compares % 89 == 0) throw 1.5; return a < b; });
        } catch (double) { caught++; }
        try {
            try { level(30); } catch (int) { caught++; throw; }
        } catch (int) { caught++; }
    }
    std::printf("caught %ld destroyed %ld compares %ld\n", caught, destroyed, compares);
    return 0;
}
