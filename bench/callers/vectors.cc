// The worst case of check_callers.c (bench/check-callers.sh): every allocation and free is made by libstdc++'s
// templates, so each walks its callers to the program's own frame.
#include <cstdio>
#include <vector>

int main()
{
    long total = 0;
    for (int round = 0; round < 200000; round++) {
        std::vector<int> v(8 + round % 8);
        v[0] = round;
        total += v[0] + (long)v.size();
    }
    std::printf("total %ld\n", total);
    return 0;
}
