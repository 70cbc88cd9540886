package org.memtrace.x86;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.memtrace.x86.ZydisLayout.*;

/**
 * The only code that touches Zydis 4.0's memory: hand-written offsets into its structures ({@link ZydisLayout},
 * checked against the C headers by ZydisLayoutProbeTest and against a known decoding at load time) and the
 * downcalls. Everything it hands out is a plain Java value.
 */
final class Zydis {
    static final String LIBRARY = "libZydis.so.4.0";
    static final String INSTALL_HINT = "memtrace: libzydis4.0 not found: apt-get install libzydis4.0";

    private static final class Holder {
        static final Zydis INSTANCE = load(LIBRARY);
    }

    private final MethodHandle decoderInit;
    private final MethodHandle decodeFull;
    private final Register[] registers;
    private final Map<String, Register> registersByName;
    private final String[] mnemonics;

    /** The loaded, checked library; throws {@link ZydisUnavailableException} on every call if it is unusable. */
    static Zydis get() {
        try {
            return Holder.INSTANCE;
        } catch (ExceptionInInitializerError e) {
            throw e.getCause() instanceof ZydisUnavailableException z ? z : new ZydisUnavailableException(INSTALL_HINT, e);
        } catch (NoClassDefFoundError e) {
            // The holder failed to initialize earlier: the JVM does not retry, so neither do we.
            throw new ZydisUnavailableException(INSTALL_HINT, e);
        }
    }

    static Zydis load(String library) {
        SymbolLookup lib;
        try {
            lib = SymbolLookup.libraryLookup(library, Arena.global());
        } catch (IllegalArgumentException e) {
            throw new ZydisUnavailableException(INSTALL_HINT, e);
        }
        Zydis z = new Zydis(lib);
        z.checkLayout();
        return z;
    }

