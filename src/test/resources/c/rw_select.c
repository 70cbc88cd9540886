/* Functions with several blocks of field and array accesses, for comparing the rewriter's selection with
   memtrace analyze's on the same object. */
struct rec { long key; int a, b, c, d; struct rec *next; double w[4]; };

long mix(struct rec *r, const int *q, int n) {
    long s = 0;
    for (int i = 0; i + 3 < n; i += 4) {
        s += q[i] * r->a + q[i + 1] * r->b + q[i + 2] * r->c + q[i + 3] * r->d;
        if (s > r->key) { r->key = s; r->next->a += q[i]; }
        r->w[i & 3] += (double) q[i + 1];
    }
    return s + r->next->b + r->next->c;
}

int chain(struct rec *r) {
    int t = 0;
    while (r) { t += r->a - r->b + r->c * r->d; r->b = t; r = r->next; }
    return t;
}
