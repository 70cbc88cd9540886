package org.memtrace.testutil;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs a program under Valgrind's Lackey ({@code --trace-mem=yes}) and tallies its accesses per instruction
 * ({@link InstructionTally}). Lackey's trace names no module and no thread, so Valgrind is asked for both in the
 * same log, in order with the trace: {@code -v -v} prints {@code Reading syms from PATH} and then the text's
 * {@code svma 0x…, avma 0x…} for each object it maps (load bias = avma − svma), {@code Discarding syms at
 * 0xA-0xB} when one is unmapped, and {@code --trace-sched=yes} a {@code SCHED[n]:} line whenever thread n
 * takes the CPU (Valgrind runs one thread at a time; n counts threads in creation order, 1 the main one), and
 * {@code --trace-syscalls=yes} the program's mmap, mremap and brk calls with their results, which place the
 * mappings its other accesses are named by ({@link MappingLog}). The log goes through a FIFO: a python3 start-up
 * is gigabytes of text.
 */
public final class LackeyRun {
    private LackeyRun() {}

    public record Result(int status, String stdout, InstructionTally tally) {}

    public static Result run(Path dir, List<String> command, Map<String, String> env, Path stdin, InstructionTally tally)
            throws IOException, InterruptedException {
        Path fifo = dir.resolve("lackey.fifo");
        Files.deleteIfExists(fifo);
        Gcc.run(List.of("mkfifo", fifo.toString()));
        // valgrind.bin itself: Debian's valgrind script adds LD_LIBRARY_PATH and PWD to the program's environment
        String valgrind = Files.isExecutable(Path.of("/usr/bin/valgrind.bin")) ? "/usr/bin/valgrind.bin" : "valgrind";
        List<String> cmd = new ArrayList<>(List.of(valgrind, "-v", "-v", "--trace-sched=yes", "--trace-syscalls=yes", "--tool=lackey",
                "--trace-mem=yes", "--log-file=" + fifo));
        cmd.addAll(command);
        Path out = dir.resolve("lackey.stdout");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD)
                .redirectInput(stdin == null ? Path.of("/dev/null").toFile() : stdin.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(Files.newInputStream(fifo), StandardCharsets.ISO_8859_1), 1 << 20)) {
            parse(in, tally);
        } finally {
            if (!p.waitFor(20, TimeUnit.MINUTES)) p.destroyForcibly();
        }
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.ISO_8859_1), tally); // any bytes
    }

    static void parse(BufferedReader in, InstructionTally tally) throws IOException {
        String pendingSyms = null, pendingCall = null;
        int thread = 0;
        long ip = 0;
        boolean counted = false;
        InstructionTally.Site site = null;
        // a load held back: Valgrind translates xchg and lock cmpxchg with memory as a load and then a CAS,
        // which Lackey prints as "L a" and "M a"; the instruction accesses a once (L+S), as memtrace records
        long heldAddress = 0;
        int heldSize = -1;
        for (String line; (line = in.readLine()) != null;) {
            if (heldSize >= 0 && !line.startsWith(" M ")) {
                tally.access(site, 'L', heldAddress, heldSize);
                heldSize = -1;
            }
            if (line.startsWith("I  ")) {
                ip = hex(line, 3, line.indexOf(','));
                counted = false;
                site = null;
                continue;
            }
            if (line.length() > 3 && line.charAt(0) == ' ' && line.charAt(2) == ' ') {
                char kind = line.charAt(1);
                if (kind != 'L' && kind != 'S' && kind != 'M') continue;
                if (!counted) {
                    // the window is decided once per executed instruction, at its first access
                    counted = true;
                    site = tally.inWindow(ip, thread) ? tally.site(thread, tally.name(ip)) : null;
                }
                if (site == null) {
                    tally.outside++;
                    continue;
                }
                int comma = line.indexOf(',');
                long address = hex(line, 3, comma);
                int size = Integer.parseInt(line, comma + 1, line.length(), 10);
                if (heldSize >= 0 && (heldAddress != address || heldSize != size)) tally.access(site, 'L', heldAddress, heldSize);
                heldSize = -1;
                if (kind == 'L') {
                    heldAddress = address;
                    heldSize = size;
                } else if (kind == 'M') {
                    tally.access(site, 'L', address, size);
                    tally.access(site, 'S', address, size);
                } else {
                    tally.access(site, kind, address, size);
                }
                continue;
            }
            if (pendingCall != null && line.startsWith(" --> ")) {
                tally.mappings.valgrindLine(pendingCall + line);
                pendingCall = null;
                continue;
            }
            int call = line.indexOf("SYSCALL[");
            if (call >= 0) {
                // a call's result follows on its line, or (when Valgrind reads an object's symbols while it maps
                // it) on a later line of its own starting " --> ", the symbol lines starting on the call's line
                int inner = line.indexOf(")--", call);
                if (inner >= 0) {
                    pendingCall = line.substring(0, inner + 1);
                    line = line.substring(inner + 1);
                } else if (line.contains(" --> ")) {
                    tally.mappings.valgrindLine(line);
                    continue;
                } else {
                    pendingCall = line;
                    continue;
                }
            }
            if (!line.startsWith("--")) continue;
            int at = line.indexOf("-- ", 2);
            if (at < 0) continue;
            String text = line.substring(at + 3).strip();
            if (text.startsWith("SCHED[")) {
                thread = Integer.parseInt(text, 6, text.indexOf(']'), 10) - 1;
            } else if (text.startsWith("Reading syms from ")) {
                pendingSyms = text.substring("Reading syms from ".length());
            } else if (text.startsWith("svma 0x") && pendingSyms != null) {
                int comma = text.indexOf(',');
                long svma = Long.parseUnsignedLong(text.substring(7, comma), 16);
                long avma = Long.parseUnsignedLong(text.substring(text.indexOf("avma 0x") + 7).strip(), 16);
                tally.addModule(Path.of(pendingSyms), avma - svma);
                pendingSyms = null;
            } else if (text.startsWith("Discarding syms at 0x")) {
                String[] range = text.substring("Discarding syms at ".length(), text.indexOf(' ', "Discarding syms at ".length())).split("-");
                tally.removeModules(Long.parseUnsignedLong(range[0].substring(2), 16), Long.parseUnsignedLong(range[1].substring(2), 16));
            }
        }
        if (heldSize >= 0) tally.access(site, 'L', heldAddress, heldSize);
    }

    static long hex(String s, int from, int to) {
        long v = 0;
        for (int i = from; i < to; i++) v = (v << 4) | Character.digit(s.charAt(i), 16);
        return v;
    }
}
