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
    uint8_t _a0[3];
    uint32_t encoding;           /* ZY_ENC_*: legacy, VEX, EVEX, ... */
    uint32_t opcode_map;         /* ZY_OPCODE_MAP_DEFAULT: one-byte opcodes */
    uint8_t opcode;
    uint8_t stack_width;
    uint8_t operand_width;       /* bits */
    uint8_t address_width;       /* bits */
    uint8_t operand_count;
    uint8_t _b[7];
    uint64_t attributes;
    uint8_t _c[52];
    uint32_t category;           /* meta.category */
    uint8_t _d[8];
    uint32_t branch_type;        /* meta.branch_type */
    uint8_t _e[136];
    uint8_t rex_offset;          /* raw.rex.offset (valid with ZY_ATTRIB_HAS_REX) */
    uint8_t _e1[3];
    uint8_t vex_offset;          /* raw.vex.offset */
    uint8_t vex_size;            /* raw.vex.size: 2 (C5) or 3 (C4) */
    uint8_t _e2[4];
    uint8_t evex_offset;         /* raw.evex.offset */
    uint8_t _e3[3];
    uint8_t modrm_offset;        /* raw.modrm.offset */
    uint8_t _e4[3];
    uint8_t sib_offset;          /* raw.sib.offset (valid with ZY_ATTRIB_HAS_SIB) */
    uint8_t _e5[1];
    int64_t disp;                /* raw.disp.value */
    uint8_t disp_size;           /* raw.disp.size, in bits */
    uint8_t disp_offset;         /* raw.disp.offset */
    uint8_t _f[54];
};
struct zy_operand {              /* ZydisDecodedOperand */
    uint8_t _a0[4];
    uint32_t visibility;         /* ZY_VISIBLE_* */
    uint8_t actions;             /* ZY_ACTION_* */
    uint8_t _a1[7];
    uint16_t size;               /* bits */
    uint8_t _b[14];
    uint32_t type;
    uint32_t _c;
    union {
        struct { uint32_t type, segment, base, index; uint8_t scale; uint8_t _d[15]; int64_t disp; } mem;
        struct { uint8_t is_signed, is_relative; } imm;
        struct { uint32_t value; } reg;
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
#define ZY_MNEMONIC_POP 603
#define ZY_MNEMONIC_PUSH 657
#define ZY_REG_NONE 0
#define ZY_REG_RAX 53            /* RAX..R15 in encoding order */
#define ZY_REG_R15 68
#define ZY_REG_EIP 196
#define ZY_REG_RIP 197
#define ZY_REG_FS 202
#define ZY_REG_GS 203
#define ZY_OPERAND_MEMORY 2
#define ZY_OPERAND_IMMEDIATE 4
#define ZY_OPERAND_REGISTER 1
#define ZY_MEMOP_MEM 1
#define ZY_VISIBLE_HIDDEN 3
#define ZY_ACTION_READ 1
#define ZY_ACTION_WRITE 2
#define ZY_ACTION_CONDREAD 4
#define ZY_ACTION_CONDWRITE 8
#define ZY_ENC_LEGACY 0
#define ZY_ENC_VEX 3
#define ZY_ENC_EVEX 4
#define ZY_ATTRIB_HAS_MODRM (1ULL << 0)
#define ZY_ATTRIB_HAS_SIB (1ULL << 1)
#define ZY_ATTRIB_HAS_REX (1ULL << 2)
#define ZY_REG_AL 1              /* AL CL DL BL AH CH DH BH SPL BPL SIL DIL R8B..R15B, then AX.., EAX.., RAX.. */
#define ZY_REG_AH 5
#define ZY_REG_SPL 9
#define ZY_REG_R8B 13
#define ZY_REG_AX 21
#define ZY_REG_EAX 37
#define ZY_BRANCH_NEAR 2
#define ZY_OPCODE_MAP_DEFAULT 0
#define ZY_ATTRIB_HAS_REP (1ULL << 28)
#define ZY_ATTRIB_HAS_REPE (1ULL << 29)
#define ZY_ATTRIB_HAS_REPNE (1ULL << 30)
#define ZY_ATTRIB_HAS_SEGMENT_FS (1ULL << 41)
#define ZY_ATTRIB_HAS_SEGMENT_GS (1ULL << 42)
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
