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
 * goes to memtrace's standard error (the trace holds standard output), which is returned.
 */
public final class MemtraceRun {
    private MemtraceRun() {}

    public record Result(int status, String stderr, InstructionTally tally) {}

    public static Result run(Path dir, List<String> command, Map<String, String> env, Path stdin, InstructionTally tally)
            throws IOException, InterruptedException {
        List<String> cmd = Cli.command("run", "--mode", "rewrite", "--addresses", "raw", "-q", "-o", "-", "--");
        cmd.addAll(command);
        Path err = dir.resolve("memtrace.stderr");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectError(err.toFile())
                .redirectInput(stdin == null ? Path.of("/dev/null").toFile() : stdin.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8), 1 << 20)) {
            parse(in, tally);
        } finally {
            if (!p.waitFor(20, TimeUnit.MINUTES)) p.destroyForcibly();
        }
        return new Result(p.exitValue(), Files.readString(err, StandardCharsets.ISO_8859_1), tally); // the program's stdout too: any bytes
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
