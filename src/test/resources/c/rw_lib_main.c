/* Calls the rw_lib library and prints what it returns. */
#include <stdio.h>
int rw_lib_bump(int k);
extern int total;
int main(void) { int last = 0; for (int i = 0; i < 40; i++) last += rw_lib_bump(i); printf("%d %d\n", last, total); return 0; }
