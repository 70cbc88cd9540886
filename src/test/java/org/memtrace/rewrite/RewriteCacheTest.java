package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/**
 * The cache the runtime takes plans from: made 0700, refused when memtrace could not have made it; a module
 * planned once is found again with the same counts, and a changed module is planned anew.
 */
class RewriteCacheTest {
    @TempDir Path dir;

    @Test
    void aMissingDirectoryIsMadeForThisUserOnly() throws Exception {
        Path made = RewriteCache.checked(dir.resolve("rewrite"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(made))).isEqualTo("rwx------");
    }

    @Test
    void aDirectoryOthersMayWriteOrASymbolicLinkIsRefused() throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThatThrownBy(() -> RewriteCache.checked(open)).isInstanceOf(RewriteException.class).hasMessageContaining("others can write");
        Path own = RewriteCache.checked(dir.resolve("own"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), own);
        assertThatThrownBy(() -> RewriteCache.checked(link)).isInstanceOf(RewriteException.class).hasMessageContaining("not a directory");
    }

    @Test
    void aPlannedModuleIsFoundAgainAndAChangedOneIsPlannedAnew() throws Exception {
        Path cache = RewriteCache.checked(dir.resolve("cache"));
        Path prog = Gcc.compile(dir, "rewrite_tactics.s", "tactics", "-no-pie");
        ModuleRewrite.Prepared first = ModuleRewrite.prepare(prog, cache);
        long planned = Files.getLastModifiedTime(first.plan()).toMillis();
        ModuleRewrite.Prepared again = ModuleRewrite.prepare(prog, cache);
        assertThat(again.plan()).isEqualTo(first.plan());
        assertThat(Files.getLastModifiedTime(again.plan()).toMillis()).isEqualTo(planned);
        assertThat(again.rewritten()).isEqualTo(first.rewritten()).isPositive();
        assertThat(again.leftByReason()).isEqualTo(first.leftByReason()).isEmpty(); // the short ones go to the int3 fallback
        assertThat(again.trapped()).isEqualTo(first.trapped()).isPositive();
        Path other = Gcc.compile(dir, "rewrite_tactics.s", "tactics2", "-no-pie", "-Wl,--build-id=none");
        assertThat(ModuleRewrite.prepare(other, cache).plan()).isNotEqualTo(first.plan());
        try (var files = Files.list(cache)) {
            assertThat(files.map(p -> p.getFileName().toString())).as("no work directory left behind")
                    .allMatch(n -> n.endsWith(".plan") || n.endsWith(".elf")).hasSize(4);
        }
    }
}
