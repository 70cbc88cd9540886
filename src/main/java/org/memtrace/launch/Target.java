package org.memtrace.launch;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The program to trace, checked before anything starts so a run that cannot work fails with a reason
 * instead of an empty trace. For a script the interpreter is what runs, and what gets traced.
 *
 * @param executable the file named on the command line (resolved on PATH like a shell does)
 * @param interpreters the #! interpreter chain of a script, outermost last; empty for an ELF program
 */
public record Target(Path executable, List<Path> interpreters) {
    private static final int PT_INTERP = 3;
    private static final int EM_X86_64 = 62;
    private static final int MAX_SCRIPT_NESTING = 4;

    /** The binary the kernel really runs: the innermost interpreter of a script, else the program. */
    public Path traced() { return interpreters.isEmpty() ? executable : interpreters.getLast(); }

    public static Target resolve(String program) throws LaunchException {
        Path exe = locate(program);
        List<Path> interpreters = new ArrayList<>();
        Path current = exe;
        for (int depth = 0; ; depth++) {
            check(current);
            Path interp = scriptInterpreter(current);
            if (interp == null) break;
            if (depth == MAX_SCRIPT_NESTING) throw LaunchException.usage(program + ": too many nested #! interpreters");
            interpreters.add(interp);
            current = interp;
        }
        elf(current);
        return new Target(exe, List.copyOf(interpreters));
    }

    private static Path locate(String program) throws LaunchException {
        if (program.isEmpty()) throw LaunchException.usage("the program name is empty");
        if (program.contains("/")) return Path.of(program);
        String path = System.getenv("PATH");
        for (String dir : (path == null ? "/usr/local/bin:/usr/bin:/bin" : path).split(":")) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) return p;
        }
        throw LaunchException.usage(program + ": command not found on PATH");
    }

    private static void check(Path p) throws LaunchException {
        if (!Files.exists(p)) throw LaunchException.usage(p + ": no such file");
        if (Files.isDirectory(p)) throw LaunchException.usage(p + ": is a directory, not a program");
        if (!Files.isExecutable(p)) throw LaunchException.usage(p + ": not executable (chmod +x?)");
        try {
            int mode = (Integer) Files.getAttribute(p, "unix:mode");
            if ((mode & 06000) != 0)
                throw LaunchException.usage(p + ": is set" + ((mode & 04000) != 0 ? "uid" : "gid")
                        + "; the dynamic loader ignores LD_PRELOAD for it, trace a copy without that bit");
        } catch (IOException | UnsupportedOperationException e) {
            throw LaunchException.environment(p + ": cannot read its permissions: " + e.getMessage(), e);
        }
    }

    /** The interpreter of a #! script, or null when the file is not one. */
    private static Path scriptInterpreter(Path p) throws LaunchException {
        byte[] head;
        try (InputStream in = Files.newInputStream(p)) {
            head = in.readNBytes(256);
        } catch (IOException e) {
            throw LaunchException.usage(p + ": cannot read it: " + e.getMessage());
        }
        if (head.length < 2 || head[0] != '#' || head[1] != '!') return null;
        String line = new String(head, 2, head.length - 2, StandardCharsets.ISO_8859_1).lines().findFirst().orElse("").strip();
        String interp = line.split("[ \t]+", 2)[0];
        if (interp.isEmpty()) throw LaunchException.usage(p + ": #! line names no interpreter");
        return Path.of(interp);
    }

    private static void elf(Path p) throws LaunchException {
        try (FileChannel ch = FileChannel.open(p)) {
            ByteBuffer h = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(h, 0);
            if (h.position() < 64 || h.getInt(0) != 0x464c457f) throw LaunchException.usage(p + ": not an ELF program or #! script");
            if (h.get(4) != 2 || h.get(5) != 1 || Short.toUnsignedInt(h.getShort(18)) != EM_X86_64)
                throw LaunchException.usage(p + ": not an x86-64 program; memtrace traces 64-bit x86 Linux programs");
            int type = Short.toUnsignedInt(h.getShort(16));
            if (type != 2 && type != 3) throw LaunchException.usage(p + ": an ELF file but not an executable");
            long phoff = h.getLong(32);
            int phentsize = Short.toUnsignedInt(h.getShort(54));
            int phnum = Short.toUnsignedInt(h.getShort(56));
            ByteBuffer ph = ByteBuffer.allocate(phentsize * phnum).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(ph, phoff);
            for (int i = 0; i + 4 <= ph.position(); i += phentsize)
                if (ph.getInt(i) == PT_INTERP) return;
            throw LaunchException.usage(p + ": statically linked; LD_PRELOAD cannot work on a statically linked program");
        } catch (IOException e) {
            throw LaunchException.usage(p + ": cannot read it: " + e.getMessage());
        }
    }
}
