/* Probe groups (ProbeGroups): copy4's eight accesses are all rip-relative, so one probe before its first
 * instruction records them all; chase's second load reads the register its first load writes, so each
 * gets its own probe. pair's two loads share a probe that needs no saved register: at -O1 its code
 * overwrites %rdx and %rax before reading them; sum2's probe saves one register (only %rax is dead).
 * Exit status: the value chase finds (42), or 1 when pair or sum2 computed a wrong value. */
long a[4], b[4] = {1, 2, 3, 4};

__attribute__((noinline)) void copy4(void)
{
    a[0] = b[0];
    a[1] = b[1];
    a[2] = b[2];
    a[3] = b[3];
}

__attribute__((noinline)) long chase(long **p)
{
    return **p;
}

__attribute__((noinline)) long pair(long *p, long *q)
{
    long x = *p, y = *q;
    return (x ^ y) + (x >> 3);
}

__attribute__((noinline)) long sum2(long *p)
{
    return p[0] + p[1];
}

long two[2] = {45, 7};

int main(void)
{
    long v = 42, *q = &v;
    long *volatile *qq = (long *volatile *)&q;
    copy4();
    if (pair(&two[0], &two[1]) != (45 ^ 7) + (45 >> 3) || sum2(two) != 52) return 1;
    return (int)chase((long **)qq);
}
