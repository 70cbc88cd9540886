package org.memtrace.mtr;

import java.nio.ByteBuffer;
import org.memtrace.mtr.SiteTable.RepOp;

/**
 * What a site's instruction does as the link left it, read off its linked bytes: whether an access the link
 * may take away is still there, and a rep string instruction's operation.
 */
final class LinkedCode {
    private LinkedCode() {}

    /**
     * Whether the linked bytes {@code code} of a flag-0x40 site's instruction still do its access: a load site
     * is a {@code @GOTPCREL} load, a store site the push of a TLS resolver call.
     */
    static boolean stillAccesses(int kind, ByteBuffer code) {
        return kind == SiteTable.KIND_LOAD ? isRipLoad(code) : isCall(code);
    }

    /**
     * Whether {@code code} reads a RIP-relative slot: {@code mov disp32(%rip),reg} ({@code 8b}, ModRM mod 0
     * rm 5, after a REX prefix), a {@code @GOTPCREL} load the linker kept (relaxed, it is a {@code lea},
     * {@code 8d}, or {@code mov $imm}, {@code c7}), or {@code call/jmp *disp32(%rip)} ({@code ff /2}, {@code
     * ff /4}), a {@code -fno-plt} call the linker kept (relaxed, it is {@code addr32 call} or {@code jmp} rel32).
     */
    private static boolean isRipLoad(ByteBuffer code) {
        while (code.hasRemaining()) {
            int op = Byte.toUnsignedInt(code.get());
            if ((op & 0xf0) == 0x40) continue;
            if (!code.hasRemaining()) return false;
            int modrm = Byte.toUnsignedInt(code.get());
            int reg = modrm >> 3 & 7;
            return (modrm & 0xc7) == 0x05 && (op == 0x8b || op == 0xff && (reg == 2 || reg == 4));
        }
        return false;
    }

    /**
     * Whether {@code code} starts with a call ({@code e8}, or {@code ff /2}) after operand-size and REX
     * prefixes: what a TLS resolver call's bytes hold where the linker kept it; relaxed, they are
     * thread-pointer arithmetic or a nop.
     */
    private static boolean isCall(ByteBuffer code) {
        while (code.hasRemaining()) {
            int op = Byte.toUnsignedInt(code.get());
            if (op == 0x66 || (op & 0xf0) == 0x40) continue;
            return op == 0xe8 || (op == 0xff && code.hasRemaining() && (Byte.toUnsignedInt(code.get()) >> 3 & 7) == 2);
        }
        return false;
    }

    /**
     * The operation from the opcode after the prefixes; without the bytes, from the operands the probe
     * recorded (destination and source: movs, destination: stos, source: lods).
     */
    static RepOp repOp(ByteBuffer code, int roles) {
        while (code.hasRemaining()) {
            int op = Byte.toUnsignedInt(code.get());
            boolean prefix = op == 0xf2 || op == 0xf3 || op == 0x66 || op == 0x67 || (op & 0xf0) == 0x40
                    || op == 0x26 || op == 0x2e || op == 0x36 || op == 0x3e || op == 0x64 || op == 0x65;
            if (prefix) continue;
            switch (op & 0xfe) {
                case 0xa4 -> { return RepOp.MOVS; }
                case 0xa6 -> { return RepOp.CMPS; }
                case 0xaa -> { return RepOp.STOS; }
                case 0xac -> { return RepOp.LODS; }
                case 0xae -> { return RepOp.SCAS; }
                default -> { }
            }
            break;
        }
        boolean dst = (roles & 1 << SiteTable.KIND_REP_DESTINATION) != 0;
        boolean src = (roles & 1 << SiteTable.KIND_REP_SOURCE) != 0;
        return dst && src ? RepOp.MOVS : dst ? RepOp.STOS : RepOp.LODS;
    }
}
