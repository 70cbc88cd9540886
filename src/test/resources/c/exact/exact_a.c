/* Unit A: globals the other units use, statics of its own far apart and near each other. */
#include "exact.h"

int counts[64];
long total;
static int seen[8192];
static int hits;
static short small[4] = {1, 2, 3, 4};
static int last_value;

void tally(int n) {
    for (int i = 0; i < n; i++) {
        int k = (i * 7) & 63;
        counts[k]++;
        seen[(i * 131) & 8191] += counts[k];
        hits += small[i & 3];
        total += seen[4000] + seen[12] + counts[63] + hits;
        last_value = k;
    }
    seen[8191] = last_value + small[1];
}
