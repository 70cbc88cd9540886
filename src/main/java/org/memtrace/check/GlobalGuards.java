package org.memtrace.check;

import java.util.ArrayList;
import java.util.List;

/**
 * A global redzone at the start of each object's {@code .bss}, {@code .data} and {@code .rodata}: gcc puts a
 * redzone after every global but none before the first, so an underflow of an object's first global landed in
 * whatever the linker put before it (the C start files' data, another object's last redzone or its descriptor
 * array, copied variables such as {@code stdout}) and was not seen, or seen as the wrong object's overflow.
 * Each object now begins those sections with 32 bytes that nothing refers to, which a constructor poisons as a
 * global redzone ({@code __memtrace_check_guards} in the runtime); the report names the nearest global above
 * it ({@code global underflow: ring-4}). Costs 96 bytes and one constructor call per object.
 */
final class GlobalGuards {
    private static final String[] SECTIONS = {".bss", ".data", ".section\t.rodata"};
    private static final String[] LABELS = {".Lmtc_guard_bss", ".Lmtc_guard_data", ".Lmtc_guard_rodata"};

    private GlobalGuards() {}

    /** {@code lines} (the checked assembly) with the guards first and their constructor last; Intel syntax is left as it is. */
    static List<String> around(List<String> lines) {
        if (lines.stream().anyMatch(l -> l.strip().startsWith(".intel_syntax"))) return lines;
        List<String> out = new ArrayList<>(lines.size() + 24);
        for (int i = 0; i < SECTIONS.length; i++) {
            out.add("\t" + SECTIONS[i]);
            out.add("\t.align 32");
            out.add(LABELS[i] + ":");
            out.add("\t.zero\t32");
        }
        out.add("\t.text");
        out.addAll(lines);
        out.add("\t.text");
        out.add(".Lmtc_guard_ctor:");
        out.add("\tleaq\t" + LABELS[0] + "(%rip), %rdi");
        out.add("\tleaq\t" + LABELS[1] + "(%rip), %rsi");
        out.add("\tleaq\t" + LABELS[2] + "(%rip), %rdx");
        out.add("\tjmp\t__memtrace_check_guards@PLT");
        out.add("\t.section\t.init_array,\"aw\"");
        out.add("\t.align 8");
        out.add("\t.quad\t.Lmtc_guard_ctor");
        return out;
    }
}
