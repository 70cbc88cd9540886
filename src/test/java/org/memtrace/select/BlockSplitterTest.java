package org.memtrace.select;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Instruction;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Blocks of a list of instructions with gaps, as the {@code memtrace cc} rewriter has them (the assembler's
 * alignment padding is no instruction of the .s): the instruction after a return starts a block even when
 * it does not start right at the return's end, as it does (after the padding) in the whole decoded code.
 */
class BlockSplitterTest {
    @TempDir
    Path dir;

    @Test
    void theInstructionAfterAReturnStartsABlockAcrossPadding() throws Exception {
        ElfText elf = ElfText.read(Asm.assemble(dir, """
                f:
                mov eax, [rbx]
                ret
                .p2align 4
                mov ecx, [rsi]
                mov [rdi], ecx
                ret
                """));
        List<Instruction> all = new Decoder().decodeAll(elf.text(), 0, elf.text().length, elf.textAddress());
        List<Instruction> listed = all.stream().filter(i -> !i.mnemonic().equals("nop")).toList();
        assertThat(listed).hasSizeLessThan(all.size());
        long end = all.getLast().nextAddress();

        List<BasicBlock> blocks = BlockSplitter.split(listed, elf.textAddress(), end);
        assertThat(blocks).extracting(b -> b.instructions().size()).containsExactly(2, 3);
        List<BasicBlock> whole = BlockSplitter.split(all, elf.textAddress(), end);
        // there the padding opens the block, which holds the same program instructions
        assertThat(whole.getLast().instructions().stream().filter(i -> !i.mnemonic().equals("nop")).toList())
                .containsExactlyElementsOf(blocks.getLast().instructions());
    }
}
