package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/** The libraries rewrite mode plans: what the program's loader lists, the loader and the vdso left out. */
class LoadedLibrariesTest {
    @TempDir Path dir;

    @Test
    void theLoadersListingGivesTheLibrariesButTheLoaderAndTheVdso() {
        String listing = """
                \tlinux-vdso.so.1 (0x00007ffd3c5f5000)
                \tlibselinux.so.1 => /lib/x86_64-linux-gnu/libselinux.so.1 (0x00007f08ec6fa000)
                \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f08ec518000)
                \tlibmissing.so.2 => not found
                \t/lib64/ld-linux-x86-64.so.2 (0x00007f08ec762000)
                """;
        assertThat(LoadedLibraries.parse(listing, Path.of("/lib64/ld-linux-x86-64.so.2")))
                .containsExactly(Path.of("/lib/x86_64-linux-gnu/libselinux.so.1"), Path.of("/lib/x86_64-linux-gnu/libc.so.6"));
    }

    @Test
    void aProgramLinkedWithLibmLoadsLibmAndLibc() throws Exception {
        Path prog = Gcc.compile(dir, "lackey_libc.c", "prog", "-O0", "-lm");
        LoadedLibraries loaded = LoadedLibraries.of(prog);
        assertThat(loaded.loader()).isEqualTo(Path.of("/lib64/ld-linux-x86-64.so.2"));
        assertThat(loaded.libraries()).extracting(p -> p.getFileName().toString()).contains("libc.so.6")
                .doesNotContain("ld-linux-x86-64.so.2");
        assertThat(List.copyOf(loaded.libraries())).allMatch(Path::isAbsolute);
    }
}
