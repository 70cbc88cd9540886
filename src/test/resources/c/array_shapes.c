/*
 * array_shapes.c: globals that are arrays of every shape memtrace names by arithmetic (DwarfTypes.path,
 * docs/naming.md "Fields of typed globals"): nested and multi-dimensional arrays, arrays of structs with
 * padding, of unions, of bit-fields, of typedef'd rows, an element larger than the element table, a
 * flexible array member, zero-length and unknown-length arrays, a matrix of doubles. DwarfTypesTest compares every byte's name
 * with the walk over the types. It prints nothing and exits 0; it only stores.
 */
struct padded { char c; double d; short s; };          /* 24 bytes: 7 after c, 6 at the end */
struct padded padded[5];

double cube[3][4][5];

typedef int row_t[6];
row_t rows_of_rows[4];

struct nest { int id; short pair[2][3]; char tag; };
struct nest nests[3][2];

union either { int i; char bytes[6]; };
union either unions[4];

struct bits { unsigned a : 5; unsigned b : 13; char after; };
struct bits bitses[3];

struct big { char head[5000]; int tail[3]; };          /* larger than the element table */
struct big bigs[2];

struct fam { int n; int data[]; };
struct fam fam = {3, {1, 2, 3}};

struct fam fams[2];                                    /* gcc: an array of structs ending in a flexible member */

int zero[0];
int inner_zero[3][0];
char one[1];
long last[7];
double matrix[64][64];                                 /* gemm's shape, smaller: NamingBenchmark's walk */

int main(void) {
    padded[4].s = 1;
    cube[2][3][4] = 2.0;
    rows_of_rows[3][5] = 3;
    nests[2][1].pair[1][2] = 4;
    unions[3].bytes[5] = 5;
    bitses[2].b = 6;
    bigs[1].tail[2] = 7;
    fam.data[2] = 8;
    fams[1].n = 9;
    one[0] = 10;
    last[6] = 11;
    matrix[63][63] = 12.0;
    return 0;
}
