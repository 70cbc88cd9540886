/* The kernel reads a traced heap buffer in write(): the output must not be lost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    char *buf = malloc(64);
    strcpy(buf, "written from the heap\n");
    if (write(1, buf, strlen(buf)) < 0) return 1;
    for (int i = 0; i < 3; i++) printf("printf line %d of %s", i, buf);
    free(buf);
    return 0;
}
