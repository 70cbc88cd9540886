// C++ recall cases for `memtrace c++ --check` (CheckRecallTest), in the style of Juliet's CWE-762
// (mismatched memory management), CWE-415/416/590/401 with new and delete, and heap overflows of C++
// objects: `./recall NAME bad|good`, as recall.c. BAD marks the line a report must cite.
#include <alloca.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

volatile long sink;
void *volatile gone;

struct Pair { long a; char name[16]; };

__attribute__((noinline)) static void new_free(int n, int bad)
{
    int *p = new int(n);
    gone = p;
    sink = *p;
    if (bad) free(p); /* BAD:new_free */
    else delete p;
    sink = 0;
}

__attribute__((noinline)) static void new_array_free(int n, int bad)
{
    char *p = new char[n];
    gone = p;
    p[0] = 1;
    sink = p[0];
    if (bad) free(p); /* BAD:new_array_free */
    else delete[] p;
    sink = 0;
}

__attribute__((noinline)) static void new_delete_array(int n, int bad)
{
    long *p = new long(n);
    sink = *p;
    if (bad) delete[] p; /* BAD:new_delete_array */
    else delete p;
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void malloc_delete_array(int n, int bad)
{
    char *p = static_cast<char *>(malloc(n));
    p[0] = 1;
    sink = p[0];
    if (bad) delete[] p; /* BAD:malloc_delete_array */
    else free(p);
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void strdup_delete(int n, int bad)
{
    char *p = strdup("a string");
    sink = p[n % 8];
    if (bad) delete[] p; /* BAD:strdup_delete */
    else free(p);
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void realloc_delete(int n, int bad)
{
    char *p = static_cast<char *>(realloc(nullptr, n));
    p[0] = 2;
    sink = p[0];
    if (bad) delete p; /* BAD:realloc_delete */
    else free(p);
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void double_delete(int n, int bad)
{
    Pair *p = new Pair{n, "x"};
    gone = p;
    delete p;
    if (bad) delete static_cast<Pair *>(gone); /* BAD:double_delete */
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void double_delete_array(int n, int bad)
{
    int *p = new int[n];
    gone = p;
    delete[] p;
    if (bad) delete[] static_cast<int *>(gone); /* BAD:double_delete_array */
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void delete_stack(int n, int bad)
{
    Pair local{n, "y"};
    Pair *h = new Pair{n, "z"};
    sink = local.a;
    delete (bad ? &local : h); /* BAD:delete_stack */
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void delete_array_static(int n, int bad)
{
    static long table[8];
    long *h = new long[n];
    table[n % 8] = 1;
    delete[] (bad ? table : h); /* BAD:delete_array_static */
    sink = 0; // not a tail call: the report names this function
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void delete_array_alloca(int n, int bad)
{
    char *a = static_cast<char *>(alloca(n)), *h = new char[n];
    memset(a, 0, n);
    sink = a[1];
    delete[] (bad ? a : h); /* BAD:delete_array_alloca */
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void delete_middle(int n, int bad)
{
    int *p = new int[n];
    delete[] (p + bad); /* BAD:delete_middle */
    if (bad) delete[] p;
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void new_array_underflow(int n, int bad)
{
    int *p = new int[n];
    for (int i = 0; i < n; i++) p[i] = i;
    sink = p[-bad]; /* BAD:new_array_underflow */
    delete[] p;
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void object_memcpy_overflow(int n, int bad)
{
    Pair *p = new Pair{n, ""};
    char src[64];
    memset(src, 'A', sizeof src);
    memcpy(p->name, src, n + bad); /* BAD:object_memcpy_overflow */
    sink = p->name[0];
    delete p;
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void use_after_delete_array(int n, int bad)
{
    long *p = new long[n];
    gone = p;
    p[1] = n;
    if (bad) delete[] p;
    sink = p[1]; /* BAD:use_after_delete_array */
    if (!bad) delete[] p;
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void string_strcpy_overflow(int n, int bad)
{
    std::string s(n - 1 + bad, 'q');
    char *p = new char[n];
    strcpy(p, s.c_str()); /* BAD:string_strcpy_overflow */
    sink = p[0];
    gone = p;
    delete[] static_cast<char *>(gone);
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void leak_new(int n, int bad)
{
    Pair *p = new Pair{n, "leak"};
    sink = p->a;
    gone = p;
    gone = nullptr;
    if (!bad) delete p;
    sink = 0; // no tail call: reports name the case's function
}

__attribute__((noinline)) static void leak_new_array(int n, int bad)
{
    wchar_t *p = new wchar_t[n];
    p[0] = L'a';
    sink = p[0];
    gone = p;
    gone = nullptr;
    if (!bad) delete[] p;
    sink = 0; // no tail call: reports name the case's function
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    int bad = argc > 2 && std::strcmp(argv[2], "bad") == 0, n = argc > 3 ? std::atoi(argv[3]) : 16;
    struct { const char *name; void (*run)(int, int); } cases[] = {
#define C(f) {#f, f}
        C(new_free), C(new_array_free), C(new_delete_array), C(malloc_delete_array), C(strdup_delete),
        C(realloc_delete), C(double_delete), C(double_delete_array), C(delete_stack), C(delete_array_static),
        C(delete_array_alloca), C(delete_middle), C(new_array_underflow), C(object_memcpy_overflow),
        C(use_after_delete_array), C(string_strcpy_overflow), C(leak_new), C(leak_new_array),
#undef C
    };
    if (std::strcmp(argv[1], "list") == 0) {
        for (auto &c : cases) std::printf("%s\n", c.name);
        return 0;
    }
    for (auto &c : cases) {
        if (std::strcmp(c.name, argv[1]) == 0) {
            c.run(n, bad);
            std::printf("done\n");
            return 0;
        }
    }
    return 2;
}
