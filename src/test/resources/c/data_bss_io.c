/* System calls on a buffer across the boundary of a module's .data and .bss while a second thread is
 * alive: `buf` is the first object of .bss, so it starts in the last page of the file-backed part of the
 * data segment and runs on into the anonymous part (two lines of the memory map). read() fills it from
 * the program's own file, write() sends it to /dev/null. Under memtrace neither may open a page (windows
 * at risk 0). Prints the bytes read, their sum and the address of buf. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int marker = 1;
char buf[3 * 4096];
static int gate[2];

static void *waiter(void *arg)
{
    char c;
    (void)arg;
    return read(gate[0], &c, 1) == 1 ? NULL : (void *)1;
}

int main(int argc, char **argv)
{
    (void)argc;
    if (pipe(gate)) return 1;
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    int fd = open(argv[0], O_RDONLY);
    long got = read(fd, buf, sizeof buf);
    close(fd);
    int out = open("/dev/null", O_WRONLY);
    long put = write(out, buf, sizeof buf);
    close(out);
    long sum = marker;
    for (long i = 0; i < got; i++) sum += (unsigned char)buf[i];
    if (write(gate[1], "x", 1) != 1) return 1;
    pthread_join(t, NULL);
    printf("read %ld wrote %ld sum %ld\n", got, put, sum);
    return 0;
}
