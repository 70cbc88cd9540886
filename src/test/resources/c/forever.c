/* Keeps storing into a global until killed; says when it started so a test knows tracing is under way. */
#include <stdio.h>
#include <unistd.h>

int ring[100];

int main(void) {
    printf("running\n");
    fflush(stdout);
    for (unsigned i = 0;; i++) {
        ring[i % 100] = (int)i;
        usleep(1000);
    }
}
