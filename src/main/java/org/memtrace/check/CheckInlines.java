package org.memtrace.check;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.memtrace.symbols.Demangler;
import org.memtrace.symbols.DwarfInlines;
import org.memtrace.symbols.ElfFile;

/**
 * The link step's epilogue of {@code memtrace cc --check} ({@code CheckInlines <collect2 arguments>}, run by the
 * gcc wrapper after collect2 succeeded): the linked program's or library's inlined calls, read from its DWARF
 * ({@link DwarfInlines}), go into it as the section {@code .memtrace_inlines} ({@code objcopy --add-section}, not
 * loaded), which the check runtime reads back from the module's own file when a report names a frame in
 * inlined code (agent/check/check_inline.c; docs/check.md, "Inlined frames"). The table is written first into
 * the build's state directory (memtrace's own, {@code MEMTRACE_CC_STATE}), never next to the output. An output
 * without DWARF or without inlined calls is left as the linker wrote it; a failure to read or to add is a
 * warning (the reports then show each function alone), never a failed link.
 */
public final class CheckInlines {
    static final String SECTION = ".memtrace_inlines";

    private CheckInlines() {}

    public static void main(String[] args) {
        System.exit(run(List.of(args), System.getenv(), System.err));
    }

    static int run(List<String> linkArgs, Map<String, String> env, PrintStream err) {
        Path output = Path.of(output(linkArgs));
        String state = env.get("MEMTRACE_CC_STATE");
        if (state == null || !Files.isRegularFile(output, LinkOption.NOFOLLOW_LINKS)) return 0;
        byte[] table;
        try {
            table = DwarfInlines.read(ElfFile.read(output), Demangler.none()).encode();
        } catch (IOException | RuntimeException e) {
            err.println("memtrace cc: warning: " + output + ": inlined frames not added: " + e.getMessage());
            return 0;
        }
        if (table == null) return 0;
        Path file = null;
        try {
            file = Files.createTempFile(Path.of(state), "inlines-", ".bin",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.write(file, table);
            Process p = new ProcessBuilder("objcopy", "--add-section", SECTION + "=" + file,
                    "--set-section-flags", SECTION + "=readonly,contents", output.toString())
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0)
                err.println("memtrace cc: warning: " + output + ": inlined frames not added: objcopy: " + out.strip());
        } catch (IOException e) {
            err.println("memtrace cc: warning: " + output + ": inlined frames not added: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (file != null) try { Files.deleteIfExists(file); } catch (IOException ignored) { }
        }
        return 0;
    }

    /** The linker's output: the value of its last {@code -o} ({@code -oFILE} too), else a.out. */
    static String output(List<String> args) {
        String out = "a.out";
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("-o") && i + 1 < args.size()) out = args.get(++i);
            else if (a.startsWith("-o") && a.length() > 2) out = a.substring(2);
        }
        return out;
    }
}
