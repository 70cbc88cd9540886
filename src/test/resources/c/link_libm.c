/* malloc, sqrt from -lm and printf: CcLinkOrderTest links it with -lm -lc after the source. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) { double *d = malloc(8); *d = sqrt(argc + 1.0); printf("%.3f\n", *d); free(d); return 0; }
