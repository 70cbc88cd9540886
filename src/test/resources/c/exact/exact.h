/* Shared declarations of the three-unit fixture for analyze's exactness on linked cc-built files. */
#ifndef EXACT_H
#define EXACT_H
extern int counts[64];
extern long total;
extern double weights[512];
extern char names[16][32];
void tally(int n);
double blend(int n);
long checksum(void);
#endif
