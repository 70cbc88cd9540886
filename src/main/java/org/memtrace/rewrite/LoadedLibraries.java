package org.memtrace.rewrite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSegment;

/**
 * The shared libraries a dynamically linked program loads at start, as its own dynamic loader finds them:
 * {@code <PT_INTERP> --list program} (what {@code ldd} runs), in this process's environment, which is the
 * program's ({@code LD_LIBRARY_PATH}, a user's {@code LD_PRELOAD}). The loader maps the libraries and runs
 * none of their code or the program's. The loader itself is listed apart: rewrite mode leaves it alone.
 *
 * @param libraries the libraries by path, in the loader's order (libc among them)
 * @param loader    the dynamic loader's path, excluded from rewriting
 */
public record LoadedLibraries(List<Path> libraries, Path loader) {
    private static final int PT_INTERP = 3;
    private static final Pattern RESOLVED = Pattern.compile("^\\s*\\S+ => (/\\S+) \\(0x[0-9a-f]+\\)$");
    private static final Pattern DIRECT = Pattern.compile("^\\s*(/\\S+) \\(0x[0-9a-f]+\\)$");

    public LoadedLibraries {
        libraries = List.copyOf(libraries);
    }

    /** The libraries of {@code program}; none for a program without an interpreter (static: refused before this). */
    public static LoadedLibraries of(Path program) throws IOException, RewriteException {
        // its sections and segments only, and the loader's name alone read: python3's symbols and 7 MB are not needed here
        ElfFile elf = ElfFile.readSections(program);
        ElfSegment interp = elf.segments().stream().filter(s -> s.type() == PT_INTERP).findFirst().orElse(null);
        if (interp == null) return new LoadedLibraries(List.of(), null);
        byte[] name;
        try (FileChannel channel = FileChannel.open(program, StandardOpenOption.READ)) {
            if (interp.offset() < 0 || interp.fileSize() > 4096 || interp.offset() + interp.fileSize() > channel.size())
                throw new RewriteException(program + ": damaged PT_INTERP");
            ByteBuffer b = ByteBuffer.allocate((int) interp.fileSize());
            while (b.hasRemaining() && channel.read(b, interp.offset() + b.position()) > 0) { }
            name = java.util.Arrays.copyOf(b.array(), b.position());
        }
        int end = 0;
        while (end < name.length && name[end] != 0) end++;
        Path loader = Path.of(new String(name, 0, end, StandardCharsets.UTF_8));
        Process p = new ProcessBuilder(loader.toString(), "--list", program.toAbsolutePath().toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new RewriteException(loader + " --list did not finish");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new RewriteException(loader + " --list was interrupted");
        }
        if (p.exitValue() != 0) throw new RewriteException(loader + " --list " + program + " failed (status " + p.exitValue() + ")");
        return new LoadedLibraries(parse(out, loader), loader);
    }

    /** The libraries of the loader's {@code --list} output, the loader itself and the vdso (no file) left out. */
    static List<Path> parse(String listing, Path loader) {
        List<Path> out = new ArrayList<>();
        for (String line : listing.split("\n")) {
            Matcher m = RESOLVED.matcher(line);
            if (!m.matches()) m = DIRECT.matcher(line);
            if (!m.matches()) continue;
            Path lib = Path.of(m.group(1));
            if (sameFile(lib, loader) || out.contains(lib)) continue;
            out.add(lib);
        }
        return out;
    }

    private static boolean sameFile(Path a, Path b) {
        try {
            return a.equals(b) || Files.isSameFile(a, b);
        } catch (IOException e) {
            return false;
        }
    }
}
