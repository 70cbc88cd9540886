/* Image kernel like SD-VBS/MiBench smoothing: a 3x3 weighted filter over a 1152x864 8-bit picture, each
 * output pixel mapped through a 256-entry lookup table (a random index into a small table), 16 passes.
 * Prints a checksum. */
#include <stdio.h>

#define W 1152
#define H 864
#define PASSES 16
static unsigned char img[H][W], out[H][W];
static unsigned short lut[256];

int main(void) {
    unsigned s = 1;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            s = s * 1103515245u + 12345u;
            img[y][x] = (unsigned char)((x * y / 7 + (s >> 20)) & 0xff);
        }
    for (int i = 0; i < 256; i++) lut[i] = (unsigned short)((i * i) >> 8);
    for (int pass = 0; pass < PASSES; pass++) {
        for (int y = 1; y < H - 1; y++)
            for (int x = 1; x < W - 1; x++) {
                int v = img[y - 1][x - 1] + 2 * img[y - 1][x] + img[y - 1][x + 1]
                      + 2 * img[y][x - 1] + 4 * img[y][x] + 2 * img[y][x + 1]
                      + img[y + 1][x - 1] + 2 * img[y + 1][x] + img[y + 1][x + 1];
                out[y][x] = (unsigned char)lut[v >> 4];
            }
        for (int y = 1; y < H - 1; y++)
            for (int x = 1; x < W - 1; x++) img[y][x] = out[y][x];
    }
    unsigned long sum = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) sum += img[y][x] * (unsigned long)(x + 1);
    printf("%lu\n", sum);
    return 0;
}
