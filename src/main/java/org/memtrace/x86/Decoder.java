package org.memtrace.x86;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Decodes x86-64 machine code into {@link Instruction} values.
 *
 * <p>Thread confinement: a decoder owns native scratch memory that every call overwrites, so one decoder
 * must be used by one thread at a time. Decoders are cheap; give each thread its own.
 */
public final class Decoder {
    private final Zydis zydis;
    private final Zydis.Scratch scratch;

    /** @throws ZydisUnavailableException if libZydis 4.0 is missing or not the layout this binding expects */
    public Decoder() {
        zydis = Zydis.get();
        scratch = zydis.newScratch(Arena.ofAuto());
    }

    /**
     * Decodes the instruction starting at {@code code[offset]}, which lives at {@code address} at run time;
     * empty when the bytes are not a valid instruction (or end before it does).
     */
    public Optional<Instruction> decode(byte[] code, int offset, long address) {
        Objects.checkFromToIndex(offset, offset, code.length);
        int available = Math.min(ZydisLayout.MAX_INSTRUCTION_LENGTH, code.length - offset);
        MemorySegment.copy(code, offset, scratch.buffer, JAVA_BYTE, 0, available);
        return zydis.decode(scratch, available) ? Optional.of(zydis.read(scratch, address)) : Optional.empty();
    }

    /**
     * Decodes {@code code[offset, offset+length)}, placed at {@code address}, linearly from its start.
     * Bytes that do not decode (data or padding in a code section) are skipped one at a time, so the result
     * holds only valid instructions, in address order.
     */
    public List<Instruction> decodeAll(byte[] code, int offset, int length, long address) {
        Objects.checkFromIndexSize(offset, length, code.length);
        var result = new ArrayList<Instruction>(length / 4);
        // each instruction's (at most 15) bytes copied to the scratch buffer, as decode does: slicing a native
        // copy of the whole code instead cost an object per instruction, a module's millions when planned
        int at = 0;
        while (at < length) {
            int available = Math.min(ZydisLayout.MAX_INSTRUCTION_LENGTH, length - at);
            MemorySegment.copy(code, offset + at, scratch.buffer, JAVA_BYTE, 0, available);
            if (zydis.decode(scratch, available)) {
                Instruction insn = zydis.read(scratch, address + at);
                result.add(insn);
                at += insn.length();
            } else {
                at++;
            }
        }
        return result;
    }
}
