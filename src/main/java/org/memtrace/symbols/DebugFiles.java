package org.memtrace.symbols;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * Finds the separate debug file of an ELF file, where distributions keep the full .symtab of stripped
 * libraries: first by build-id ({@code root/.build-id/xx/rest.debug}), then by .gnu_debuglink next to the
 * file, in its {@code .debug} directory and under {@code root}. A candidate whose build-id differs from the
 * file's belongs to another build and is skipped, as is one that does not parse.
 */
public record DebugFiles(Path root) {

    public static DebugFiles system() {
        return new DebugFiles(Path.of("/usr/lib/debug"));
    }

    public Optional<ElfFile> find(ElfFile file) {
        Optional<byte[]> id = file.buildId();
        if (id.isPresent() && id.get().length > 1) {
            String hex = HexFormat.of().formatHex(id.get());
            Optional<ElfFile> found = open(root.resolve(".build-id").resolve(hex.substring(0, 2))
                    .resolve(hex.substring(2) + ".debug"), id.get());
            if (found.isPresent()) return found;
        }
        if (file.debugLink().isEmpty()) return Optional.empty();
        String link = file.debugLink().get();
        Path dir = file.path().toAbsolutePath().getParent();
        if (dir == null) return Optional.empty();
        Path underRoot = root.resolve(dir.toString().substring(1));
        for (Path candidate : List.of(dir.resolve(link), dir.resolve(".debug").resolve(link), underRoot.resolve(link))) {
            if (candidate.equals(file.path().toAbsolutePath())) continue;
            Optional<ElfFile> found = open(candidate, id.orElse(null));
            if (found.isPresent()) return found;
        }
        return Optional.empty();
    }

    private static Optional<ElfFile> open(Path candidate, byte[] expectedId) {
        if (!Files.isRegularFile(candidate)) return Optional.empty();
        try {
            ElfFile debug = ElfFile.read(candidate);
            if (expectedId != null && debug.buildId().isPresent() && !Arrays.equals(expectedId, debug.buildId().get())) {
                return Optional.empty();
            }
            return Optional.of(debug);
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
