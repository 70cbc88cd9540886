/* comdat_sites.h: functions gcc puts in comdat groups (a template, an in-class method, a lambda in an inline
 * function), each with an overflow, instantiated by comdat_sites.cc and comdat_sites2.cc (the linker keeps one
 * copy). noinline: at -O2 they stay functions of their own, in their groups' sections. */
#include <cstdlib>

template <typename T> __attribute__((noinline)) void put(T *p, int n) {
    p[n] = 1; /* put */
}

namespace ns {
struct log {
    char line[6];
    __attribute__((noinline)) void add(int n) {
        for (int i = 0; i < n; i++) line[i] = 'a'; /* add */
    }
};
}

inline __attribute__((noinline)) void poke(int *p, int k) {
    auto set = [p](int i) __attribute__((noinline)) { p[i] = 7; }; /* lambda */
    set(k);
}

template <typename T> __attribute__((noinline)) T *make(int n) {
    return static_cast<T *>(malloc(n * sizeof(T))); /* make */
}

template <typename T> __attribute__((noinline)) void drop(T *p) {
    free(p); /* drop */
}
