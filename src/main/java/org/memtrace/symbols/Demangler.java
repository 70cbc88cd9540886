package org.memtrace.symbols;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Itanium C++ ABI names ({@code _ZN2ns3Box3putEi}) in their source spelling ({@code ns::Box::put(int)}), as
 * the system's {@code c++filt} writes them, so memtrace's names are exactly the ones gdb, perf, objdump -C
 * and valgrind print. All the names of a symbol table go through one {@code c++filt} process, once, when
 * the table is loaded (docs/naming.md, "C++ names").
 *
 * <p>Why c++filt and not a demangler of our own: it is the reference every other tool agrees with, and a
 * wrong name is worse than a raw one. It is run only from a trusted place: {@link #TOOL} resolved to its real
 * file, which must be a regular file of root writable by no one else, in directories of root writable by no
 * one else (docs/trust.md). When it is missing, untrusted or fails, every name stays raw, silently: a raw
 * name is still a correct name. A name is sent only when it looks mangled ({@code _Z} and the characters of
 * a mangled name), so a line of input is always one name and one line of output answers it.
 */
public final class Demangler {

    /** The binutils demangler of the system. */
    static final Path TOOL = Path.of("/usr/bin/c++filt");

    private static final Demangler NONE = new Demangler(null);
    private static volatile Demangler system;

    private final Path tool;

    private Demangler(Path tool) {
        this.tool = tool;
    }

    /** Keeps every name as the symbol table spells it ({@code --no-demangle}). */
    public static Demangler none() {
        return NONE;
    }

    /** The system's c++filt when it is trusted, else {@link #none()}; checked once per process. */
    public static Demangler system() {
        Demangler d = system;
        if (d == null) {
            Path real = trusted(TOOL);
            system = d = real == null ? NONE : new Demangler(real);
        }
        return d;
    }

    public boolean demangles() {
        return tool != null;
    }

    /** Whether {@code name} is an Itanium mangled name c++filt may take as one whole line. */
    static boolean looksMangled(String name) {
        if (!name.startsWith("_Z") || name.length() < 3) return false;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '$')) {
                return false;
            }
        }
        return true;
    }

    /**
     * The demangled spelling of each mangled name among {@code names}; names it does not know (not mangled,
     * or c++filt left them as they were) are absent. Empty when this demangler keeps names raw.
     */
    public Map<String, String> demangle(Collection<String> names) {
        if (tool == null) return Map.of();
        Set<String> mangled = new LinkedHashSet<>();
        for (String n : names) if (looksMangled(n)) mangled.add(n);
        if (mangled.isEmpty()) return Map.of();
        try {
            List<String> in = new ArrayList<>(mangled);
            List<String> out = run(in);
            if (out.size() != in.size()) return Map.of();
            Map<String, String> result = new HashMap<>();
            for (int i = 0; i < in.size(); i++) {
                String d = out.get(i);
                if (!d.isEmpty() && !d.equals(in.get(i))) result.put(in.get(i), d);
            }
            return result;
        } catch (IOException | UncheckedIOException e) {
            return Map.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Map.of();
        }
    }

    private List<String> run(List<String> names) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(tool.toString());
        pb.environment().clear();
        pb.environment().put("LC_ALL", "C");
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        // A writer of its own: c++filt answers line by line, and a pipe holds 64 KiB, so writing all the
        // names before reading would block on a big table (libstdc++ has 5,000 names).
        Thread writer = Thread.ofVirtual().start(() -> {
            try (OutputStream o = p.getOutputStream()) {
                StringBuilder b = new StringBuilder();
                for (String n : names) b.append(n).append('\n');
                o.write(b.toString().getBytes(StandardCharsets.UTF_8));
            } catch (IOException ignored) {
                // c++filt died: the short answer below says so
            }
        });
        List<String> lines = new ArrayList<>(names.size());
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) lines.add(line);
        }
        writer.join();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return List.of();
        }
        return p.exitValue() == 0 ? lines : List.of();
    }

    /** {@code path}'s real file when it and every directory above it are root's and writable by no one else. */
    static Path trusted(Path path) {
        try {
            Path real = path.toRealPath();
            if (!Files.isRegularFile(real, LinkOption.NOFOLLOW_LINKS) || !rootOnly(real)) return null;
            for (Path dir = real.getParent(); dir != null; dir = dir.getParent()) {
                if (!rootOnly(dir)) return null;
            }
            return real;
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return null;
        }
    }

    private static boolean rootOnly(Path p) throws IOException {
        int uid = (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
        return uid == 0 && !mode.contains(PosixFilePermission.GROUP_WRITE) && !mode.contains(PosixFilePermission.OTHERS_WRITE);
    }
}
