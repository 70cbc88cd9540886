// C++ inlined frames with their names demangled (CheckInlinedFramesTest): at -O2 g++ inlines store::put and
// store::put_last into main. Markers name the lines the test expects.
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace store {
struct Buf { char *data; int n; };

inline void put(Buf &b, int i, char v)
{
    b.data[i] = v; /* CXX_PUT */
}

inline void put_last(Buf &b)
{
    put(b, b.n, 'x'); /* CXX_PUT_LAST */
}
}

int main(int argc, char **argv)
{
    store::Buf b{new char[16], argc > 2 ? atoi(argv[2]) : 16};
    if (argc > 1 && strcmp(argv[1], "overflow") == 0) store::put_last(b); /* CXX_MAIN */
    else store::put(b, b.n - 1, 'y');
    printf("%d\n", b.data[b.n - 1]);
    delete[] b.data;
    return 0;
}
