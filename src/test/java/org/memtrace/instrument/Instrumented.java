package org.memtrace.instrument;

import org.memtrace.testutil.Gcc;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Builds C fixtures through the rewriter (gcc -S, {@link Rewriter}, gcc on the instrumented .s with the
 * stub runtime mt_stub_rt.c) and runs them, reading the stub's record dump.
 */
final class Instrumented {
    private Instrumented() {
    }

    /** One record as the stub dumps it; {@code insn} is 0 for a site outside the main program. */
    record Record(long insn, int kind, int size, int access, int flags, long w0, int weightMa, int weightAia,
                  int blockRefs) {
    }

    record Run(int status, String stdout, List<Record> records, int foreignRecords) {
    }

    /** The real assembler, the way AsStep runs it for the labeled copy. */
    static final Rewriter.Assembler AS = (source, object) -> {
        Process p = new ProcessBuilder("as", "--64", "--keep-locals", "-o", object.toString(), source.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            System.err.println(out);
            return false;
        }
        return true;
    };

    static Path fixture(Path dir, String source) throws IOException {
        Path src = dir.resolve(source);
        if (!Files.exists(src)) {
            try (InputStream in = Instrumented.class.getResourceAsStream("/c/" + source)) {
                if (in == null) throw new IOException("no fixture " + source);
                Files.copy(in, src);
            }
        }
        return src;
    }

    /** The compiler's .s of a fixture. */
    static Path assembly(Path dir, String source, String name, List<String> flags) throws Exception {
        Path s = dir.resolve(name + ".s");
        var command = new ArrayList<>(List.of("gcc", "-S", "-o", s.toString()));
        command.addAll(flags);
        command.add(fixture(dir, source).toString());
        Gcc.run(command);
        return s;
    }

    static Rewriter.Result rewrite(Path s, Path out, CcOptions options) throws Exception {
        return new Rewriter(options, AS).rewrite(s, out);
    }

    /** As memtrace cc does for an object of an executable: group probes read the cursor at its link-time offset. */
    static Rewriter.Result rewriteForExecutable(Path s, Path out, CcOptions options) throws Exception {
        return new Rewriter(options, AS, true).rewrite(s, out);
    }

    static Path stub(Path dir) throws Exception {
        Path o = dir.resolve("mt_stub_rt.o");
        if (!Files.exists(o)) {
            // the stub reads probes with the runtime's decoder, agent/include/mt_probe.h
            Gcc.run(List.of("gcc", "-O2", "-fPIC", "-I" + Path.of("agent/include").toAbsolutePath(), "-c", "-o", o.toString(),
                    fixture(dir, "mt_stub_rt.c").toString()));
        }
        return o;
    }

    /** Compiles {@code source} to .s, rewrites it, and links the instrumented program with the stub. */
    static Path program(Path dir, String source, String name, CcOptions options, List<String> flags,
                        String... linkExtra) throws Exception {
        Path s = assembly(dir, source, name, flags);
        Path mt = dir.resolve(name + ".mt.s");
        // the choice the gcc wrapper makes: a -fPIC object may go into a shared library
        Rewriter.Result r = flags.contains("-fPIC") ? rewrite(s, mt, options) : rewriteForExecutable(s, mt, options);
        if (!r.warnings().isEmpty()) {
            System.err.println(r.warnings());
        }
        Path exe = dir.resolve(name);
        var command = new ArrayList<>(List.of("gcc", "-o", exe.toString()));
        command.addAll(flags);
        command.add(mt.toString());
        command.add(stub(dir).toString());
        command.addAll(List.of(linkExtra));
        Gcc.run(command);
        return exe;
    }

    static Path plain(Path dir, String source, String name, List<String> flags, String... linkExtra) throws Exception {
        Path exe = dir.resolve(name);
        var command = new ArrayList<>(List.of("gcc", "-o", exe.toString()));
        command.addAll(flags);
        command.add(fixture(dir, source).toString());
        command.addAll(List.of(linkExtra));
        Gcc.run(command);
        return exe;
    }

    static Run run(Path exe, Map<String, String> env) throws Exception {
        Path dump = exe.resolveSibling(exe.getFileName() + ".records");
        Files.deleteIfExists(dump);
        var pb = new ProcessBuilder(exe.toString()).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().putAll(env);
        pb.environment().put("MT_STUB_OUT", dump.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(exe + " timed out");
        }
        var records = new ArrayList<Record>();
        int foreign = 0;
        if (Files.exists(dump)) {
            for (String line : Files.readAllLines(dump)) {
                if (line.startsWith("T ")) continue;
                if (line.startsWith("? ")) {
                    foreign++;
                    continue;
                }
                String[] f = line.split(" ");
                records.add(new Record(Long.parseUnsignedLong(f[0], 16), Integer.parseInt(f[1]), Integer.parseInt(f[2]),
                        Integer.parseInt(f[3]), Integer.parseInt(f[4]), Long.parseUnsignedLong(f[5], 16),
                        Integer.parseInt(f[6]), Integer.parseInt(f[7]), Integer.parseInt(f[8])));
            }
        }
        return new Run(p.exitValue(), out, records, foreign);
    }

    /** [start, end) of every function symbol of {@code exe}, by name, from nm. */
    static Map<String, long[]> functions(Path exe) throws Exception {
        Map<String, long[]> result = new TreeMap<>();
        for (String l : Gcc.run(List.of("nm", "-S", exe.toString())).lines().toList()) {
            String[] f = l.split(" ");
            if (f.length == 4 && (f[2].equals("T") || f[2].equals("t"))) {
                long start = Long.parseUnsignedLong(f[0], 16);
                result.put(f[3], new long[] {start, start + Long.parseUnsignedLong(f[1], 16)});
            }
        }
        return result;
    }

    static long symbol(Path exe, String name) throws Exception {
        for (String l : Gcc.run(List.of("nm", exe.toString())).lines().toList()) {
            String[] f = l.split(" ");
            if (f.length == 3 && f[2].equals(name)) return Long.parseUnsignedLong(f[0], 16);
        }
        throw new IllegalArgumentException("no symbol " + name + " in " + exe);
    }

    static List<Record> in(List<Record> records, long[] range) {
        return records.stream().filter(r -> r.insn() >= range[0] && r.insn() < range[1]).toList();
    }
}
