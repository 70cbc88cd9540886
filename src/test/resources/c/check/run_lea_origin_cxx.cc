/* run --check --mode rewrite on C++ built by plain g++ -O0 -g: accesses through a pointer from a lea of a global
 * or a stack variable (docs/check.md, "Pointers from a lea of a global or a variable"), where C++ differs from C:
 * globals whose .symtab names are mangled (a static's _ZL5cases, a namespace's _ZN2ns5tableE), reported by the
 * name they are declared with as cc --check says it, and functions of a namespace or a class, whose DWARF
 * definition has no name but DW_AT_specification (their variables were not read). Each case, when its second
 * argument is "bad", makes one access one element past the object the pointer came from; "good" the last one
 * in bounds. Usage: run_lea_origin_cxx CASE bad|good (CASE: static nsglobal member method all) */
#include <cstdio>
#include <cstdlib>
#include <cstring>

static int cases[8];   /* CASES: the next global right after it (no padding to poison) */
int after[8];

namespace ns {
int table[8];          /* TABLE */
int next[8];

struct packet {
    int header;
    char payload[16];
};

/* the corpus's cxx_stack_array_member: gcc -O0 adds the char array's index to a lea of the member */
static long fill(size_t n)
{
    packet p{};        /* PACKET */
    p.header = 1;
    for (size_t i = 0; i < n; i++) p.payload[i] = 'p'; /* MEMBER */
    return p.header + p.payload[0];
}

struct log {
    long add(int n);
};

long log::add(int n)
{
    char line[6];      /* LINE */
    char *at;
    memset(line, 'a', sizeof line);
    at = line;
    *(at + n) = 1;     /* METHOD */
    return line[0];
}
}

static int statics(int i)
{
    cases[i] = 3;      /* STATIC */
    return cases[0] + after[0];
}

static int nsglobal(int i)
{
    ns::table[i] = 4;  /* NSGLOBAL */
    return ns::table[0] + ns::next[0];
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0;
    long r = 0;
    ns::log log;
    if (strcmp(argv[1], "static") == 0) r = statics(bad ? 8 : 7);
    else if (strcmp(argv[1], "nsglobal") == 0) r = nsglobal(bad ? 8 : 7);
    else if (strcmp(argv[1], "member") == 0) r = ns::fill(bad ? 17 : 16);
    else if (strcmp(argv[1], "method") == 0) r = log.add(bad ? 6 : 5);
    else if (strcmp(argv[1], "all") == 0) r = statics(7) + nsglobal(7) + ns::fill(16) + log.add(5);
    printf("done %ld\n", r);
    return 0;
}
