/*
 * Header of the source-line fixtures: an inline function that both lines_main.c and lines_other.c use, so
 * that at -O2 their code carries rows of this file inside their own functions (DWARF's file switch), and a
 * macro whose code the line table gives the line of its use. Nothing is printed; only the tables matter.
 */
static inline int square_plus(int x)
{
    int y = x * x;
    if (y > 1000)
        y -= 7;
    return y + 1;
}

#define CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))
