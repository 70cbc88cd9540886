/* Prints the Zydis 4.0 layout facts the Java binding hard-codes, one "name value" pair per line.
 * ZydisLayoutProbeTest compiles it against the installed headers and compares with Zydis.java. */
#include <stddef.h>
#include <stdio.h>
#include <Zydis/Zydis.h>

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
