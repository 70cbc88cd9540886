/* Checks both mirrors of Zydis 4.0's ABI against the installed headers. The agent's C mirror
 * (agent/zydis_abi.h, included from the agent's source tree) is checked at compile time: a field or a
 * constant that differs stops the build of this probe. The facts the Java binding hard-codes are printed,
 * one "name value" pair per line; ZydisLayoutProbeTest compiles this file and compares them with Zydis.java. */
#include <stddef.h>
#include <stdio.h>
#include <Zydis/Zydis.h>
#include "zydis_abi.h"

#define ZY_SAME_FIELD(mine, theirs) \
    _Static_assert(offsetof(struct zy_insn, mine) == offsetof(ZydisDecodedInstruction, theirs), #theirs)
#define ZY_SAME_OPERAND_FIELD(mine, theirs) \
    _Static_assert(offsetof(struct zy_operand, mine) == offsetof(ZydisDecodedOperand, theirs), #theirs)
_Static_assert(sizeof(struct zy_decoder) == sizeof(ZydisDecoder), "ZydisDecoder");
_Static_assert(sizeof(struct zy_insn) == sizeof(ZydisDecodedInstruction), "ZydisDecodedInstruction");
_Static_assert(sizeof(struct zy_operand) == sizeof(ZydisDecodedOperand), "ZydisDecodedOperand");
ZY_SAME_FIELD(mnemonic, mnemonic);
ZY_SAME_FIELD(length, length);
ZY_SAME_FIELD(operand_count, operand_count);
ZY_SAME_FIELD(attributes, attributes);
ZY_SAME_FIELD(category, meta.category);
ZY_SAME_FIELD(branch_type, meta.branch_type);
ZY_SAME_FIELD(disp, raw.disp.value);
ZY_SAME_FIELD(disp_size, raw.disp.size);
ZY_SAME_FIELD(disp_offset, raw.disp.offset);
ZY_SAME_FIELD(encoding, encoding);
ZY_SAME_FIELD(rex_offset, raw.rex.offset);
ZY_SAME_FIELD(vex_offset, raw.vex.offset);
ZY_SAME_FIELD(vex_size, raw.vex.size);
ZY_SAME_FIELD(evex_offset, raw.evex.offset);
ZY_SAME_FIELD(modrm_offset, raw.modrm.offset);
ZY_SAME_FIELD(sib_offset, raw.sib.offset);
ZY_SAME_FIELD(address_width, address_width);
ZY_SAME_FIELD(opcode_map, opcode_map);
ZY_SAME_FIELD(opcode, opcode);
ZY_SAME_FIELD(operand_width, operand_width);
ZY_SAME_OPERAND_FIELD(visibility, visibility);
ZY_SAME_OPERAND_FIELD(actions, actions);
ZY_SAME_OPERAND_FIELD(reg.value, reg.value);
ZY_SAME_OPERAND_FIELD(size, size);
ZY_SAME_OPERAND_FIELD(type, type);
ZY_SAME_OPERAND_FIELD(mem.type, mem.type);
ZY_SAME_OPERAND_FIELD(mem.segment, mem.segment);
ZY_SAME_OPERAND_FIELD(mem.base, mem.base);
ZY_SAME_OPERAND_FIELD(mem.index, mem.index);
ZY_SAME_OPERAND_FIELD(mem.scale, mem.scale);
ZY_SAME_OPERAND_FIELD(mem.disp, mem.disp.value);
ZY_SAME_OPERAND_FIELD(imm.is_relative, imm.is_relative);
_Static_assert(ZY_MAX_OPERANDS == ZYDIS_MAX_OPERAND_COUNT, "operand count");
_Static_assert(ZY_VERSION_4_0 == ZYDIS_VERSION >> 32, "version");
_Static_assert(ZY_MODE_LONG_64 == ZYDIS_MACHINE_MODE_LONG_64 && ZY_STACK_WIDTH_64 == ZYDIS_STACK_WIDTH_64, "mode");
_Static_assert(ZY_MNEMONIC_CALL == ZYDIS_MNEMONIC_CALL && ZY_MNEMONIC_JMP == ZYDIS_MNEMONIC_JMP &&
               ZY_MNEMONIC_DIV == ZYDIS_MNEMONIC_DIV && ZY_MNEMONIC_IDIV == ZYDIS_MNEMONIC_IDIV, "mnemonics");
_Static_assert(ZY_REG_NONE == ZYDIS_REGISTER_NONE && ZY_REG_RAX == ZYDIS_REGISTER_RAX &&
               ZY_REG_R15 == ZYDIS_REGISTER_R15 && ZY_REG_R15 - ZY_REG_RAX == ZYDIS_REGISTER_R15 - ZYDIS_REGISTER_RAX &&
               ZYDIS_REGISTER_RCX == ZY_REG_RAX + 1 && ZYDIS_REGISTER_RDI == ZY_REG_RAX + 7 &&
               ZY_REG_EIP == ZYDIS_REGISTER_EIP && ZY_REG_RIP == ZYDIS_REGISTER_RIP &&
               ZY_REG_FS == ZYDIS_REGISTER_FS && ZY_REG_GS == ZYDIS_REGISTER_GS, "registers");
_Static_assert(ZY_OPERAND_MEMORY == ZYDIS_OPERAND_TYPE_MEMORY && ZY_OPERAND_IMMEDIATE == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
               ZY_MEMOP_MEM == ZYDIS_MEMOP_TYPE_MEM && ZY_BRANCH_NEAR == ZYDIS_BRANCH_TYPE_NEAR, "operand kinds");
_Static_assert(ZY_OPERAND_REGISTER == ZYDIS_OPERAND_TYPE_REGISTER && ZY_VISIBLE_HIDDEN == ZYDIS_OPERAND_VISIBILITY_HIDDEN &&
               ZY_ACTION_READ == ZYDIS_OPERAND_ACTION_READ && ZY_ACTION_WRITE == ZYDIS_OPERAND_ACTION_WRITE &&
               ZY_ACTION_CONDREAD == ZYDIS_OPERAND_ACTION_CONDREAD && ZY_ACTION_CONDWRITE == ZYDIS_OPERAND_ACTION_CONDWRITE &&
               ZY_ENC_LEGACY == ZYDIS_INSTRUCTION_ENCODING_LEGACY && ZY_ENC_VEX == ZYDIS_INSTRUCTION_ENCODING_VEX &&
               ZY_ENC_EVEX == ZYDIS_INSTRUCTION_ENCODING_EVEX, "operand visibility and encodings");
_Static_assert(ZY_ATTRIB_HAS_MODRM == ZYDIS_ATTRIB_HAS_MODRM && ZY_ATTRIB_HAS_SIB == ZYDIS_ATTRIB_HAS_SIB &&
               ZY_ATTRIB_HAS_REX == ZYDIS_ATTRIB_HAS_REX, "attributes");
_Static_assert(ZY_REG_AL == ZYDIS_REGISTER_AL && ZY_REG_AH == ZYDIS_REGISTER_AH && ZY_REG_SPL == ZYDIS_REGISTER_SPL &&
               ZY_REG_R8B == ZYDIS_REGISTER_R8B && ZY_REG_AX == ZYDIS_REGISTER_AX && ZY_REG_EAX == ZYDIS_REGISTER_EAX &&
               ZYDIS_REGISTER_R15B + 1 == ZYDIS_REGISTER_AX && ZYDIS_REGISTER_R15W + 1 == ZYDIS_REGISTER_EAX &&
               ZYDIS_REGISTER_R15D + 1 == ZYDIS_REGISTER_RAX, "general registers");
_Static_assert(ZY_OPCODE_MAP_DEFAULT == ZYDIS_OPCODE_MAP_DEFAULT && ZY_ATTRIB_HAS_REP == ZYDIS_ATTRIB_HAS_REP &&
               ZY_ATTRIB_HAS_SEGMENT_FS == ZYDIS_ATTRIB_HAS_SEGMENT_FS && ZY_ATTRIB_HAS_SEGMENT_GS == ZYDIS_ATTRIB_HAS_SEGMENT_GS,
               "string instructions");
_Static_assert(ZY_ATTRIB_ANY_REP == (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE), "rep");
_Static_assert(ZY_CAT_CALL == ZYDIS_CATEGORY_CALL && ZY_CAT_COND_BR == ZYDIS_CATEGORY_COND_BR &&
               ZY_CAT_INTERRUPT == ZYDIS_CATEGORY_INTERRUPT && ZY_CAT_IO == ZYDIS_CATEGORY_IO &&
               ZY_CAT_IOSTRINGOP == ZYDIS_CATEGORY_IOSTRINGOP && ZY_CAT_RET == ZYDIS_CATEGORY_RET &&
               ZY_CAT_SEGOP == ZYDIS_CATEGORY_SEGOP && ZY_CAT_SGX == ZYDIS_CATEGORY_SGX &&
               ZY_CAT_SYSCALL == ZYDIS_CATEGORY_SYSCALL && ZY_CAT_SYSRET == ZYDIS_CATEGORY_SYSRET &&
               ZY_CAT_SYSTEM == ZYDIS_CATEGORY_SYSTEM && ZY_CAT_UINTR == ZYDIS_CATEGORY_UINTR &&
               ZY_CAT_UNCOND_BR == ZYDIS_CATEGORY_UNCOND_BR, "categories");

#define SIZE(t) printf("sizeof.%s %zu\n", #t, sizeof(t))
#define OFF(t, f, name) printf("offset.%s.%s %zu\n", #t, name, offsetof(t, f))
#define VAL(c) printf("const.%s %lld\n", #c, (long long)(c))

int main(void) {
    SIZE(ZydisDecoder);
    SIZE(ZydisDecodedInstruction);
    SIZE(ZydisDecodedOperand);
    OFF(ZydisDecodedInstruction, mnemonic, "mnemonic");
    OFF(ZydisDecodedInstruction, length, "length");
    OFF(ZydisDecodedInstruction, operand_count, "operand_count");
    OFF(ZydisDecodedInstruction, attributes, "attributes");
    OFF(ZydisDecodedInstruction, meta.category, "meta.category");
    OFF(ZydisDecodedOperand, visibility, "visibility");
    OFF(ZydisDecodedOperand, actions, "actions");
    OFF(ZydisDecodedOperand, size, "size");
    OFF(ZydisDecodedOperand, element_size, "element_size");
    OFF(ZydisDecodedOperand, element_count, "element_count");
    OFF(ZydisDecodedOperand, type, "type");
    OFF(ZydisDecodedOperand, reg.value, "reg.value");
    OFF(ZydisDecodedOperand, mem.type, "mem.type");
    OFF(ZydisDecodedOperand, mem.segment, "mem.segment");
    OFF(ZydisDecodedOperand, mem.base, "mem.base");
    OFF(ZydisDecodedOperand, mem.index, "mem.index");
    OFF(ZydisDecodedOperand, mem.scale, "mem.scale");
    OFF(ZydisDecodedOperand, mem.disp.has_displacement, "mem.disp.has_displacement");
    OFF(ZydisDecodedOperand, mem.disp.value, "mem.disp.value");
    OFF(ZydisDecodedOperand, imm.is_signed, "imm.is_signed");
    OFF(ZydisDecodedOperand, imm.is_relative, "imm.is_relative");
    OFF(ZydisDecodedOperand, imm.value, "imm.value");
    OFF(ZydisDecodedOperand, ptr.segment, "ptr.segment");
    OFF(ZydisDecodedOperand, ptr.offset, "ptr.offset");
    printf("sizeof.enum %zu\n", sizeof(ZydisMnemonic));
    VAL(ZYDIS_MAX_OPERAND_COUNT);
    VAL(ZYDIS_VERSION);
    VAL(ZYDIS_MACHINE_MODE_LONG_64);
    VAL(ZYDIS_STACK_WIDTH_64);
    VAL(ZYDIS_OPERAND_TYPE_REGISTER);
    VAL(ZYDIS_OPERAND_TYPE_MEMORY);
    VAL(ZYDIS_OPERAND_TYPE_POINTER);
    VAL(ZYDIS_OPERAND_TYPE_IMMEDIATE);
    VAL(ZYDIS_OPERAND_VISIBILITY_EXPLICIT);
    VAL(ZYDIS_OPERAND_VISIBILITY_IMPLICIT);
    VAL(ZYDIS_OPERAND_VISIBILITY_HIDDEN);
    VAL(ZYDIS_OPERAND_ACTION_READ);
    VAL(ZYDIS_OPERAND_ACTION_WRITE);
    VAL(ZYDIS_OPERAND_ACTION_CONDREAD);
    VAL(ZYDIS_OPERAND_ACTION_CONDWRITE);
    VAL(ZYDIS_MEMOP_TYPE_MEM);
    VAL(ZYDIS_MEMOP_TYPE_AGEN);
    VAL(ZYDIS_MEMOP_TYPE_MIB);
    VAL(ZYDIS_MEMOP_TYPE_VSIB);
    VAL(ZYDIS_ATTRIB_IS_RELATIVE);
    VAL(ZYDIS_ATTRIB_HAS_LOCK);
    VAL(ZYDIS_ATTRIB_HAS_REP);
    VAL(ZYDIS_ATTRIB_HAS_REPE);
    VAL(ZYDIS_ATTRIB_HAS_REPNE);
    VAL(ZYDIS_CATEGORY_CALL);
    VAL(ZYDIS_CATEGORY_COND_BR);
    VAL(ZYDIS_CATEGORY_UNCOND_BR);
    VAL(ZYDIS_CATEGORY_RET);
    VAL(ZYDIS_CATEGORY_SYSCALL);
    VAL(ZYDIS_CATEGORY_SYSRET);
    VAL(ZYDIS_CATEGORY_INTERRUPT);
    VAL(ZYDIS_CATEGORY_NOP);
    VAL(ZYDIS_CATEGORY_WIDENOP);
    VAL(ZYDIS_CATEGORY_PREFETCH);
    VAL(ZYDIS_CATEGORY_STRINGOP);
    VAL(ZYDIS_REGISTER_NONE);
    VAL(ZYDIS_REGISTER_RIP);
    VAL(ZYDIS_REGISTER_RSP);
    VAL(ZYDIS_REGISTER_RBP);
    VAL(ZYDIS_REGISTER_FS);
    VAL(ZYDIS_REGISTER_GS);
    VAL(ZYDIS_REGISTER_MAX_VALUE);
    VAL(ZYDIS_MNEMONIC_MAX_VALUE);
    VAL(ZYDIS_MNEMONIC_UD2);
    VAL(ZYDIS_MNEMONIC_HLT);
    VAL(ZYDIS_MNEMONIC_INT3);
    return 0;
}
