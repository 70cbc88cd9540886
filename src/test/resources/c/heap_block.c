/* One malloc'd block: written element by element, then freed; exits with 7 to check status propagation. */
#include <stdlib.h>

int main(void) {
    int *volatile block = malloc(16 * sizeof(int));
    for (int i = 0; i < 16; i++) block[i] = i;
    free(block);
    return 7;
}
