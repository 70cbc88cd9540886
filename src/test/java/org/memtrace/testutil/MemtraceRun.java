package org.memtrace.testutil;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code memtrace run --mode rewrite --addresses raw -o -} on a program and tallies the trace per
 * instruction ({@link InstructionTally}) as it streams out: {@code # module PATH bias=HEX} lines place the
 * objects, threads are numbered in the order of their kernel thread ids (creation order, the main thread 0), the
 * {@code L}/{@code S} lines are the accesses, and the {@code Y}/{@code W}/{@code G} lines of a rep string
 * instruction ({@code rep_movs}, {@code rep_stos}, {@code rep_lods}) its bytes. The program's standard output
 * goes to a file, as under Valgrind; memtrace's standard error is returned. The run is made under
 * {@code strace -f} for its mmap, mremap and brk calls (the trace has the program's own mmaps but not libc's:
 * malloc's large chunks, thread stacks), so the trace is written to a file and read once the log is complete:
 * the program's process and threads are the trace's {@code # agent pid=} and {@code # thread TID} lines, their
 * calls after the program's last execve the ones kept ({@link MappingLog}).
 */
public final class MemtraceRun {
    private MemtraceRun() {}

    public record Result(int status, String stderr, InstructionTally tally) {}

    public static Result run(Path dir, List<String> command, Map<String, String> env, Path stdin, InstructionTally tally)
            throws IOException, InterruptedException {
        return run(dir, command, env, stdin, tally, false);
    }

    /**
     * As {@link #run(Path, List, Map, Path, InstructionTally)}; {@code fixed}: with address space randomization off
     * ({@code setarch -R}), so that a program whose work depends on where its memory lies (python3) does the same
     * work in every run.
     */
    public static Result run(Path dir, List<String> command, Map<String, String> env, Path stdin, InstructionTally tally, boolean fixed)
            throws IOException, InterruptedException {
        Path trace = dir.resolve("memtrace.trace"), calls = dir.resolve("memtrace.strace");
        List<String> cmd = new ArrayList<>(fixed ? List.of("setarch", "-R") : List.of());
        cmd.addAll(List.of("strace", "-f", "--seccomp-bpf", "-e", "trace=execve,mmap,mremap,brk", "-o",
                calls.toString()));
        cmd.addAll(Cli.command("run", "--mode", "rewrite", "--addresses", "raw", "-q", "-o", trace.toString(), "--"));
        cmd.addAll(command);
        Path err = dir.resolve("memtrace.stderr"), out = dir.resolve("memtrace.stdout");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectError(err.toFile())
                .redirectOutput(out.toFile()) // a file, as under Valgrind (/dev/null would make stdio ask isatty)
                .redirectInput(stdin == null ? Path.of("/dev/null").toFile() : stdin.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(20, TimeUnit.MINUTES)) p.destroyForcibly();
        try {
            if (!Files.exists(trace)) return new Result(p.exitValue(), Files.readString(err, StandardCharsets.ISO_8859_1), tally);
            mappings(trace, calls, tally.mappings);
            try (BufferedReader in = Files.newBufferedReader(trace, StandardCharsets.UTF_8)) {
                parse(in, tally);
            }
        } finally {
            Files.deleteIfExists(trace);
        }
        return new Result(p.exitValue(), Files.readString(err, StandardCharsets.ISO_8859_1), tally); // the program's stdout too: any bytes
    }

    /** The mappings the program's process and threads made after its last execve, from strace's log of the run. */
    static void mappings(Path trace, Path calls, MappingLog log) throws IOException {
        java.util.Set<String> ids = new java.util.HashSet<>();
        try (BufferedReader in = Files.newBufferedReader(trace, StandardCharsets.UTF_8)) {
            for (String line; (line = in.readLine()) != null;) {
                if (line.startsWith("# agent pid=")) ids.add(line.substring(12, line.indexOf(' ', 12)));
                else if (line.startsWith("# thread ")) ids.add(line.split(" ")[2]);
            }
        }
        List<String> kept = new ArrayList<>();
        Map<String, String> unfinished = new HashMap<>();
        for (String line : Files.readAllLines(calls, StandardCharsets.ISO_8859_1)) {
            String pid = line.substring(0, Math.max(0, line.indexOf(' ')));
            if (!ids.contains(pid)) continue;
            if (line.endsWith(" <unfinished ...>")) {
                unfinished.put(pid, line.substring(0, line.length() - " <unfinished ...>".length()));
                continue;
            }
            int resumed = line.indexOf(" resumed>");
            if (resumed >= 0 && unfinished.containsKey(pid)) line = unfinished.remove(pid) + line.substring(resumed + 9);
            // strace pads the pid to its column ("9005  brk(…"): a 4-digit pid has two spaces after it
            if (line.substring(pid.length()).stripLeading().startsWith("execve(") && line.endsWith(" = 0")) kept.clear();
            else kept.add(line);
        }
        kept.forEach(log::straceLine);
    }

    static void parse(BufferedReader in, InstructionTally tally) throws IOException {
        Map<Long, Integer> threads = new HashMap<>();
        for (String line; (line = in.readLine()) != null;) {
            if (line.startsWith("# ")) {
                if (line.startsWith("# module ")) {
                    int bias = line.lastIndexOf(" bias=0x");
                    long b = Long.parseUnsignedLong(line.substring(bias + 8, line.indexOf(' ', bias + 8)), 16);
                    tally.addModule(Path.of(unescape(line.substring(9, bias))), b);
                }
                continue;
            }
            char type = line.charAt(0);
            if (type != 'L' && type != 'S' && type != 'Y' && type != 'W' && type != 'G') continue;
            String[] f = line.substring(line.indexOf(':') + 1).split(",");
            switch (type) {
                case 'L', 'S' -> {
                    long ip = hex(f[2]);
                    int t = thread(threads, f[4]);
                    if (!tally.inWindow(ip, t)) {
                        tally.outside++;
                        continue;
                    }
                    var site = tally.site(t, tally.name(ip));
                    tally.access(site, type, hex(f[0]), Integer.parseInt(f[3]));
                }
                case 'Y' -> { // dst,region,src,region,length,code,tid,via
                    if (!f[7].startsWith("rep_")) continue;
                    long ip = hex(f[5]);
                    int t = thread(threads, f[6]);
                    if (!tally.inWindow(ip, t)) continue;
                    var site = tally.site(t, tally.name(ip));
                    tally.block(site, 'L', Long.parseLong(f[4]));
                    tally.block(site, 'S', Long.parseLong(f[4]));
                }
                default -> { // W and G: data,region,length,code,tid,via
                    if (!f[5].startsWith("rep_")) continue;
                    long ip = hex(f[3]);
                    int t = thread(threads, f[4]);
                    if (!tally.inWindow(ip, t)) continue;
                    var site = tally.site(t, tally.name(ip));
                    tally.block(site, type == 'W' ? 'S' : 'L', Long.parseLong(f[2]));
                }
            }
        }
        // threads in creation order, as Valgrind numbers them: kernel thread ids grow as threads are created (the
        // trace's order is the order buffers were written in, which a second thread may win)
        tally.renumber(threads.entrySet().stream().sorted(Map.Entry.comparingByKey()).map(Map.Entry::getValue).toList());
    }

    private static int thread(Map<Long, Integer> threads, String tid) {
        return threads.computeIfAbsent(Long.parseLong(tid), k -> threads.size());
    }

    private static long hex(String s) {
        return Long.parseUnsignedLong(s.substring(2), 16);
    }

    /** MadtWriter's escapes (%XX) undone. */
    static String unescape(String s) {
        if (s.indexOf('%') < 0) return s;
        List<Byte> bytes = new ArrayList<>();
        byte[] raw = s.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < raw.length; i++) {
            if (raw[i] == '%' && i + 2 < raw.length) {
                bytes.add((byte) Integer.parseInt(new String(raw, i + 1, 2, StandardCharsets.US_ASCII), 16));
                i += 2;
            } else {
                bytes.add(raw[i]);
            }
        }
        byte[] out = new byte[bytes.size()];
        for (int i = 0; i < out.length; i++) out[i] = bytes.get(i);
        return new String(out, StandardCharsets.UTF_8);
    }
}
