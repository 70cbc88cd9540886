package org.memtrace.symbols;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The file a trace names by its path. A trace holds a module's path as the program's bytes, and the decoder
 * makes text of them as UTF-8, so a byte that is not UTF-8 (legal in a Linux name) becomes U+FFFD and the
 * text names no file. Such a path is found again component by component: a directory listing keeps each
 * name's bytes, and the one entry whose name reads as the recorded text is the file (two that read alike
 * are ambiguous: then the path stays as it reads, and is not found, as before).
 */
public final class RecordedPath {
    private RecordedPath() {}

    private static final char REPLACED = '\uFFFD';

    public static Path of(String recorded) {
        Path plain = Path.of(recorded);
        if (recorded.indexOf(REPLACED) < 0 || Files.exists(plain) || !plain.isAbsolute()) return plain;
        Path at = plain.getRoot();
        for (Path part : plain) {
            String name = part.toString();
            if (name.indexOf(REPLACED) < 0) {
                at = at.resolve(part);
                continue;
            }
            try (Stream<Path> entries = Files.list(at)) {
                List<Path> alike = entries.filter(e -> e.getFileName().toString().equals(name)).limit(2).toList();
                if (alike.size() != 1) return plain;
                at = alike.getFirst();
            } catch (IOException | RuntimeException e) {
                return plain;
            }
        }
        return at;
    }
}
