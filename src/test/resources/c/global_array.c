/* 100 stores, one per element of a global array (built -no-pie so nm gives the run-time address). */
int table[100];

int main(void) {
    for (int i = 0; i < 100; i++) table[i] = i;
    return 0;
}
