/* Names with a comma and a space: run as ./d,1, it maps "we,ird file.dat" and reads and writes it. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
    int fd = open("we,ird file.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) { perror("we,ird file.dat"); return 1; }
    int *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    p[10] = 42;
    printf("read back %d\n", p[10]);
    munmap(p, 4096);
    close(fd);
    return 0;
}
