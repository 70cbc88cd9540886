/* Recall cases for `memtrace cc --check` (CheckRecallTest), in the style of the public suites the checker is
 * judged on (Juliet CWE-121/122/124/126/127/415/416/476/590/761/401, AddressSanitizer's own tests):
 * `./recall NAME bad` runs the bug, `./recall NAME good` its twin, which must stay silent and print "done".
 * Sizes and indexes come from atoi() (n = 16 unless a third argument says otherwise) so that -O2 cannot fold
 * the bug away. BAD marks the line a report must cite. */
#include <alloca.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

volatile long sink;
char *volatile keep;
char text[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyz";
struct frame { int header; int data[10]; };
struct frame gframe;
int before[4];
int garr[8];
static char sbuf[32];
FILE *devnull;
void *volatile gone;
/* free through a volatile: -O2 cannot drop the faulty store before it as dead */
#define drop(p) (gone = (p), free(gone))
/* a pointer -O2 cannot prove unused (it would remove the allocation), then forgotten */
#define forget(p) (gone = (p), gone = NULL)

/* a copy of text, terminated after len bytes */
static char *source(int len)
{
    static char s[200];
    memcpy(s, text, len);
    s[len] = 0;
    return s;
}

/* ---- heap blocks of every allocator, overrun against their requested size ---- */

__attribute__((noinline)) static void calloc_overflow(int n, int bad)
{
    int *p = calloc(n, sizeof *p);
    sink = p[n - 1 + bad]; /* BAD:calloc_overflow */
    free(p);
}

__attribute__((noinline)) static void realloc_overflow(int n, int bad)
{
    char *p = malloc(4);
    p = realloc(p, n);
    p[n - 1 + bad] = 1; /* BAD:realloc_overflow */
    drop(p);
}

__attribute__((noinline)) static void realloc_shrunk(int n, int bad)
{
    char *p = malloc(4 * n);
    p = realloc(p, n);
    p[n - 1 + bad] = 1; /* BAD:realloc_shrunk */
    drop(p);
}

__attribute__((noinline)) static void aligned_overflow(int n, int bad)
{
    char *p = aligned_alloc(64, 4 * n);
    p[4 * n - 1 + bad] = 1; /* BAD:aligned_overflow */
    drop(p);
}

__attribute__((noinline)) static void posix_memalign_overflow(int n, int bad)
{
    void *v;
    if (posix_memalign(&v, 32, n)) return;
    char *p = v;
    sink = p[n - 1 + bad]; /* BAD:posix_memalign_overflow */
    free(p);
}

__attribute__((noinline)) static void memalign_overflow(int n, int bad)
{
    char *p = memalign(128, n + 3);
    p[n + 2 + bad] = 1; /* BAD:memalign_overflow */
    drop(p);
}

__attribute__((noinline)) static void valloc_overflow(int n, int bad)
{
    char *p = valloc(n);
    p[n - 1 + bad] = 1; /* BAD:valloc_overflow */
    drop(p);
}

__attribute__((noinline)) static void strdup_overflow(int n, int bad)
{
    char *p = strdup(source(n - 1));
    sink = p[n - 1 + bad]; /* BAD:strdup_overflow */
    free(p);
}

__attribute__((noinline)) static void strndup_overflow(int n, int bad)
{
    char *p = strndup(text, n - 1);
    p[n - 1 + bad] = 1; /* BAD:strndup_overflow */
    drop(p);
}

__attribute__((noinline)) static void large_underflow(int n, int bad)
{
    char *p = malloc(1 << 20);
    p[0] = 1;
    sink = p[-4000 * bad]; /* BAD:large_underflow */
    free(p);
}

__attribute__((noinline)) static void large_overflow(int n, int bad)
{
    char *p = malloc((1 << 20) + n);
    p[(1 << 20) + n - 1 + 3000 * bad] = 1; /* BAD:large_overflow */
    drop(p);
}

/* ---- libc functions by their meaning (CWE-122/126/127 shapes) ---- */

__attribute__((noinline)) static void memset_overflow(int n, int bad)
{
    char *p = malloc(n);
    memset(p, 'A', n + bad); /* BAD:memset_overflow */
    drop(p);
}

__attribute__((noinline)) static void memmove_overflow(int n, int bad)
{
    char *p = malloc(n);
    memmove(p, text, n + 4 * bad); /* BAD:memmove_overflow */
    drop(p);
}

__attribute__((noinline)) static void memcpy_overread(int n, int bad)
{
    char *p = malloc(n), dest[100];
    memset(p, 'B', n);
    memcpy(dest, p, n + 8 * bad); /* BAD:memcpy_overread */
    sink = dest[1];
    free(p);
}

__attribute__((noinline)) static void strncpy_overflow(int n, int bad)
{
    char *p = malloc(n);
    strncpy(p, text, n + bad); /* BAD:strncpy_overflow */
    drop(p);
}

__attribute__((noinline)) static void strcat_overflow(int n, int bad)
{
    char *p = malloc(n);
    strcpy(p, "ab");
    strcat(p, source(n - 3 + bad)); /* BAD:strcat_overflow */
    drop(p);
}

__attribute__((noinline)) static void strncat_overflow(int n, int bad)
{
    char *p = malloc(n);
    p[0] = 0;
    strncat(p, text, n - 1 + bad); /* BAD:strncat_overflow */
    drop(p);
}

__attribute__((noinline)) static void strlen_overread(int n, int bad)
{
    char *p = malloc(n);
    memset(p, 'A', n);
    p[n - 1] = bad ? 'A' : 0;
    sink = strlen(p); /* BAD:strlen_overread */
    free(p);
}

__attribute__((noinline)) static void strcpy_overread(int n, int bad)
{
    char *p = malloc(n), dest[200];
    memset(p, 'A', n);
    p[n - 1] = bad ? 'A' : 0;
    strcpy(dest, p); /* BAD:strcpy_overread */
    sink = dest[0];
    free(p);
}

__attribute__((noinline)) static void printf_overread(int n, int bad)
{
    char *p = malloc(n);
    memset(p, 'A', n);
    p[n - 1] = bad ? 'A' : 0;
    fprintf(devnull, "%d %s\n", n, p); /* BAD:printf_overread */
    free(p);
}

__attribute__((noinline)) static void puts_overread(int n, int bad)
{
    char *p = malloc(n);
    memset(p, 'A', n);
    p[n - 1] = bad ? 'A' : 0;
    fputs(p, devnull); /* BAD:puts_overread */
    free(p);
}

__attribute__((noinline)) static void snprintf_overflow(int n, int bad)
{
    char dest[16];
    snprintf(dest, n + 8 * bad, "%s", text); /* BAD:snprintf_overflow */
    sink = dest[0];
}

__attribute__((noinline)) static void sprintf_overflow(int n, int bad)
{
    char *p = malloc(n);
    sprintf(p, "%s", source(n - 1 + bad)); /* BAD:sprintf_overflow */
    drop(p);
}

__attribute__((noinline)) static void strcpy_underread(int n, int bad)
{
    char *buf = malloc(n), dest[100];
    memset(buf, 'A', n - 1);
    buf[n - 1] = 0;
    char *data = buf - 8 * bad;
    strcpy(dest, data); /* BAD:strcpy_underread */
    sink = dest[0];
    free(buf);
}

__attribute__((noinline)) static void strncpy_underread(int n, int bad)
{
    char *buf = malloc(n), dest[100];
    memset(buf, 'A', n);
    char *data = buf - 8 * bad;
    strncpy(dest, data, n); /* BAD:strncpy_underread */
    sink = dest[0];
    free(buf);
}

__attribute__((noinline)) static void memcpy_underwrite(int n, int bad)
{
    char buf[32];
    char *data = buf - 8 * bad;
    memcpy(data, text, n); /* BAD:memcpy_underwrite */
    sink = buf[1];
}

__attribute__((noinline)) static void wcscpy_overflow(int n, int bad)
{
    wchar_t *p = malloc(n * sizeof *p), src[64];
    wmemset(src, L'A', 63);
    src[n - 1 + bad] = 0;
    wcscpy(p, src); /* BAD:wcscpy_overflow */
    drop(p);
}

__attribute__((noinline)) static void wcslen_overread(int n, int bad)
{
    wchar_t *p = malloc(n * sizeof *p);
    wmemset(p, L'A', n);
    p[n - 1] = bad ? L'A' : 0;
    sink = wcslen(p); /* BAD:wcslen_overread */
    free(p);
}

__attribute__((noinline)) static void wmemset_overflow(int n, int bad)
{
    wchar_t *p = malloc(n * sizeof *p);
    wmemset(p, L'A', n + bad); /* BAD:wmemset_overflow */
    drop(p);
}

__attribute__((noinline)) static void wcsncpy_overflow(int n, int bad)
{
    wchar_t *p = malloc(n * sizeof *p);
    wcsncpy(p, L"abc", n + bad); /* BAD:wcsncpy_overflow */
    drop(p);
}

__attribute__((noinline)) static void wcscat_overflow(int n, int bad)
{
    wchar_t *p = malloc(n * sizeof *p), src[64];
    wmemset(src, L'A', 63);
    src[n - 3 + bad] = 0;
    wcscpy(p, L"ab");
    wcscat(p, src); /* BAD:wcscat_overflow */
    drop(p);
}

/* ---- stack and globals ---- */

__attribute__((noinline)) static void stack_loop_overflow(int n, int bad)
{
    int buf[10];
    for (int i = 0; i < 10 + bad; i++) buf[i] = i; /* BAD:stack_loop_overflow */
    sink = buf[n % 10];
}

__attribute__((noinline)) static void stack_underwrite(int n, int bad)
{
    long buf[8];
    for (int i = 0; i < 8; i++) buf[i] = i;
    buf[n - 16 - bad] = 9; /* BAD:stack_underwrite */
    sink = buf[n % 8];
}

__attribute__((noinline)) static void stack_struct_overflow(int n, int bad)
{
    struct frame f;
    memset(&f, 0, sizeof f);
    f.data[n - 7 + bad] = 1; /* BAD:stack_struct_overflow */
    sink = f.data[0];
}

__attribute__((noinline)) static void stack_memcpy_overflow(int n, int bad)
{
    static char src[100];
    char dest[50];
    memset(src, 'C', sizeof src);
    memcpy(dest, src, 50 + 50 * bad); /* BAD:stack_memcpy_overflow */
    sink = dest[n];
}

__attribute__((noinline)) static void fill(char *p, int len)
{
    for (int i = 0; i < len; i++) p[i] = 'x'; /* BAD:stack_callee_overflow */
}

__attribute__((noinline)) static void stack_callee_overflow(int n, int bad)
{
    char buf[24];
    fill(buf, n + 8 + bad);
    sink = buf[2];
}

__attribute__((noinline)) static void alloca_overflow(int n, int bad)
{
    char *p = alloca(n);
    memset(p, 0, n);
    p[n - 1 + bad] = 1; /* BAD:alloca_overflow */
    sink = p[0];
}

__attribute__((noinline)) static void global_read_overflow(int n, int bad)
{
    sink = garr[n - 9 + bad]; /* BAD:global_read_overflow */
}

__attribute__((noinline)) static void global_struct_overflow(int n, int bad)
{
    gframe.data[n - 7 + bad] = 1; /* BAD:global_struct_overflow */
}

__attribute__((noinline)) static void static_overflow(int n, int bad)
{
    sbuf[n % 32] = 1;
    sink = sbuf[n + 15 + bad]; /* BAD:static_overflow */
}

__attribute__((noinline)) static void global_underflow(int n, int bad)
{
    sink = garr[n - 16 - bad]; /* BAD:global_underflow */
}

__attribute__((noinline)) static void global_memcpy_overflow(int n, int bad)
{
    memcpy(garr, text, sizeof garr + bad); /* BAD:global_memcpy_overflow */
    sink = 0; /* not a tail call: the report names this function */
}

__attribute__((noinline)) static int *scoped(int n)
{
    int *volatile p;
    {
        int local[4];
        local[0] = n;
        p = local;
    }
    return p;
}

__attribute__((noinline)) static void use_after_scope(int n, int bad)
{
    int *volatile p;
    int other[4] = {1, 2, 3, 4};
    {
        int local[4];
        local[n % 4] = n;
        p = bad ? local : other;
        sink = p[0];
    }
    sink = p[1]; /* BAD:use_after_scope */
    (void)scoped;
}

/* stack use after return: a callee's local array read through a pointer kept after the callee returned (its
 * fake frame is retired: check_fakestack.c) */
static int *volatile returned;
__attribute__((noinline)) static void keep_local(int n, int bad)
{
    int local[8];
    for (int i = 0; i < 8; i++) local[i] = n + i;
    sink = local[n % 8];
    if (bad) returned = local;
}

__attribute__((noinline)) static void use_after_return(int n, int bad)
{
    static int kept[8];
    returned = kept;
    keep_local(n, bad);
    sink = returned[2]; /* BAD:use_after_return */
}

/* ---- use after free, double free ---- */

__attribute__((noinline)) static void use_after_realloc(int n, int bad)
{
    char *p = malloc(n), *old = p;
    p[0] = 1;
    p = realloc(p, 4096 * n);
    sink = (bad ? old : p)[0]; /* BAD:use_after_realloc */
    free(p);
}

__attribute__((noinline)) static void use_after_free_memcpy(int n, int bad)
{
    char *p = malloc(n), dest[64];
    memset(p, 1, n);
    if (bad) free(p);
    memcpy(dest, p, n); /* BAD:use_after_free_memcpy */
    sink = dest[0];
    if (!bad) free(p);
}

__attribute__((noinline)) static void use_after_free_write(int n, int bad)
{
    long *p = calloc(n, sizeof *p);
    if (bad) free(p);
    p[n / 2] = 5; /* BAD:use_after_free_write */
    sink = p[0];
    if (!bad) drop(p);
}

__attribute__((noinline)) static void use_after_free_strlen(int n, int bad)
{
    char *p = strdup(source(n));
    if (bad) free(p);
    sink = strlen(p); /* BAD:use_after_free_strlen */
    if (!bad) free(p);
}

__attribute__((noinline)) static void use_after_free_reused(int n, int bad)
{
    char *p = malloc(n);
    free(p);
    char *blocks[1000];
    for (int i = 0; i < 1000; i++) blocks[i] = malloc(n);
    char *q = bad ? p : blocks[999];
    sink = q[0]; /* BAD:use_after_free_reused */
    for (int i = 0; i < 1000; i++) free(blocks[i]);
}

__attribute__((noinline)) static void double_free_realloc(int n, int bad)
{
    char *p = malloc(n), *old = p;
    p = realloc(p, 4096 * n);
    free(bad ? old : p); /* BAD:double_free_realloc */
    if (bad) free(p);
}

__attribute__((noinline)) static void double_free_loop(int n, int bad)
{
    char *p[4];
    for (int i = 0; i < 4; i++) p[i] = malloc(n);
    for (int i = 0; i < 4; i++) free(p[i]);
    if (bad) free(p[n % 4]); /* BAD:double_free_loop */
}

/* gcc -O2 deletes stores to a block that is freed right after, then the malloc/free pair itself, and with them
 * the overflow or double free they held (ASan -O2 finds neither): --check builds keep free() no builtin */
__attribute__((noinline)) static void written_then_freed(int n, int bad)
{
    char *p = malloc(8);
    for (int i = 0; i < 8 + bad; i++) p[i] = 1; /* BAD:written_then_freed */
    free(p);
}

__attribute__((noinline)) static void double_free_unused(int n, int bad)
{
    char *p = malloc(8);
    free(p);
    if (bad) free(p); /* BAD:double_free_unused */
}

/* ---- invalid free (CWE-590, CWE-761) ---- */

__attribute__((noinline)) static void free_alloca(int n, int bad)
{
    char *p = alloca(n), *h = malloc(n);
    memset(p, 0, n);
    sink = p[1];
    free(bad ? p : h); /* BAD:free_alloca */
}

__attribute__((noinline)) static void free_static_local(int n, int bad)
{
    static char local[64];
    char *h = malloc(n);
    local[n] = 1;
    free(bad ? local : h); /* BAD:free_static_local */
    sink = 0;
}

__attribute__((noinline)) static void free_struct_stack(int n, int bad)
{
    struct frame f, *h = malloc(sizeof f);
    f.header = n;
    sink = f.header;
    free(bad ? &f : h); /* BAD:free_struct_stack */
}

__attribute__((noinline)) static void free_string_literal(int n, int bad)
{
    char *h = malloc(n);
    free(bad ? (char *)"a literal" : h); /* BAD:free_string_literal */
    sink = 0;
}

__attribute__((noinline)) static void free_after_increment(int n, int bad)
{
    char *p = malloc(n), *start = p;
    strcpy(p, "abcdef");
    while (*p && *p != 'd') p++;
    free(bad ? p : start); /* BAD:free_after_increment */
    sink = 0;
}

/* ---- NULL (CWE-476) ---- */

struct twoints { int a, b; };

__attribute__((noinline)) static void null_read(int n, int bad)
{
    struct twoints t = {n, n}, *volatile p = bad ? NULL : &t;
    sink = p->b; /* BAD:null_read */
}

__attribute__((noinline)) static void null_write(int n, int bad)
{
    int x, *volatile p = bad ? NULL : &x;
    *p = n; /* BAD:null_write */
    sink = x;
}

__attribute__((noinline)) static void strlen_null(int n, int bad)
{
    char *volatile s = bad ? NULL : source(n);
    if ((s != NULL) & (strlen(s) > 0)) /* BAD:strlen_null */
        sink = s[0];
}

/* ---- the wide printf family ---- */

__attribute__((noinline)) static void wprintf_after_free(int n, int bad)
{
    wchar_t *p = malloc(n * sizeof *p);
    wmemset(p, L'A', n - 1);
    p[n - 1] = 0;
    if (bad) free(p);
    fwprintf(devnull, L"%ls\n", p); /* BAD:wprintf_after_free */
    if (!bad) free(p);
    sink = 0;
}

__attribute__((noinline)) static void swprintf_overflow(int n, int bad)
{
    wchar_t dest[16];
    swprintf(dest, n + 8 * bad, L"%s", text); /* BAD:swprintf_overflow */
    sink = dest[0];
}

/* ---- leaks (CWE-401) ---- */

struct node { struct node *next; long v; };
struct node *list;
__thread char *tls_kept;

__attribute__((noinline)) static void leak_calloc(int n, int bad)
{
    char *p = calloc(n, 1);
    strcpy(p, "A String");
    sink = p[0];
    if (bad) forget(p);
    else free(p);
}

__attribute__((noinline)) static void leak_strdup(int n, int bad)
{
    char *p = strdup(source(n));
    sink = p[1];
    if (bad) forget(p);
    else free(p);
}

__attribute__((noinline)) static void leak_realloc(int n, int bad)
{
    char *p = malloc(n);
    p = realloc(p, 2 * n);
    sink = p[1] = 1;
    if (bad) forget(p);
    else free(p);
}

__attribute__((noinline)) static void leak_list(int n, int bad)
{
    struct node *head = NULL;
    for (int i = 0; i < n; i++) {
        struct node *e = malloc(sizeof *e);
        e->next = head;
        e->v = i;
        head = e;
    }
    if (bad) forget(head);
    else list = head;
}

__attribute__((noinline)) static void leak_interior(int n, int bad)
{
    char *p = malloc(n);
    forget(p);
    keep = bad ? NULL : p + n / 2;
}

__attribute__((noinline)) static void leak_tls(int n, int bad)
{
    char *p = malloc(n);
    p[0] = 1;
    tls_kept = p;       /* a thread-local variable is a root, as a global is */
    if (bad) tls_kept = NULL;
    forget(p);
}

/* only written, never read: gcc -O2 deletes such an allocation when malloc is a builtin */
__attribute__((noinline)) static void leak_written_only(int n, int bad)
{
    char *p = malloc(16);
    p[0] = 1;
    if (!bad) free(p);
}

__attribute__((noinline)) static void strcat_overlap(int n, int bad)
{
    char *p = malloc(n);
    strcpy(p, "abc");
    strcat(p, bad ? p + 1 : "de"); /* BAD:strcat_overlap */
    drop(p);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    int bad = argc > 2 && strcmp(argv[2], "bad") == 0, n = argc > 3 ? atoi(argv[3]) : 16;
    devnull = fopen("/dev/null", "w");
    struct { const char *name; void (*run)(int, int); } cases[] = {
#define C(f) {#f, f}
        C(calloc_overflow), C(realloc_overflow), C(realloc_shrunk), C(aligned_overflow), C(posix_memalign_overflow),
        C(memalign_overflow), C(valloc_overflow), C(strdup_overflow), C(strndup_overflow), C(large_underflow),
        C(large_overflow), C(memset_overflow), C(memmove_overflow), C(memcpy_overread), C(strncpy_overflow),
        C(strcat_overflow), C(strncat_overflow), C(strlen_overread), C(strcpy_overread), C(printf_overread),
        C(puts_overread), C(snprintf_overflow), C(sprintf_overflow), C(strcpy_underread), C(strncpy_underread),
        C(memcpy_underwrite), C(wcscpy_overflow), C(wcslen_overread), C(wmemset_overflow), C(wcsncpy_overflow),
        C(wcscat_overflow), C(stack_loop_overflow), C(stack_underwrite), C(stack_struct_overflow),
        C(stack_memcpy_overflow), C(stack_callee_overflow), C(alloca_overflow), C(global_read_overflow),
        C(global_struct_overflow), C(static_overflow), C(global_underflow), C(global_memcpy_overflow),
        C(use_after_scope), C(use_after_return), C(use_after_realloc), C(use_after_free_memcpy), C(use_after_free_write),
        C(use_after_free_strlen), C(use_after_free_reused), C(double_free_realloc), C(double_free_loop),
        C(written_then_freed), C(double_free_unused),
        C(free_alloca), C(free_static_local), C(free_struct_stack), C(free_string_literal),
        C(free_after_increment), C(null_read), C(null_write), C(strlen_null),
        C(wprintf_after_free), C(swprintf_overflow), C(leak_calloc), C(leak_strdup), C(leak_realloc),
        C(leak_list), C(leak_interior), C(leak_tls), C(leak_written_only), C(strcat_overlap),
#undef C
    };
    if (strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) printf("%s\n", cases[i].name);
        return 0;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(cases[i].name, argv[1]) == 0) {
            cases[i].run(n, bad);
            printf("done\n");
            return 0;
        }
    }
    return 2;
}
