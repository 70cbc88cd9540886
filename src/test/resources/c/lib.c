/* A small shared library: an exported function and variable, and a static pair that only .symtab names. */
int lib_global[4] = {7, 8, 9, 10};
static int lib_hidden_counter = 3;

static __attribute__((noinline)) int lib_static_helper(int x) {
    return x + lib_hidden_counter;
}

int lib_function(int x) {
    return lib_static_helper(x) * lib_global[x & 3];
}
