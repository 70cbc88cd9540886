/*
 * fields.c: globals and statics of every shape memtrace names down to the field (docs/naming.md, "Fields
 * of typed globals"), each written once in a fixed order so a trace of it reads as a list of names:
 * an array of structs, a two-dimensional array, nested structs, a union, bit-fields, anonymous members,
 * typedefs and qualifiers, an array of structs of arrays, and a static local. It prints nothing; its exit
 * status is 0. What it gets wrong: nothing to get wrong, it only stores.
 */
#include <stdint.h>

struct entry { int key; int value; };
struct entry table[8];

int grid[4][8];

struct inner { short a; int flags; };
struct config { char tag; struct inner inner; long tail; };
struct config cfg;

union number { int asInt; float asFloat; double asDouble; };
union number u;

struct bits { unsigned lo : 3; unsigned mid : 9; unsigned hi : 20; char after; };
struct bits bf;

struct anon { int x; union { int i; float f; }; struct { short p, q; }; };
struct anon an;

typedef struct entry entry_t;
typedef const volatile entry_t cv_entry_t;
volatile cv_entry_t qualified[2];

struct row { int cells[3]; char name[5]; };
struct row rows[2];

static int counter_s;

int padded_end[3] __attribute__((aligned(16)));

void touch_static(void) {
    static struct entry remembered;
    remembered.value = 7;
}

int main(void) {
    table[3].value = 1;        /* table[3].value+0 */
    grid[2][5] = 2;            /* grid[2][5]+0 */
    cfg.inner.flags = 3;       /* cfg.inner.flags+0 */
    u.asInt = 4;               /* u.asInt+0 */
    bf.mid = 5;                /* bf.lo+0 (bits 3..11 share byte 0 with lo), read-modify-write */
    bf.after = 6;              /* bf.after+0 */
    an.f = 7.0f;               /* an.i+0: the first member of the anonymous union */
    an.q = 8;                  /* an.q+0 */
    ((entry_t *) &qualified[1])->key = 9; /* qualified[1].key+0 */
    rows[1].name[2] = 'x';     /* rows[1].name[2]+0 */
    rows[1].cells[2] = 10;     /* rows[1].cells[2]+0 */
    counter_s = 11;            /* counter_s+0 */
    touch_static();            /* remembered.N.value+0 */
    return 0;
}
