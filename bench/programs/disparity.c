/*
 * Regular kernel: stereo disparity at CIF size (352x288), the shape of the SD-VBS "disparity" benchmark the
 * MadT paper traces (its Listing 1 is findDisparity), written here from that description. The left image is
 * a deterministic texture; the right one is the left moved by a known disparity per band of rows, plus a
 * little noise. For every shift d below MAX_DISP: computeSAD writes |left - right moved by d| per pixel,
 * integralImage2D sums it into an integral image, finalSAD reads the WINxWIN window sums off the integral
 * image, and findDisparity keeps, per pixel, the smallest sum so far and its shift. Images are malloc'd
 * F2D/I2D blocks (a header of width and height, then the pixels), allocated through fMallocHandle and
 * iMallocHandle as in the paper's trace, so their accesses are named <malloc…@fMallocHandle+N>+offset.
 * Prints the checksum of the disparity map and how many pixels found their band's true disparity.
 * What it is not: SD-VBS's code (no image files, no padding by the window, no squared differences), and
 * float sums over a whole image lose precision, the same in every build (the result is only a checksum).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define WIDTH 352
#define HEIGHT 288
#define MAX_DISP 12
#define WIN 8

typedef struct { int width, height; float data[]; } F2D;
typedef struct { int width, height; int data[]; } I2D;

#define subsref(a, i, j) (a)->data[(i) * (a)->width + (j)]

static F2D *fMallocHandle(int height, int width) {
    F2D *m = malloc(sizeof(F2D) + sizeof(float) * (size_t) width * height);
    if (!m) exit(1);
    m->width = width;
    m->height = height;
    return m;
}

static I2D *iMallocHandle(int height, int width) {
    I2D *m = malloc(sizeof(I2D) + sizeof(int) * (size_t) width * height);
    if (!m) exit(1);
    m->width = width;
    m->height = height;
    return m;
}

/* The disparity the right image really has in row i: bands of 48 rows, 1 to 11 pixels. */
static int trueDisparity(int i) { return 1 + (i / 48) * 2; }

static void makeImages(F2D *left, F2D *right) {
    unsigned state = 12345;
    for (int i = 0; i < left->height; i++)
        for (int j = 0; j < left->width; j++) {
            state = state * 1103515245u + 12345u;
            subsref(left, i, j) = (float) ((state >> 16) & 255);
        }
    for (int i = 0; i < right->height; i++) {
        int d = trueDisparity(i);
        for (int j = 0; j < right->width; j++) {
            state = state * 1103515245u + 12345u;
            float noise = (float) ((state >> 16) & 7);
            subsref(right, i, j) = (j + d < left->width ? subsref(left, i, j + d) : 0.0f) + noise;
        }
    }
}

/* |left(i, j) - right(i, j - shift)|: where j - shift falls off the image, the left pixel alone. */
static void computeSAD(const F2D *left, const F2D *right, int shift, F2D *sad) {
    for (int i = 0; i < sad->height; i++) {
        for (int j = 0; j < shift; j++) subsref(sad, i, j) = subsref(left, i, j);
        for (int j = shift; j < sad->width; j++)
            subsref(sad, i, j) = fabsf(subsref(left, i, j) - subsref(right, i, j - shift));
    }
}

/* integral(i, j) = the sum of sad over rows 0..i and columns 0..j. */
static void integralImage2D(const F2D *sad, F2D *integral) {
    float row = 0;
    for (int j = 0; j < sad->width; j++) {
        row += subsref(sad, 0, j);
        subsref(integral, 0, j) = row;
    }
    for (int i = 1; i < sad->height; i++) {
        row = 0;
        for (int j = 0; j < sad->width; j++) {
            row += subsref(sad, i, j);
            subsref(integral, i, j) = subsref(integral, i - 1, j) + row;
        }
    }
}

/* The sum over the WINxWIN window whose top left corner is (i + 1, j + 1), from four integral pixels. */
static void finalSAD(const F2D *integral, F2D *retSAD) {
    for (int i = 0; i < retSAD->height; i++)
        for (int j = 0; j < retSAD->width; j++)
            subsref(retSAD, i, j) = subsref(integral, i + WIN, j + WIN) - subsref(integral, i, j + WIN)
                                    - subsref(integral, i + WIN, j) + subsref(integral, i, j);
}

static void findDisparity(const F2D *retSAD, F2D *minSAD, I2D *retDisp, int level, int nr, int nc) {
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++) {
            float a = subsref(retSAD, i, j);
            float b = subsref(minSAD, i, j);
            if (a < b) {
                subsref(minSAD, i, j) = a;
                subsref(retDisp, i, j) = level;
            }
        }
}

int main(void) {
    F2D *left = fMallocHandle(HEIGHT, WIDTH), *right = fMallocHandle(HEIGHT, WIDTH);
    makeImages(left, right);
    int nr = HEIGHT - WIN, nc = WIDTH - WIN;
    F2D *sad = fMallocHandle(HEIGHT, WIDTH), *integral = fMallocHandle(HEIGHT, WIDTH);
    F2D *retSAD = fMallocHandle(nr, nc), *minSAD = fMallocHandle(nr, nc);
    I2D *retDisp = iMallocHandle(nr, nc);
    for (int i = 0; i < nr * nc; i++) {
        minSAD->data[i] = INFINITY;
        retDisp->data[i] = -1;
    }
    for (int d = 0; d < MAX_DISP; d++) {
        computeSAD(left, right, d, sad);
        integralImage2D(sad, integral);
        finalSAD(integral, retSAD);
        findDisparity(retSAD, minSAD, retDisp, d, nr, nc);
    }
    long checksum = 0, right_ones = 0;
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++) {
            checksum = checksum * 31 + subsref(retDisp, i, j);
            right_ones += subsref(retDisp, i, j) == trueDisparity(i + 1);
        }
    printf("disparity checksum %ld, %ld of %d pixels at their true disparity\n", checksum, right_ones, nr * nc);
    free(retDisp); free(minSAD); free(retSAD); free(integral); free(sad); free(right); free(left);
    return 0;
}
