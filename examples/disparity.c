/*
 * The MadT paper's use case (Listing 1): findDisparity() of the SD-VBS disparity benchmark over three
 * 10x13 arrays allocated through helper functions. Built -O0 -g, its trace shows the allocation lines
 * naming fMallocHandle/iMallocHandle with size 528 and, per iteration, loads at offset 0 (width) and
 * 8..524 (data) of each block, as in Listing 2.
 */
#include <stdio.h>
#include <stdlib.h>

typedef struct { int width; int height; float data[]; } F2D;
typedef struct { int width; int height; int data[]; } I2D;

#define subsref(a, i, j) a->data[(i) * a->width + (j)]

F2D *fMallocHandle(int rows, int cols)
{
    F2D *out = malloc(sizeof(F2D) + sizeof(float) * rows * cols);
    out->height = rows;
    out->width = cols;
    return out;
}

I2D *iMallocHandle(int rows, int cols)
{
    I2D *out = malloc(sizeof(I2D) + sizeof(int) * rows * cols);
    out->height = rows;
    out->width = cols;
    return out;
}

void findDisparity(F2D *retSAD, F2D *minSAD, I2D *retDisp, int level, int nr, int nc)
{
    int i, j, a, b;
    for (i = 0; i < nr; i++) {
        for (j = 0; j < nc; j++) {
            a = subsref(retSAD, i, j);
            b = subsref(minSAD, i, j);
            if (a < b) {
                subsref(minSAD, i, j) = a;
                subsref(retDisp, i, j) = level;
            }
        }
    }
}

int main(void)
{
    int nr = 10, nc = 13;
    F2D *minSAD = fMallocHandle(nr, nc);
    I2D *retDisp = iMallocHandle(nr, nc);
    F2D *retSAD = fMallocHandle(nr, nc);
    for (int k = 0; k < nr * nc; k++) {
        minSAD->data[k] = 1000.0f;
        retSAD->data[k] = (float)(k % 17);
        retDisp->data[k] = -1;
    }
    findDisparity(retSAD, minSAD, retDisp, 0, nr, nc);
    long sum = 0;
    for (int k = 0; k < nr * nc; k++) sum += (long)minSAD->data[k] + retDisp->data[k];
    printf("disparity checksum %ld\n", sum);
    free(retSAD);
    free(retDisp);
    free(minSAD);
    return 0;
}
