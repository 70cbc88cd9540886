/* Structure clearing and copying that gcc -Os compiles to rep stosl and rep movsl. */
struct big { int a[100]; };
struct big g1, g2;

__attribute__((noinline)) void clear(struct big *b) { *b = (struct big){0}; }
__attribute__((noinline)) void copy(struct big *d, const struct big *s) { *d = *s; }

/* Reading g1 between the calls keeps gcc from dropping clear as a dead store. */
int main(void) { g1.a[9] = 4; g2.a[5] = 3; clear(&g1); int z = g1.a[9]; copy(&g1, &g2); return g1.a[5] + z; }
