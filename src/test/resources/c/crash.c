/* Stores to a global, then dereferences a null pointer. */
int counter[4];

int main(int argc, char **argv) {
    for (int i = 0; i < 4; i++) counter[i] = i;
    int *volatile p = 0;
    *p = argc;
    return 0;
}
