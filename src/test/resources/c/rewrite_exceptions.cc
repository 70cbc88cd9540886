/* Rewrite mode and C++ exceptions: an exception thrown 20 frames deep, 100 times, unwinds through rewritten
 * frames whose recursive calls are emulated by their trampolines (RewriteRunTest). */
#include <cstdio>
#include <stdexcept>
long depth_sum[64];
__attribute__((noinline)) long dive(int n) {
    depth_sum[n] = depth_sum[n] + n * 7L;
    if (n == 0) throw std::runtime_error("bottom");
    long r = dive(n - 1);
    depth_sum[n + 1] = r;
    return r + 1;
}
int main() {
    long caught = 0;
    for (int round = 0; round < 100; round++) {
        try { dive(20); } catch (const std::exception &e) { caught++; }
    }
    std::printf("%ld %ld\n", caught, depth_sum[10]);
    return 0;
}
