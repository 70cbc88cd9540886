/* Writes its pid to the file named by its argument, then stores into a global until it is stopped. */
#include <stdio.h>
#include <unistd.h>

volatile long counter;

int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "w");
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    for (;;) {
        for (int i = 0; i < 1000; i++) counter++;
        usleep(100);
    }
}
