/*
 * mt_probe.h: a probe's first store recognized from its code bytes (docs/compiled-in.md, "Full buffer"),
 * shared by the runtime (agent/runtime/rt_probe.c) and the rewriter tests' stub runtime
 * (src/test/resources/c/mt_stub_rt.c), so that both read the rewriter's output the same way. Static inline
 * and free of libc: the runtime wraps libc's string functions and calls none of them from a signal handler.
 *
 * mt_probe_store(pc, &d, &loop, tpoff) returns the signal context's index of the probe's cursor register C
 * when pc is `mov A,d(C)` (REX.W 89, ModRM mod 0 or 1, d 0 or a disp8) right after `mov %fs:(T),C` (any
 * object), or right after `mov %fs:disp32,C` with disp32 = tpoff, the cursor's offset from the thread
 * pointer (an executable's group probe; each caller passes the offset of its own __memtrace_cursor), or
 * followed by `lea disp32(%rip),A` and `mov A,d+8(C)` (a probe in a loop that keeps its cursor in C, which
 * sets *loop); else -1. It reads 9 bytes before pc and up to 15 after.
 *
 * What it gets wrong: program code of exactly these bytes would be taken for a probe; the callers check
 * that C is the thread's cursor (or lies past it in the thread's buffer) and that the fault address is C + d.
 */
#ifndef MT_PROBE_H
#define MT_PROBE_H

#include <stdint.h>
#include <ucontext.h>

/* The signal context's index of a probe's cursor register, by x86 register number (ModRM/REX): -1 for rax */
/* (the address), rsp, rbp, r12 and r13 (the probe never takes them: their encodings differ).              */
static inline int mt_probe_greg(int r)
{
    static const int map[16] = {-1, REG_RCX, REG_RDX, REG_RBX, -1, -1, REG_RSI, REG_RDI,
                                REG_R8, REG_R9, REG_R10, REG_R11, -1, -1, REG_R14, REG_R15};
    return map[r & 15];
}

/* A probe in a loop that keeps its cursor in C has no load before its first store `mov A,d(C)` (len     */
/* bytes at pc): `lea disp32(%rip),A` and `mov A,d+8(C)`, the slot's site word, follow it instead.       */
static inline int mt_probe_loop_store(const unsigned char *pc, int len, long disp)
{
    const unsigned char *lea = pc + len, *site = lea + 7;
    int a = ((pc[2] >> 3) & 7) | (pc[0] & 4) << 1;
    if ((lea[0] & 0xfb) != 0x48 || lea[1] != 0x8d || (lea[2] & 0xc7) != 0x05) return 0;
    if ((((lea[2] >> 3) & 7) | (lea[0] & 4) << 1) != a) return 0;
    return site[0] == pc[0] && site[1] == 0x89 && site[2] == (0x40 | (pc[2] & 0x3f)) && (signed char)site[3] == disp + 8;
}

static inline int mt_probe_store(const unsigned char *pc, long *disp, int *loop, long tpoff)
{
    *loop = 0;
    if ((pc[0] & 0xfa) != 0x48 || pc[1] != 0x89) return -1;
    int mod = pc[2] >> 6, rm = pc[2] & 7;
    if (mod > 1 || rm == 4 || rm == 5) return -1;
    int c = rm | (pc[0] & 1) << 3;
    *disp = mod ? (signed char)pc[3] : 0;
    const unsigned char *local = pc - 9;
    int32_t offset = (int32_t)((uint32_t)local[5] | (uint32_t)local[6] << 8 | (uint32_t)local[7] << 16 | (uint32_t)local[8] << 24);
    if (local[0] == 0x64 && (local[1] & 0xfb) == 0x48 && local[2] == 0x8b && (local[3] & 0xc7) == 0x04 && local[4] == 0x25
        && (((local[3] >> 3) & 7) | (local[1] & 4) << 1) == c && offset == tpoff)
        return mt_probe_greg(c);
    const unsigned char *load = pc - 4;
    int rex = load[1];
    int lmod = load[3] >> 6, lreg = ((load[3] >> 3) & 7) | (rex & 4) << 1, lrm = load[3] & 7;
    if (load[0] == 0x64 && (rex & 0xfa) == 0x48 && load[2] == 0x8b && lmod == 0 && lreg == c && lrm != 4 && lrm != 5)
        return mt_probe_greg(c);
    *loop = mt_probe_loop_store(pc, mod ? 4 : 3, *disp);
    return *loop ? mt_probe_greg(c) : -1;
}

#endif
