package org.memtrace.x86;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Zydis 4.0's structure sizes, field offsets and enum values as {@link Zydis} reads them: written by hand from
 * the C headers, and checked against them by ZydisLayoutProbeTest through {@link #layoutFacts}.
 */
final class ZydisLayout {
    private ZydisLayout() {}

    static final long SIZEOF_DECODER = 20;
    static final long SIZEOF_INSTRUCTION = 328;
    static final long SIZEOF_OPERAND = 80;
    static final int MAX_OPERAND_COUNT = 10;
    static final int MAX_INSTRUCTION_LENGTH = 15;

    static final long INSN_MNEMONIC = 4;
    static final long INSN_LENGTH = 8;
    static final long INSN_OPERAND_COUNT = 24;
    static final long INSN_ATTRIBUTES = 32;
    static final long INSN_META_CATEGORY = 92;

    static final long OP_VISIBILITY = 4;
    static final long OP_ACTIONS = 8;
    static final long OP_SIZE = 16;
    static final long OP_TYPE = 32;
    static final long OP_REG_VALUE = 40;
    static final long OP_MEM_TYPE = 40;
    static final long OP_MEM_SEGMENT = 44;
    static final long OP_MEM_BASE = 48;
    static final long OP_MEM_INDEX = 52;
    static final long OP_MEM_SCALE = 56;
    static final long OP_MEM_DISP_VALUE = 72;
    static final long OP_IMM_IS_RELATIVE = 41;
    static final long OP_IMM_VALUE = 48;
    static final long OP_PTR_SEGMENT = 40;
    static final long OP_PTR_OFFSET = 44;

    static final long VERSION_MAJOR_4 = 0x0004_0000_0000_0000L;
    static final int MACHINE_MODE_LONG_64 = 0;
    static final int STACK_WIDTH_64 = 2;

    static final int OPERAND_TYPE_REGISTER = 1;
    static final int OPERAND_TYPE_MEMORY = 2;
    static final int OPERAND_TYPE_POINTER = 3;
    static final int OPERAND_TYPE_IMMEDIATE = 4;
    static final int VISIBILITY_EXPLICIT = 1;
    static final int VISIBILITY_IMPLICIT = 2;
    static final int VISIBILITY_HIDDEN = 3;
    static final int ACTION_READ = 1;
    static final int ACTION_WRITE = 2;
    static final int ACTION_CONDREAD = 4;
    static final int ACTION_CONDWRITE = 8;
    static final int MEMOP_TYPE_MEM = 1;
    static final int MEMOP_TYPE_AGEN = 2;
    static final int MEMOP_TYPE_MIB = 3;
    static final int MEMOP_TYPE_VSIB = 4;
    static final long ATTRIB_HAS_LOCK = 1L << 27;
    static final long ATTRIB_HAS_REP = 1L << 28;
    static final long ATTRIB_HAS_REPE = 1L << 29;
    static final long ATTRIB_HAS_REPNE = 1L << 30;
    static final int CATEGORY_CALL = 20;
    static final int CATEGORY_COND_BR = 28;
    static final int CATEGORY_UNCOND_BR = 96;
    static final int CATEGORY_RET = 75;
    static final int CATEGORY_SYSCALL = 89;
    static final int CATEGORY_SYSRET = 90;
    static final int CATEGORY_INTERRUPT = 43;
    static final int CATEGORY_NOP = 60;
    static final int CATEGORY_WIDENOP = 104;
    static final int CATEGORY_PREFETCH = 66;
    static final int REGISTER_RIP = 197;
    static final int REGISTER_RSP = 57;
    static final int REGISTER_RBP = 58;
    static final int REGISTER_FS = 202;
    static final int REGISTER_GS = 203;
    static final int REGISTER_MAX_VALUE = 265;
    static final int MNEMONIC_MAX_VALUE = 1754;
    static final int MNEMONIC_UD2 = 801;
    static final int MNEMONIC_HLT = 270;
    static final int MNEMONIC_INT3 = 287;

    /** The facts above under the names the C probe prints them, for ZydisLayoutProbeTest. */
    static Map<String, Long> layoutFacts() {
        var f = new LinkedHashMap<String, Long>();
        f.put("sizeof.ZydisDecoder", SIZEOF_DECODER);
        f.put("sizeof.ZydisDecodedInstruction", SIZEOF_INSTRUCTION);
        f.put("sizeof.ZydisDecodedOperand", SIZEOF_OPERAND);
        f.put("sizeof.enum", 4L);
        f.put("offset.ZydisDecodedInstruction.mnemonic", INSN_MNEMONIC);
        f.put("offset.ZydisDecodedInstruction.length", INSN_LENGTH);
        f.put("offset.ZydisDecodedInstruction.operand_count", INSN_OPERAND_COUNT);
        f.put("offset.ZydisDecodedInstruction.attributes", INSN_ATTRIBUTES);
        f.put("offset.ZydisDecodedInstruction.meta.category", INSN_META_CATEGORY);
        f.put("offset.ZydisDecodedOperand.visibility", OP_VISIBILITY);
        f.put("offset.ZydisDecodedOperand.actions", OP_ACTIONS);
        f.put("offset.ZydisDecodedOperand.size", OP_SIZE);
        f.put("offset.ZydisDecodedOperand.type", OP_TYPE);
        f.put("offset.ZydisDecodedOperand.reg.value", OP_REG_VALUE);
        f.put("offset.ZydisDecodedOperand.mem.type", OP_MEM_TYPE);
        f.put("offset.ZydisDecodedOperand.mem.segment", OP_MEM_SEGMENT);
        f.put("offset.ZydisDecodedOperand.mem.base", OP_MEM_BASE);
        f.put("offset.ZydisDecodedOperand.mem.index", OP_MEM_INDEX);
        f.put("offset.ZydisDecodedOperand.mem.scale", OP_MEM_SCALE);
        f.put("offset.ZydisDecodedOperand.mem.disp.value", OP_MEM_DISP_VALUE);
        f.put("offset.ZydisDecodedOperand.imm.is_relative", OP_IMM_IS_RELATIVE);
        f.put("offset.ZydisDecodedOperand.imm.value", OP_IMM_VALUE);
        f.put("offset.ZydisDecodedOperand.ptr.segment", OP_PTR_SEGMENT);
        f.put("offset.ZydisDecodedOperand.ptr.offset", OP_PTR_OFFSET);
        f.put("const.ZYDIS_MAX_OPERAND_COUNT", (long) MAX_OPERAND_COUNT);
        f.put("const.ZYDIS_VERSION", VERSION_MAJOR_4);
        f.put("const.ZYDIS_MACHINE_MODE_LONG_64", (long) MACHINE_MODE_LONG_64);
        f.put("const.ZYDIS_STACK_WIDTH_64", (long) STACK_WIDTH_64);
        f.put("const.ZYDIS_OPERAND_TYPE_REGISTER", (long) OPERAND_TYPE_REGISTER);
        f.put("const.ZYDIS_OPERAND_TYPE_MEMORY", (long) OPERAND_TYPE_MEMORY);
        f.put("const.ZYDIS_OPERAND_TYPE_POINTER", (long) OPERAND_TYPE_POINTER);
        f.put("const.ZYDIS_OPERAND_TYPE_IMMEDIATE", (long) OPERAND_TYPE_IMMEDIATE);
        f.put("const.ZYDIS_OPERAND_VISIBILITY_EXPLICIT", (long) VISIBILITY_EXPLICIT);
        f.put("const.ZYDIS_OPERAND_VISIBILITY_IMPLICIT", (long) VISIBILITY_IMPLICIT);
        f.put("const.ZYDIS_OPERAND_VISIBILITY_HIDDEN", (long) VISIBILITY_HIDDEN);
        f.put("const.ZYDIS_OPERAND_ACTION_READ", (long) ACTION_READ);
        f.put("const.ZYDIS_OPERAND_ACTION_WRITE", (long) ACTION_WRITE);
        f.put("const.ZYDIS_OPERAND_ACTION_CONDREAD", (long) ACTION_CONDREAD);
        f.put("const.ZYDIS_OPERAND_ACTION_CONDWRITE", (long) ACTION_CONDWRITE);
        f.put("const.ZYDIS_MEMOP_TYPE_MEM", (long) MEMOP_TYPE_MEM);
        f.put("const.ZYDIS_MEMOP_TYPE_AGEN", (long) MEMOP_TYPE_AGEN);
        f.put("const.ZYDIS_MEMOP_TYPE_MIB", (long) MEMOP_TYPE_MIB);
        f.put("const.ZYDIS_MEMOP_TYPE_VSIB", (long) MEMOP_TYPE_VSIB);
        f.put("const.ZYDIS_ATTRIB_HAS_LOCK", ATTRIB_HAS_LOCK);
        f.put("const.ZYDIS_ATTRIB_HAS_REP", ATTRIB_HAS_REP);
        f.put("const.ZYDIS_ATTRIB_HAS_REPE", ATTRIB_HAS_REPE);
        f.put("const.ZYDIS_ATTRIB_HAS_REPNE", ATTRIB_HAS_REPNE);
        f.put("const.ZYDIS_CATEGORY_CALL", (long) CATEGORY_CALL);
        f.put("const.ZYDIS_CATEGORY_COND_BR", (long) CATEGORY_COND_BR);
        f.put("const.ZYDIS_CATEGORY_UNCOND_BR", (long) CATEGORY_UNCOND_BR);
        f.put("const.ZYDIS_CATEGORY_RET", (long) CATEGORY_RET);
        f.put("const.ZYDIS_CATEGORY_SYSCALL", (long) CATEGORY_SYSCALL);
        f.put("const.ZYDIS_CATEGORY_SYSRET", (long) CATEGORY_SYSRET);
        f.put("const.ZYDIS_CATEGORY_INTERRUPT", (long) CATEGORY_INTERRUPT);
        f.put("const.ZYDIS_CATEGORY_NOP", (long) CATEGORY_NOP);
        f.put("const.ZYDIS_CATEGORY_WIDENOP", (long) CATEGORY_WIDENOP);
        f.put("const.ZYDIS_CATEGORY_PREFETCH", (long) CATEGORY_PREFETCH);
        f.put("const.ZYDIS_REGISTER_RIP", (long) REGISTER_RIP);
        f.put("const.ZYDIS_REGISTER_RSP", (long) REGISTER_RSP);
        f.put("const.ZYDIS_REGISTER_RBP", (long) REGISTER_RBP);
        f.put("const.ZYDIS_REGISTER_FS", (long) REGISTER_FS);
        f.put("const.ZYDIS_REGISTER_GS", (long) REGISTER_GS);
        f.put("const.ZYDIS_REGISTER_MAX_VALUE", (long) REGISTER_MAX_VALUE);
        f.put("const.ZYDIS_MNEMONIC_MAX_VALUE", (long) MNEMONIC_MAX_VALUE);
        f.put("const.ZYDIS_MNEMONIC_UD2", (long) MNEMONIC_UD2);
        f.put("const.ZYDIS_MNEMONIC_HLT", (long) MNEMONIC_HLT);
        f.put("const.ZYDIS_MNEMONIC_INT3", (long) MNEMONIC_INT3);
        return f;
    }
}
