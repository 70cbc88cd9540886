package org.memtrace.event;

/**
 * One fact reported by the agent, decoded from the event stream (agent/include/memtrace_stream.h).
 * Events carry raw numbers only; naming them is the job of the symbols and heap packages.
 */
public sealed interface Event
        permits Event.Hello, Event.Access, Event.Probe, Event.Block, Event.Alloc, Event.Module, Event.Mapping, Event.Range,
        Event.ThreadEvent, Event.Control, Event.Exit, Event.Stats, Event.Fork, Event.Writer, Event.Fallback, Event.Context {

    /** Kernel thread id of the thread that produced the event. */
    int tid();

    /**
     * {@code flags}: the header's (MT_HELLO_ARMED, MT_HELLO_ARMING_SAID: whether the runtime armed its probes or
     * trampolines for access stacks, when it says; docs/event-stream.md).
     */
    record Hello(int tid, long pid, long pageSize, long agentTextStart, long agentTextEnd, int regions, int flags)
            implements Event {
        public static final int ARMED = 0x01, ARMING_SAID = 0x02;

        /** A hello that says nothing of arming: the fault agent's, and a runtime's before it said. */
        public Hello(int tid, long pid, long pageSize, long agentTextStart, long agentTextEnd, int regions) {
            this(tid, pid, pageSize, agentTextStart, agentTextEnd, regions, 0);
        }
    }

    /**
     * A data access caught by a page fault. {@code write} is what the CPU reported; {@code sameStep} marks
     * a further fault of the same execution of the instruction (second operand, page straddle, rep step).
     */
    record Access(int tid, long ip, long address, boolean write, boolean sameStep) implements Event {}

    /** What a compiled-in probe site records: a load, a store, or both of one read-modify-write operand. */
    enum ProbeKind { LOAD, STORE, MODIFY }

    /** The site flags' selection mode (docs/compiled-in.md): every access logged, or paper 001's ma/aia selection. */
    enum SelectionMode { LOG, MA, AIA }

    /**
     * The static selection of one instrumented file, summed over its basic blocks as {@code memtrace analyze}
     * sums them: memory-referencing instructions, and those the selected ones stand for under MA and AIA.
     * One object per file, shared by all its sites.
     */
    record SelectionTotals(long references, long ma, long aia) {
        public static final SelectionTotals NONE = new SelectionTotals(0, 0, 0);
    }

    /**
     * One probe site of an instrumented module as its site table describes it, with {@code ip} (the
     * instrumented instruction) already at its run-time address. Shared by every record of the site.
     * {@code module} is the selection of the whole instrumented file the site belongs to.
     */
    record ProbeSite(long ip, ProbeKind kind, int size, int access, int flags, int weightMa, int weightAia,
                     int blockRefs, int blockMa, int blockAia, SelectionTotals module) {
        public static final int IMPLICIT_STACK = 0x01;
        public static final int FIRST_OF_BLOCK = 0x02;
        public static final int MODE_MASK = 0x0c;
        public static final int CONDITIONAL_REP = 0x10;
        /** Not recorded but replayed from a skeleton loop (memtrace cc --skeleton): the access is the same. */
        public static final int COMPUTED = 0x20;

        public SelectionMode mode() {
            return switch (flags & MODE_MASK) {
                case 0x04 -> SelectionMode.MA;
                case 0x08 -> SelectionMode.AIA;
                default -> SelectionMode.LOG;
            };
        }

        /** {@code mode() == SelectionMode.LOG}, without the switch: asked per record. */
        public boolean logged() {
            int m = flags & MODE_MASK;
            return m != 0x04 && m != 0x08;
        }

        public boolean firstOfBlock() { return (flags & FIRST_OF_BLOCK) != 0; }

        public boolean computed() { return (flags & COMPUTED) != 0; }

        /** The weight the trace prints in ma/aia mode: how many accesses of the full trace this record stands for. */
        public int weight() {
            return switch (mode()) {
                case MA -> weightMa;
                case AIA -> weightAia;
                case LOG -> 1;
            };
        }

        /** Whether this site comes from a selective build: its records stand for others, or its file left some out. */
        public boolean selective() {
            // asked per record (the summary): the mode's bits tested here, not through mode()'s switch
            return !logged() || weightMa != 1 || weightAia != 1
                    || (firstOfBlock() && blockMa != blockRefs) || module.ma() != module.references();
        }
    }

    /**
     * A data access recorded by a compiled-in probe (a {@code .mtr} access record; never an event-stream
     * record). The size and kind come from the site table, so nothing is guessed from faults.
     */
    record Probe(int tid, long address, ProbeSite site) implements Event {
        public long ip() { return site.ip(); }

        public int size() { return site.size(); }

        public ProbeKind kind() { return site.kind(); }
    }

    enum BlockOp { COPY, STORE, FETCH }

    /**
     * A block operation. {@code syscall} tells whether the kernel did it (then {@code what} is the system
     * call number) or a memcpy/memmove/memset call of the program, an fread/fwrite the compiled-in runtime
     * saw, or a compiled-in {@code rep} string instruction (then {@code what} is the {@link BlockFunction} code).
     */
    record Block(int tid, BlockOp op, boolean syscall, long ip, long destination, long source, long length, int what)
            implements Event {
        /**
         * The address whose source line is the block's: a call's {@code ip} is its return address (a system
         * call's, the address after {@code syscall}), whose own line is the next statement's, so it is looked up
         * one byte before, inside the call, as every unwinder does; a compiled-in {@code rep} instruction is its
         * own {@code ip}.
         */
        public long lineAddress() {
            return syscall || what < BlockFunction.REP_MOVS.code ? ip - 1 : ip;
        }
    }

    enum BlockFunction {
        MEMCPY(1), MEMMOVE(2), MEMSET(3), FREAD(4), FWRITE(5),
        /** {@code rep} string instructions, seen only by compiled-in probes (never a stream code). */
        REP_MOVS(6), REP_STOS(7), REP_LODS(8), REP_CMPS(9), REP_SCAS(10);
        public final int code;
        BlockFunction(int code) { this.code = code; }
        public static BlockFunction of(int code) {
            for (BlockFunction f : values()) if (f.code == code) return f;
            throw new IllegalArgumentException("unknown block function " + code);
        }
    }

    /** The allocator and mapping functions memtrace wraps, with their stream codes. */
    enum AllocFunction {
        MALLOC(1), CALLOC(2), REALLOC(3), FREE(4), MMAP(5), MREMAP(6), MUNMAP(7), POSIX_MEMALIGN(8),
        ALIGNED_ALLOC(9), MEMALIGN(10), VALLOC(11), REALLOCARRAY(12), PVALLOC(13);
        public final int code;
        AllocFunction(int code) { this.code = code; }
        /** By code; values() would copy the array on every event decoded. */
        private static final AllocFunction[] BY_CODE = new AllocFunction[14];
        static { for (AllocFunction f : values()) BY_CODE[f.code] = f; }
        public static boolean known(int code) { return code >= 0 && code < BY_CODE.length && BY_CODE[code] != null; }

        public static AllocFunction of(int code) {
            AllocFunction f = code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
            if (f == null) throw new IllegalArgumentException("unknown allocation function " + code);
            return f;
        }
    }

    /**
     * An allocator call: raw arguments in C order (see memtrace_stream.h for each function), the result and
     * the bytes the block really spans. {@code args} always has six elements. {@code callers} are the return
     * addresses above {@code caller}, innermost first, as the agent's frame-pointer walk found them (stack
     * format 1, docs/stacks.md): empty at {@code --stack-depth 1} and in streams from before stacks.
     */
    record Alloc(int tid, AllocFunction function, long caller, long result, long usable, long[] args, long[] callers)
            implements Event {
        public static final long[] NO_CALLERS = new long[0];

        public Alloc(int tid, AllocFunction function, long caller, long result, long usable, long[] args) {
            this(tid, function, caller, result, usable, args, NO_CALLERS);
        }

        public long arg(int i) { return args[i]; }
    }

    record Module(int tid, long loadBias, byte[] buildId, String path) implements Event {}

    record Mapping(int tid, long start, long end, long offset, int prot, boolean traced, String path)
            implements Event {}

    /** Region kinds, as bits (also used by --regions). */
    enum RegionKind {
        DATA(1), HEAP(2), ANON(4), FILE(8);
        public final int bit;
        RegionKind(int bit) { this.bit = bit; }
        public static RegionKind of(int bit) {
            for (RegionKind k : values()) if (k.bit == bit) return k;
            throw new IllegalArgumentException("unknown region kind " + bit);
        }
    }

    record Range(int tid, boolean added, long start, long end, RegionKind kind, int prot) implements Event {}

    record ThreadEvent(int tid, boolean started, long value) implements Event {}

    record Control(int tid, boolean start, long caller) implements Event {}

    /** EXEC_FAILED follows an EXEC whose execve failed (value: the errno): the process goes on. */
    enum ExitKind { NORMAL, EXEC, SIGNAL, EXEC_FAILED }

    record Exit(int tid, ExitKind kind, long value, long ip, long address, String path) implements Event {}

    record Stats(int tid, long faults, long steps, long syscalls, long windowsAtRisk, long untracedFaults)
            implements Event {}

    record Fork(int tid, long childPid) implements Event {}

    /**
     * The compiled-in runtime's trace writer, as it stood when the program ended (cumulative: a later one
     * replaces an earlier one): the program's threads found no free buffer {@code waits} times and spent
     * {@code waitNanos} until they had one; {@code buffers} buffers were handed over before exit (the exit's
     * flush comes after the record). {@code noWriterThread}: none ran (rewrite mode), so each thread encoded
     * and wrote the buffers it filled, {@code ownBuffers} of them in {@code ownNanos}.
     */
    record Writer(int tid, long waitNanos, long waits, long buffers, boolean noWriterThread, long ownNanos, long ownBuffers)
            implements Event {
        /** A writer thread's record (and an older runtime's, which says nothing else). */
        public Writer(int tid, long waitNanos, long waits, long buffers) { this(tid, waitNanos, waits, buffers, false, 0, 0); }
    }

    /**
     * Rewrite mode's int3 fallback as the process ended (MT_FALLBACK): traps taken and the accesses their trampolines
     * recorded; of the planned punned jumps, those written and those that kept their int3 because the bytes after
     * the instruction were not as planned or no stub page could be mapped (-1 each from a record before puns).
     */
    record Fallback(int tid, long traps, long accesses, long puns, long punsBytes, long punsPage) implements Event {
        public Fallback(int tid, long traps, long accesses) { this(tid, traps, accesses, -1, -1, -1); }

        /** Whether the record says what became of the puns (a 48-byte record). */
        public boolean knowsPuns() { return puns >= 0; }
    }

    /**
     * Access stacks (MT_CONTEXT, docs/event-stream.md): the return addresses above an instruction's frame,
     * innermost first (bit 63 set on a frame found by .eh_frame, as {@link Alloc#callers}); none: the walk found
     * none. Fault mode's ({@code instruction} {@link #ANY}) hold for the thread's accesses from here to its next
     * context; rewrite mode's and a {@code memtrace cc} build's (format 2) only for the records of {@code
     * instruction}'s trampoline or probe that follow.
     */
    record Context(int tid, long[] callers, long instruction) implements Event {
        public static final long ANY = -1;

        public Context(int tid, long[] callers) { this(tid, callers, ANY); }
    }
}
