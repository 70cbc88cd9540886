package org.memtrace.rewrite;

import java.nio.ByteBuffer;
import java.util.List;
import org.memtrace.symbols.DwarfLocals;
import org.memtrace.symbols.ElfFile;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Instruction;

/**
 * A DWARF function's instructions, read whole from its module: the one way the frame classifiers
 * ({@link FrameConstants}, {@link RspFrames}, {@link LeaOrigins}) get at the code they classify. One decoder per
 * reader, made at the first function, so a module whose functions are all skipped decodes nothing.
 */
final class FunctionCode {
    /** A function longer than this is no compiler's: its DWARF bounds are wrong, and it is left alone. */
    private static final long LONGEST = 1 << 24;

    private final ElfFile elf;
    private Decoder decoder;

    FunctionCode(ElfFile elf) {
        this.elf = elf;
    }

    /** {@code f}'s instructions, or null when its bounds are implausible or its bytes are not all in the file. */
    List<Instruction> of(DwarfLocals.Function f) {
        long length = f.high() - f.low();
        if (length > LONGEST) return null;
        ByteBuffer b = elf.bytesAt(f.low(), (int) length);
        if (b == null || b.remaining() < length) return null;
        byte[] code = new byte[b.remaining()];
        b.get(code);
        if (decoder == null) decoder = new Decoder();
        return decoder.decodeAll(code, 0, code.length, f.low());
    }
}
