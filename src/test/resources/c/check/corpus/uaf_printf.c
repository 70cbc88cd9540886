/* CWE-416: a freed string passed to printf's %s. Twin: printed before the free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

void uaf_printf_bad(void)
{
    char *data = malloc(32);
    strcpy(data, "hello, corpus");
    free(data);
    printf("%s!\n", data); /* BAD */
}

void uaf_printf_good(void)
{
    char *data = malloc(32);
    strcpy(data, "hello, corpus");
    printf("%s!\n", data);
    free(data);
}