    private Zydis(SymbolLookup lib) {
        Linker linker = Linker.nativeLinker();
        MethodHandle version = downcall(linker, lib, "ZydisGetVersion", FunctionDescriptor.of(JAVA_LONG));
        long v;
        try {
            v = (long) version.invokeExact();
        } catch (Throwable t) {
            throw new ZydisUnavailableException(INSTALL_HINT, t);
        }
        if ((v & 0xFFFF_0000_0000_0000L) != VERSION_MAJOR_4) {
            throw new ZydisUnavailableException("memtrace: libzydis has version %d.%d, memtrace needs 4.x: apt-get install libzydis4.0"
                    .formatted(v >>> 48, (v >>> 32) & 0xFFFF));
        }
        decoderInit = downcall(linker, lib, "ZydisDecoderInit", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        decodeFull = downcall(linker, lib, "ZydisDecoderDecodeFull",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS));
        MethodHandle registerString = downcall(linker, lib, "ZydisRegisterGetString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        MethodHandle registerWidth = downcall(linker, lib, "ZydisRegisterGetWidth", FunctionDescriptor.of(JAVA_SHORT, JAVA_INT, JAVA_INT));
        MethodHandle registerEnclosing = downcall(linker, lib, "ZydisRegisterGetLargestEnclosing",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
        MethodHandle mnemonicString = downcall(linker, lib, "ZydisMnemonicGetString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        try {
            registers = new Register[REGISTER_MAX_VALUE + 1];
            registersByName = new HashMap<>();
            registers[0] = Register.NONE;
            for (int id = 1; id <= REGISTER_MAX_VALUE; id++) {
                String name = cString((MemorySegment) registerString.invokeExact(id));
                int width = Short.toUnsignedInt((short) registerWidth.invokeExact(MACHINE_MODE_LONG_64, id));
                int enclosing = (int) registerEnclosing.invokeExact(MACHINE_MODE_LONG_64, id);
                registers[id] = new Register(id, name, width, enclosing == 0 ? id : enclosing);
                registersByName.putIfAbsent(name, registers[id]);
            }
            mnemonics = new String[MNEMONIC_MAX_VALUE + 1];
            for (int id = 0; id <= MNEMONIC_MAX_VALUE; id++) {
                mnemonics[id] = cString((MemorySegment) mnemonicString.invokeExact(id)).intern();
            }
        } catch (Throwable t) {
            throw new ZydisUnavailableException(INSTALL_HINT, t);
        }
    }

    private static MethodHandle downcall(Linker linker, SymbolLookup lib, String name, FunctionDescriptor fd) {
        MemorySegment symbol = lib.find(name).orElseThrow(
                () -> new ZydisUnavailableException("memtrace: " + LIBRARY + " lacks " + name + ": apt-get install libzydis4.0"));
        return linker.downcallHandle(symbol, fd);
    }

    private static String cString(MemorySegment pointer) {
        return pointer.equals(MemorySegment.NULL) ? "?" : pointer.reinterpret(64).getString(0);
    }

    /**
     * Decodes {@code add dword ptr [rbx+rcx*4+8], eax} with guard bytes behind every structure: a library
     * built with other layouts writes past them or puts the fields elsewhere, and we refuse to run on it.
     */
    private void checkLayout() {
        byte canary = (byte) 0xA5;
        long guard = 64;
        try (Arena arena = Arena.ofConfined()) {
            var s = new Scratch(arena, guard);
            s.instruction.fill(canary);
            s.operands.fill(canary);
            byte[] code = {0x01, 0x44, (byte) 0x8B, 0x08};
            MemorySegment.copy(code, 0, s.buffer, JAVA_BYTE, 0, code.length);
            boolean ok = decode(s, code.length)
                    && s.instruction.get(JAVA_BYTE, INSN_LENGTH) == 4
                    && "add".equals(mnemonic(s.instruction.get(JAVA_INT, INSN_MNEMONIC)))
                    && s.operands.get(JAVA_INT, OP_TYPE) == OPERAND_TYPE_MEMORY
                    && "rbx".equals(register(s.operands.get(JAVA_INT, OP_MEM_BASE)).name())
                    && "rcx".equals(register(s.operands.get(JAVA_INT, OP_MEM_INDEX)).name())
                    && s.operands.get(JAVA_BYTE, OP_MEM_SCALE) == 4
                    && s.operands.get(JAVA_LONG, OP_MEM_DISP_VALUE) == 8
                    && s.operands.get(JAVA_BYTE, OP_ACTIONS) == (ACTION_READ | ACTION_WRITE)
                    && s.operands.get(JAVA_SHORT, OP_SIZE) == 32
                    && "eax".equals(register(s.operands.get(JAVA_INT, SIZEOF_OPERAND + OP_REG_VALUE)).name());
            for (long i = 0; ok && i < guard; i++) {
                ok = s.instruction.get(JAVA_BYTE, SIZEOF_INSTRUCTION + i) == canary
                        && s.operands.get(JAVA_BYTE, SIZEOF_OPERAND * MAX_OPERAND_COUNT + i) == canary;
            }
            if (!ok) {
                throw new ZydisUnavailableException(
                        "memtrace: " + LIBRARY + " does not have the structure layout memtrace was built for; install Debian's libzydis4.0");
            }
        }
    }

    /** Native memory one decoder works in: never shared between threads. */
    final class Scratch {
        final MemorySegment decoder;
        final MemorySegment buffer;
        final MemorySegment instruction;
        final MemorySegment operands;

        Scratch(Arena arena) {
            this(arena, 0);
        }

        private Scratch(Arena arena, long guard) {
            decoder = arena.allocate(SIZEOF_DECODER, 8);
            buffer = arena.allocate(MAX_INSTRUCTION_LENGTH, 8);
            instruction = arena.allocate(SIZEOF_INSTRUCTION + guard, 8);
            operands = arena.allocate(SIZEOF_OPERAND * MAX_OPERAND_COUNT + guard, 8);
            int status;
            try {
                status = (int) decoderInit.invokeExact(decoder, MACHINE_MODE_LONG_64, STACK_WIDTH_64);
            } catch (Throwable t) {
                throw new ZydisUnavailableException(INSTALL_HINT, t);
            }
            if (status < 0) {
                throw new ZydisUnavailableException("memtrace: ZydisDecoderInit failed with status 0x%08x".formatted(status));
            }
        }
    }

    Scratch newScratch(Arena arena) {
        return new Scratch(arena);
    }

    /** Decodes from {@code s.buffer}; false when the bytes are not a valid instruction. */
    boolean decode(Scratch s, long available) {
        return decode(s, s.buffer, available);
    }

    boolean decode(Scratch s, MemorySegment code, long available) {
        try {
            int status = (int) decodeFull.invokeExact(s.decoder, code, available, s.instruction, s.operands);
            return status >= 0; // ZYAN_SUCCESS: the top bit is the error flag
        } catch (Throwable t) {
            throw new IllegalStateException("ZydisDecoderDecodeFull failed", t);
        }
    }

    Register register(int id) {
        return id >= 0 && id < registers.length ? registers[id] : Register.NONE;
    }

    private String mnemonic(int id) {
        return id >= 0 && id < mnemonics.length ? mnemonics[id] : "?";
    }

    Register registerNamed(String name) {
        Register r = registersByName.get(name);
        if (r == null) {
            throw new IllegalArgumentException("no x86 register named " + name);
        }
        return r;
    }

    /** Turns the decoded structures in {@code s} into an {@link Instruction} at {@code address}. */
    Instruction read(Scratch s, long address) {
        MemorySegment in = s.instruction;
        int mnemonicId = in.get(JAVA_INT, INSN_MNEMONIC);
        String mnemonic = mnemonic(mnemonicId);
        int length = Byte.toUnsignedInt(in.get(JAVA_BYTE, INSN_LENGTH));
        int count = Math.min(Byte.toUnsignedInt(in.get(JAVA_BYTE, INSN_OPERAND_COUNT)), MAX_OPERAND_COUNT);
        long attributes = in.get(JAVA_LONG, INSN_ATTRIBUTES);
        int category = in.get(JAVA_INT, INSN_META_CATEGORY);
        long next = address + length;
        boolean hint = category == CATEGORY_NOP || category == CATEGORY_WIDENOP || category == CATEGORY_PREFETCH;

        List<Operand> operands = new ArrayList<>(count);
        OptionalLong target = OptionalLong.empty();
        MemorySegment ops = s.operands;
        for (int i = 0; i < count; i++) {
            // the operand's fields read at their offsets from its start: a slice per operand cost the planner
            // an object per operand of every instruction of a module
            long op = SIZEOF_OPERAND * i;
            Operand.Visibility visibility = switch (ops.get(JAVA_INT, op + OP_VISIBILITY)) {
                case VISIBILITY_EXPLICIT -> Operand.Visibility.EXPLICIT;
                case VISIBILITY_IMPLICIT -> Operand.Visibility.IMPLICIT;
                default -> Operand.Visibility.HIDDEN;
            };
            int actions = Byte.toUnsignedInt(ops.get(JAVA_BYTE, op + OP_ACTIONS));
            boolean reads = (actions & (ACTION_READ | ACTION_CONDREAD)) != 0;
            boolean writes = (actions & (ACTION_WRITE | ACTION_CONDWRITE)) != 0;
            switch (ops.get(JAVA_INT, op + OP_TYPE)) {
                case OPERAND_TYPE_REGISTER ->
                        operands.add(new RegisterOperand(register(ops.get(JAVA_INT, op + OP_REG_VALUE)), reads, writes, visibility));
                case OPERAND_TYPE_MEMORY -> operands.add(memory(ops, op, next, reads, writes, hint, visibility));
                case OPERAND_TYPE_IMMEDIATE -> {
                    boolean relative = ops.get(JAVA_BYTE, op + OP_IMM_IS_RELATIVE) != 0;
                    long value = ops.get(JAVA_LONG, op + OP_IMM_VALUE);
                    operands.add(new ImmediateOperand(value, relative, visibility));
                    if (relative) {
                        target = OptionalLong.of(next + value);
                    }
                }
                case OPERAND_TYPE_POINTER -> operands.add(new PointerOperand(
                        Short.toUnsignedInt(ops.get(JAVA_SHORT, op + OP_PTR_SEGMENT)),
                        Integer.toUnsignedLong(ops.get(JAVA_INT, op + OP_PTR_OFFSET)), visibility));
                default -> { }
            }
        }
        Flow flow = flow(category, mnemonicId, mnemonic);
        boolean rep = (attributes & (ATTRIB_HAS_REP | ATTRIB_HAS_REPE | ATTRIB_HAS_REPNE)) != 0;
        boolean lock = (attributes & ATTRIB_HAS_LOCK) != 0;
        boolean branch = flow == Flow.JUMP || flow == Flow.CONDITIONAL_JUMP || flow == Flow.CALL;
        return new Instruction(address, length, mnemonic, operands, flow, branch ? target : OptionalLong.empty(), rep, lock);
    }

    private MemoryOperand memory(MemorySegment ops, long op, long next, boolean reads, boolean writes, boolean hint,
                                 Operand.Visibility visibility) {
        int type = ops.get(JAVA_INT, op + OP_MEM_TYPE);
        Register segment = register(ops.get(JAVA_INT, op + OP_MEM_SEGMENT));
        Register base = register(ops.get(JAVA_INT, op + OP_MEM_BASE));
        Register index = register(ops.get(JAVA_INT, op + OP_MEM_INDEX));
        int scale = Byte.toUnsignedInt(ops.get(JAVA_BYTE, op + OP_MEM_SCALE));
        long displacement = ops.get(JAVA_LONG, op + OP_MEM_DISP_VALUE);
        MemoryOperand.Use use = type == MEMOP_TYPE_AGEN || type == MEMOP_TYPE_MIB ? MemoryOperand.Use.ADDRESS
                : hint ? MemoryOperand.Use.HINT : MemoryOperand.Use.ACCESS;
        int size = use == MemoryOperand.Use.ACCESS ? Short.toUnsignedInt(ops.get(JAVA_SHORT, op + OP_SIZE)) / 8 : 0;
        if (visibility == Operand.Visibility.HIDDEN && base.isStackPointer() && writes && displacement == 0) {
            // Zydis gives push/call's slot as [rsp]; the CPU decrements first and writes [rsp-size] of the
            // rsp the instruction starts with, which is what every other operand is relative to.
            displacement = -size;
        }
        OptionalLong address = OptionalLong.empty();
        if (base.isInstructionPointer()) {
            address = OptionalLong.of(next + displacement);
        } else if (base.isNone() && index.isNone() && !segment.isSegmentWithBase()) {
            address = OptionalLong.of(displacement);
        }
        return new MemoryOperand(segment, base, index, index.isNone() ? 0 : scale, displacement, size,
                reads && use == MemoryOperand.Use.ACCESS, writes && use == MemoryOperand.Use.ACCESS, use, visibility, address);
    }

    private static Flow flow(int category, int mnemonicId, String mnemonic) {
        return switch (category) {
            case CATEGORY_CALL -> Flow.CALL;
            case CATEGORY_COND_BR -> Flow.CONDITIONAL_JUMP;
            case CATEGORY_UNCOND_BR -> Flow.JUMP;
            case CATEGORY_RET, CATEGORY_SYSRET -> Flow.RETURN;
            case CATEGORY_SYSCALL -> Flow.SYSTEM_CALL;
            case CATEGORY_INTERRUPT -> mnemonic.startsWith("iret") ? Flow.RETURN
                    : mnemonicId == MNEMONIC_INT3 || "int1".equals(mnemonic) ? Flow.TRAP : Flow.SYSTEM_CALL;
            default -> mnemonicId == MNEMONIC_UD2 || mnemonicId == MNEMONIC_HLT ? Flow.TRAP : Flow.SEQUENTIAL;
        };
    }
}
