/* Unit B: a large array, a static table and static locals, with the globals of unit A. */
#include "exact.h"

double weights[512];
char names[16][32] = {"alpha", "beta", "gamma"};
static double scale[3] = {0.5, 1.5, 2.5};
static long big[4096];

double blend(int n) {
    static int calls;
    static double memo = 1.0;
    double s = 0;
    calls++;
    for (int i = 0; i < n; i++) {
        weights[i & 511] = scale[i % 3] * counts[i & 63];
        big[(i * 17) & 4095] += (long) weights[(i + 1) & 511];
        s += weights[i & 511] + big[4095] + big[0] + memo + names[i & 15][i & 31];
        total += calls;
    }
    memo = s / (n + 1);
    return s + big[2048] + weights[511] + scale[2];
}
