package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSection;
import org.memtrace.testutil.Gcc;

/**
 * The plan file's text sits at a page boundary of the file (docs/rewriting.md, "The plan file" and "Text
 * mapped, not copied"), so the runtime can map it from there instead of copying it: the bytes between the ids
 * and the text are zeros, and the text is byte for byte the trampoline file's linked text.
 */
class PlanFileTest {
    @TempDir Path dir;

    @Test
    void theTrampolineTextStartsAtAPageOfThePlanFileAndIsTheLinkedText() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_pun.s", "pun", "-pie");
        ModuleRewrite.Prepared prepared = ModuleRewrite.prepare(prog, Files.createDirectories(dir.resolve("cache")));
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(prepared.plan())).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(b.getInt(8)).isEqualTo(5);
        long textAddress = b.getLong(16);
        int textSize = (int) b.getLong(24);
        int ids = b.getInt(40) + b.getInt(44) + b.getInt(48);
        // this fixture's ids (two build-ids and a cache path) fit the first page with the header: text at 4096
        assertThat(PlanFile.HEADER + ids).isLessThan(4096);
        byte[] gap = Arrays.copyOfRange(b.array(), PlanFile.HEADER + ids, 4096);
        assertThat(gap).containsOnly(0);
        byte[] text = Arrays.copyOfRange(b.array(), 4096, 4096 + textSize);

        ElfFile trampolines = ElfFile.read(prepared.trampolines());
        ElfSection linked = trampolines.sections().stream().filter(s -> s.address() == textAddress && s.size() > 0).findFirst().orElseThrow();
        byte[] want = trampolines.contents(linked);
        assertThat(textSize).isEqualTo(want.length);
        assertThat(text).isEqualTo(want);
    }
}
