/*
 * The part of Zydis 4.0's ABI that memtrace uses from C, declared here so that neither building nor
 * running the agent needs the Zydis headers: the one C mirror of it. The Java binding (x86/Zydis.java)
 * hard-codes its own offsets; ZydisLayoutProbeTest compiles src/test/resources/org/memtrace/x86/zydis_probe.c,
 * which includes this file, checks every field and constant here against the installed headers at compile
 * time and prints the facts Zydis.java is compared with: one probe checks both mirrors.
 */
#ifndef MEMTRACE_ZYDIS_ABI_H
#define MEMTRACE_ZYDIS_ABI_H

#include <stdint.h>

struct zy_decoder { uint32_t opaque[5]; };
struct zy_insn {                 /* ZydisDecodedInstruction */
    uint32_t machine_mode;
    uint32_t mnemonic;
    uint8_t length;
    uint8_t _a[15];
    uint8_t operand_count;
    uint8_t _b[7];
    uint64_t attributes;
    uint8_t _c[52];
    uint32_t category;           /* meta.category */
    uint8_t _d[8];
    uint32_t branch_type;        /* meta.branch_type */
    uint8_t _e[156];
    int64_t disp;                /* raw.disp.value */
    uint8_t disp_size;           /* raw.disp.size, in bits */
    uint8_t disp_offset;         /* raw.disp.offset */
    uint8_t _f[54];
};
struct zy_operand {              /* ZydisDecodedOperand */
    uint8_t _a[16];
    uint16_t size;               /* bits */
    uint8_t _b[14];
    uint32_t type;
    uint32_t _c;
    union {
        struct { uint32_t type, segment, base, index; uint8_t scale; uint8_t _d[15]; int64_t disp; } mem;
        struct { uint8_t is_signed, is_relative; } imm;
    };
};
#define ZY_MAX_OPERANDS 10
#define ZY_FAILED(status) (((status) & 0x80000000u) != 0)
#define ZY_VERSION_4_0 0x00040000u   /* ZydisGetVersion() >> 32: major 4, minor 0 */
#define ZY_MODE_LONG_64 0
#define ZY_STACK_WIDTH_64 2
#define ZY_MNEMONIC_CALL 67
#define ZY_MNEMONIC_DIV 147
#define ZY_MNEMONIC_IDIV 274
#define ZY_MNEMONIC_JMP 307
#define ZY_REG_NONE 0
#define ZY_REG_RAX 53            /* RAX..R15 in encoding order */
#define ZY_REG_R15 68
#define ZY_REG_EIP 196
#define ZY_REG_RIP 197
#define ZY_REG_FS 202
#define ZY_REG_GS 203
#define ZY_OPERAND_MEMORY 2
#define ZY_OPERAND_IMMEDIATE 4
#define ZY_MEMOP_MEM 1
#define ZY_BRANCH_NEAR 2
#define ZY_ATTRIB_ANY_REP ((1ULL << 28) | (1ULL << 29) | (1ULL << 30)) /* HAS_REP, HAS_REPE, HAS_REPNE */
/* ZydisInstructionCategory: the categories that change control flow or the machine's state */
#define ZY_CAT_CALL 20
#define ZY_CAT_COND_BR 28
#define ZY_CAT_INTERRUPT 43
#define ZY_CAT_IO 44
#define ZY_CAT_IOSTRINGOP 45
#define ZY_CAT_RET 75
#define ZY_CAT_SEGOP 78
#define ZY_CAT_SGX 82
#define ZY_CAT_SYSCALL 89
#define ZY_CAT_SYSRET 90
#define ZY_CAT_SYSTEM 91
#define ZY_CAT_UINTR 95
#define ZY_CAT_UNCOND_BR 96

#endif
