package org.memtrace.check;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** x86-64 general registers by their 64-bit names, and which of them a call may change (the SysV ABI). */
final class Registers {
    static final List<String> ALL = List.of("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
            "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15");
    static final Set<String> CALLER_SAVED = Set.of("rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11");
    private static final Map<String, String> FULL = new HashMap<>();
    private static final Set<String> WIDE = Set.copyOf(ALL.stream().map(r -> "%" + r).toList());

    static {
        String[][] legacy = {{"rax", "eax", "ax", "al", "ah"}, {"rbx", "ebx", "bx", "bl", "bh"}, {"rcx", "ecx", "cx", "cl", "ch"},
                {"rdx", "edx", "dx", "dl", "dh"}, {"rsi", "esi", "si", "sil"}, {"rdi", "edi", "di", "dil"},
                {"rbp", "ebp", "bp", "bpl"}, {"rsp", "esp", "sp", "spl"}};
        for (String[] names : legacy) for (String n : names) FULL.put("%" + n, names[0]);
        for (int i = 8; i <= 15; i++) {
            for (String suffix : new String[] {"", "d", "w", "b"}) FULL.put("%r" + i + suffix, "r" + i);
        }
    }

    private Registers() {}

    /** "rax" for any of %rax %eax %ax %al %ah; null for anything else. */
    static String full(String operand) {
        return FULL.get(operand);
    }

    /** Whether the operand is a 32-bit register (a write to it zeroes the upper half). */
    static boolean dword(String operand) {
        return operand.matches("%e(ax|bx|cx|dx|si|di|bp|sp)|%r([89]|1[0-5])d");
    }

    /** Whether the operand is a whole 64-bit register (a write to a part is not a linear value). */
    static boolean wide(String operand) {
        return WIDE.contains(operand);
    }
}
