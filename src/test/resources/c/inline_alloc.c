/* An allocation inside static functions that gcc -O2 inlines into main: InlinedFramesTest. Line numbers matter. */
#include <stdlib.h>
#include <stdio.h>

struct node { struct node *next; long value; };

static struct node *make(long value, struct node *next) {
    struct node *n = malloc(sizeof *n);
    if (n == NULL) abort();
    n->value = value;
    n->next = next;
    return n;
}

static struct node *push_two(struct node *list, long v) {
    list = make(v, list);
    return make(v + 1, list);
}

int main(int argc, char **argv) {
    struct node *list = NULL;
    for (long i = 0; i < 4 + argc; i += 2) list = push_two(list, i);
    long sum = 0;
    while (list) {
        struct node *next = list->next;
        sum += list->value;
        free(list);
        list = next;
    }
    printf("%ld\n", sum);
    return 0;
}
