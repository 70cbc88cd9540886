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
            // a module's remembered key (.key) is there once it settled, which a slow planning may reach
            assertThat(files.map(p -> p.getFileName().toString()).filter(n -> !n.matches("[0-9a-f]{16}\\.key")))
                    .as("no work directory left behind").allMatch(n -> n.endsWith(".plan") || n.endsWith(".elf")).hasSize(4);
        }
    }

    @Test
    void aSettledModulesKeyIsRememberedAndAChangeOfItsFileForgetsIt() throws Exception {
        Path cache = RewriteCache.checked(dir.resolve("cache"));
        Path prog = Gcc.compile(dir, "rewrite_tactics.s", "tactics", "-no-pie");
        Thread.sleep(RewriteCache.SETTLED_NS / 1_000_000 + 100); // a file changed within the last moments is hashed every time
        int[] hashed = {0};
        RewriteCache.Hasher counting = image -> {
            hashed[0]++;
            return RewriteCache.sha256(image);
        };
        byte[][] read = new byte[1][];
        String key = RewriteCache.contentKey(prog, "salt", cache, counting, read);
        assertThat(read[0]).isEqualTo(Files.readAllBytes(prog));
        assertThat(key).isEqualTo(RewriteCache.sha256(Files.readAllBytes(prog)));
        read[0] = null;
        assertThat(RewriteCache.contentKey(prog, "salt", cache, counting, read)).isEqualTo(key);
        assertThat(hashed[0]).as("the second lookup hashes nothing").isEqualTo(1);
        assertThat(read[0]).as("nor reads the module").isNull();
        assertThat(RewriteCache.contentKey(prog, "another plan", cache, counting, read)).isEqualTo(key);
        assertThat(hashed[0]).as("another salt is another key").isEqualTo(2);
        try (var files = Files.list(cache)) {
            assertThat(files.map(p -> p.getFileName().toString())).allMatch(n -> n.matches("[0-9a-f]{16}\\.key")).hasSize(2);
        }
        // a write changes the file's change time, which nobody can set back: the key is computed anew
        Files.write(prog, new byte[] {0}, java.nio.file.StandardOpenOption.APPEND);
        String changed = RewriteCache.contentKey(prog, "salt", cache, counting, read);
        assertThat(hashed[0]).isEqualTo(3);
        assertThat(changed).isEqualTo(RewriteCache.sha256(Files.readAllBytes(prog))).isNotEqualTo(key);
    }

    @Test
    void aDamagedRememberedKeyIsHashedAgain() throws Exception {
        Path cache = RewriteCache.checked(dir.resolve("cache"));
        Path prog = Gcc.compile(dir, "rewrite_tactics.s", "tactics", "-no-pie");
        Thread.sleep(RewriteCache.SETTLED_NS / 1_000_000 + 100);
        String key = RewriteCache.contentKey(prog, "salt", cache, RewriteCache::sha256, new byte[1][]);
        try (var files = Files.list(cache)) {
            for (Path memo : files.toList()) Files.writeString(memo, Files.readString(memo).replaceAll("(?m)^[0-9a-f]{64}$", "not a key"));
        }
        int[] hashed = {0};
        assertThat(RewriteCache.contentKey(prog, "salt", cache, image -> {
            hashed[0]++;
            return RewriteCache.sha256(image);
        }, new byte[1][])).isEqualTo(key);
        assertThat(hashed[0]).isEqualTo(1);
    }
}
