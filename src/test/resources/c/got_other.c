/* A function of the program whose address got_main.c takes through a GOT slot the linker relaxes away. */
void *got_local(void) { return (void *) 0; }
