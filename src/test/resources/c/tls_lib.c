/* Thread-local variables reached through __tls_get_addr when built -fPIC: tls_counter in the general-dynamic
 * model (one call per access sequence), the two statics in the local-dynamic model (one call for both). */
__thread int tls_counter = 5;
static __thread int tls_a, tls_b;

int get_gd(int n) {
    tls_counter += n;
    return tls_counter;
}

int bump_ld(int n) {
    tls_a += n;
    tls_b += tls_a;
    return tls_a + tls_b;
}
