// C++ bug cases for `memtrace c++ --check` (CheckCasesTest): `./cases NAME bad|good`, as cases.c.
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

volatile long sink;

__attribute__((noinline)) static void malloc_delete(int n, int bad)
{
    int *p = static_cast<int *>(malloc(n * sizeof(int))); /* ALLOC:malloc_delete */
    p[0] = 1;
    sink = p[0];
    if (bad) delete p; /* BAD:malloc_delete */
    else free(p);
}

__attribute__((noinline)) static void array_delete(int n, int bad)
{
    int *p = new int[n]; /* ALLOC:array_delete */
    p[0] = 1;
    sink = p[0];
    if (bad) delete p; /* BAD:array_delete */
    else delete[] p;
}

__attribute__((noinline)) static void new_overflow(int n, int bad)
{
    int *p = new int[n]; /* ALLOC:new_overflow */
    p[n - 1 + bad] = 1; /* BAD:new_overflow */
    sink = p[0];
    delete[] p;
}

struct Node { long value; Node *next; };

__attribute__((noinline)) static void use_after_delete(int n, int bad)
{
    Node *a = new Node{n, nullptr}; /* ALLOC:use_after_delete */
    Node *b = a;
    if (bad) delete a; /* FREE:use_after_delete */
    sink = b->value; /* BAD:use_after_delete */
    if (!bad) delete a;
}

__attribute__((noinline)) static void vector_overflow(int n, int bad)
{
    std::vector<int> v(n); /* ALLOC:vector_overflow */
    int *data = v.data();
    data[n - 1 + bad] = 3; /* BAD:vector_overflow */
    sink = v[0];
}

// The three below allocate or free inside libstdc++ (its templates, or libstdc++.so itself for std::string):
// the report names the user's line that called into it (docs/check.md, "Sites in the user's code").
__attribute__((noinline)) static void string_overflow(int n, int bad)
{
    std::string s(n + 20, 'x'); /* ALLOC:string_overflow */
    char *data = &s[0];
    data[n + 20 + bad] = 'y'; /* BAD:string_overflow */
    sink = data[0];
}

__attribute__((noinline)) static void unique_ptr_uaf(int n, int bad)
{
    std::unique_ptr<int[]> p = std::make_unique<int[]>(n); /* ALLOC:unique_ptr_uaf */
    int *raw = p.get();
    if (bad) p.reset(); /* FREE:unique_ptr_uaf */
    sink = raw[0]; /* BAD:unique_ptr_uaf */
}

__attribute__((noinline)) static void vector_stale(int n, int bad)
{
    std::vector<int> v(n); /* ALLOC:vector_stale */
    int *first = v.data();
    if (bad) v.push_back(1); /* FREE:vector_stale */
    sink = first[0]; /* BAD:vector_stale */
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int bad = std::strcmp(argv[2], "bad") == 0, n = argc > 3 ? std::atoi(argv[3]) : 16;
    std::string name = argv[1];
    if (name == "malloc_delete") malloc_delete(n, bad); /* BAD:malloc_delete_tail */
    else if (name == "array_delete") array_delete(n, bad); /* BAD:array_delete_tail */
    else if (name == "new_overflow") new_overflow(n, bad);
    else if (name == "use_after_delete") use_after_delete(n, bad);
    else if (name == "vector_overflow") vector_overflow(n, bad);
    else if (name == "string_overflow") string_overflow(n, bad);
    else if (name == "unique_ptr_uaf") unique_ptr_uaf(n, bad);
    else if (name == "vector_stale") vector_stale(n, bad);
    else return 2;
    std::printf("done\n");
    return 0;
}
