/* The variable got_lib.c reads from another shared library. */
int shared_counter = 7;
