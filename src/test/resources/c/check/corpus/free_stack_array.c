/* CWE-590: free of a stack array (the data pointer was set to it instead of to malloc's). */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void run(int bad)
{
    char dataBuffer[100];
    char *data = bad ? dataBuffer : malloc(100);
    memset(data, 'A', 99);
    data[99] = '\0';
    print_line(data);
    free(data); /* BAD */
}

void free_stack_array_bad(void) { run((int)opaque(1)); }
void free_stack_array_good(void) { run((int)opaque(0)); }
