// demangle.cc: a C++ heap overflow in a member function, for the C++ names of check reports
// (CheckOutputTest, RunCheckTest): the report names Foo::bar(int) and the block Foo::Foo(int)'s.
// ./demangle bad: bar writes one int past the 4 its object holds; ./demangle good: it writes the last one.
#include <cstdio>
#include <cstring>

struct Foo {
    int *data;
    explicit Foo(int n);
    ~Foo();
    void bar(int i);
};

__attribute__((noipa)) Foo::Foo(int n) : data(new int[n]) {} /* ALLOC */

Foo::~Foo() { delete[] data; }

__attribute__((noipa)) void Foo::bar(int i)
{
    data[i] = i; /* BAD */
}

int main(int argc, char **argv)
{
    int bad = argc > 1 && std::strcmp(argv[1], "bad") == 0;
    Foo f(4);
    f.bar(bad ? 4 : 3);
    std::printf("done %d\n", f.data[3]);
    return 0;
}
