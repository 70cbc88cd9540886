/* Compute-bound: a Mandelbrot set in registers, one store per pixel row (the paper's mandelbrot). */
#include <stdio.h>
#define W 160
#define H 120
int rows[H];
int main(void)
{
    for (int y = 0; y < H; y++) {
        int inside = 0;
        for (int x = 0; x < W; x++) {
            double cr = -2.0 + 3.0 * x / W, ci = -1.2 + 2.4 * y / H, zr = 0, zi = 0;
            int k = 0;
            while (k < 200 && zr * zr + zi * zi < 4.0) {
                double t = zr * zr - zi * zi + cr;
                zi = 2 * zr * zi + ci;
                zr = t;
                k++;
            }
            inside += k == 200;
        }
        rows[y] = inside;
    }
    long s = 0;
    for (int y = 0; y < H; y++) s += rows[y];
    printf("inside %ld\n", s);
    return 0;
}
