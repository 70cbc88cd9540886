package org.memtrace.check;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A call gcc's outline instrumentation made ({@code call __asan_load4@PLT}): which access it checks.
 *
 * @param size bytes, 0 for {@code __asan_loadN}/{@code __asan_storeN} (size in %rsi)
 * @param store whether the access writes
 */
record CheckCall(int size, boolean store) {
    private static final Pattern CALL = Pattern.compile("__asan_(load|store)(1|2|4|8|16|N)(_noabort)?(@PLT)?");

    /** The check an instruction calls, or null when it is no check call. */
    static CheckCall of(AsmLine line) {
        if (!(line instanceof AsmLine.Instruction in) || !in.mnemonic().startsWith("call") || in.operands().size() != 1) {
            return null;
        }
        Matcher m = CALL.matcher(in.operands().getFirst());
        if (!m.matches()) return null;
        return new CheckCall(m.group(2).equals("N") ? 0 : Integer.parseInt(m.group(2)), m.group(1).equals("store"));
    }

    /** Any other call: a boundary of the pruner's blocks (it may free, or change what a pointer points to). */
    static boolean otherCall(AsmLine line) {
        return line instanceof AsmLine.Instruction in && in.mnemonic().startsWith("call") && of(line) == null;
    }
}
