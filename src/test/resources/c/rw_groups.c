/* Probe groups (ProbeGroups): copy4's eight accesses are all rip-relative, so one probe before its first
 * instruction records them all; chase's second load reads the register its first load writes, so each
 * gets its own probe. Exit status: the value chase finds (42). */
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

int main(void)
{
    long v = 42, *q = &v;
    long *volatile *qq = (long *volatile *)&q;
    copy4();
    return (int)chase((long **)qq);
}
