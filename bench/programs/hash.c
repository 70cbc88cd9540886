/* A hash table: open addressing with linear probing over 2^20 slots, 600 k inserts of pseudo-random keys,
 * then 3 M lookups, half of them misses. Probe sequences are short and start at a hashed slot: the
 * addresses follow the data. */
#include <stdio.h>
#include <stdlib.h>
#define SLOTS (1u << 20)
struct slot { unsigned long key; long value; };
static struct slot table[SLOTS];

static unsigned long mix(unsigned long k) { k ^= k >> 29; k *= 0xbf58476d1ce4e5b9ul; return k ^ (k >> 32); }

static void put(unsigned long key, long value)
{
    unsigned long h = mix(key) & (SLOTS - 1);
    while (table[h].key != 0 && table[h].key != key) h = (h + 1) & (SLOTS - 1);
    table[h].key = key;
    table[h].value = value;
}

static long get(unsigned long key)
{
    unsigned long h = mix(key) & (SLOTS - 1);
    while (table[h].key != 0) {
        if (table[h].key == key) return table[h].value;
        h = (h + 1) & (SLOTS - 1);
    }
    return -1;
}

int main(void)
{
    unsigned long x = 88172645463325252ul;
    for (long i = 0; i < 600000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        put(x | 1, i);
    }
    long found = 0;
    x = 88172645463325252ul;
    for (long i = 0; i < 3000000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        found += get(i & 1 ? x | 1 : x & ~1ul) >= 0;
        if (i % 600000 == 599999) x = 88172645463325252ul;
    }
    printf("found %ld\n", found);
    return 0;
}
