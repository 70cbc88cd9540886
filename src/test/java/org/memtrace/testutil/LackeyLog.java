package org.memtrace.testutil;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads a log of Valgrind's Lackey ({@code --trace-mem=yes}): an {@code I  ip,size} line per instruction, then
 * {@code  L addr,size}, {@code  S …} and {@code  M …} lines for its data accesses. A modify is a load then a
 * store of the same address, which is how memtrace records a read-modify-write.
 */
public final class LackeyLog {
    /** One data access: {@code kind} is 'L' or 'S', {@code ip} the instruction it belongs to. */
    @FunctionalInterface
    public interface Visitor {
        void access(long ip, char kind, long address);
    }

    private LackeyLog() {
    }

    public static void forEachAccess(Path log, Visitor visitor) throws IOException {
        long ip = 0;
        for (String line : Files.readAllLines(log)) {
            if (line.startsWith("I  ")) {
                ip = Long.parseUnsignedLong(line.substring(3, line.indexOf(',')), 16);
                continue;
            }
            if (line.length() < 3 || line.charAt(0) != ' ') continue;
            char kind = line.charAt(1);
            if (kind != 'L' && kind != 'S' && kind != 'M') continue;
            long address = Long.parseUnsignedLong(line.substring(3, line.indexOf(',')), 16);
            if (kind == 'M') {
                visitor.access(ip, 'L', address);
                visitor.access(ip, 'S', address);
            } else {
                visitor.access(ip, kind, address);
            }
        }
    }
}
