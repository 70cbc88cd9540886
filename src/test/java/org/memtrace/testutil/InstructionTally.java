package org.memtrace.testutil;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One tool's data accesses, per thread and per instruction named {@code module+offset} (the module's file name,
 * the offset from its load bias), so that two runs that load libraries at different addresses compare. Per
 * instruction: loads, stores, bytes loaded and stored, and a hash of the ordered accesses where each data address is
 * named by what both runs share, never by where a mapping lies: {@code module+offset} inside a loaded object
 * (its globals), else by the mapping that holds it ({@link MappingLog}: the brk heap, each mmap, the main stack)
 * and its difference to the first address the same instruction touched in that mapping, the mappings numbered
 * in the order the instruction first touched them ({@code mmap1Δ64}: the second mapping it touched, 64 bytes past its
 * first access there). Stack, heap and anonymous memory lie at other
 * addresses under Valgrind, and natively next to each other where Valgrind leaves gaps; an instruction's strides
 * and order within a mapping, and which mapping it goes to next, do not. Fed by {@link LackeyRun} and {@link
 * MemtraceRun}; compared by {@link LackeyComparison}.
 */
public final class InstructionTally {
    /** A loaded ELF object: file name (of its real path), load bias, and the [lo, hi) it spans. */
    public record Module(String name, long bias, long lo, long hi) {
        public boolean contains(long address) { return address - lo >= 0 && address - lo < hi - lo; }
    }

    /** The accesses of one instruction in one thread. */
    public static final class Site {
        public long loads, stores, loadBytes, storeBytes, hash = 17;
        /** rep movs/stos/lods: memtrace records a block, Lackey an access per element; bytes compare. */
        public boolean rep;
        /** Per mapping this instruction touched, in that order: {region id, first address}. */
        final List<long[]> bases = new ArrayList<>(1);
        /** The first {@link #NAMED} accesses, named, for a difference's message. */
        public final List<String> first = new ArrayList<>(4);
    }

    /** How many of an instruction's accesses are kept named for a difference's message. */
    public static final int NAMED = 16;
    private final List<Module> modules = new ArrayList<>();
    /** The mappings outside the modules, as the run's system calls made them. */
    public final MappingLog mappings = new MappingLog();
    /** thread index (creation order, 0 the main thread) → instruction name → site. */
    private final List<Map<String, Site>> threads = new ArrayList<>();
    private Module last;
    /** The window both runs are compared in: from the executable's first access to libc's exit. */
    private String exe = "";
    private long exitLo, exitHi;
    private int state;
    /** libc's store of a thread's start routine's result in start_thread: where a thread's comparison ends. */
    private long threadEnd = -1;
    private final java.util.BitSet ended = new java.util.BitSet();
    /** Accesses outside the window (before the executable's first, from exit on). */
    public long outside;

    /** Compares from the first access of an instruction of {@code exe} until an instruction of libc's [lo, hi) (exit). */
    public void window(String exe, long exitLo, long exitHi, long threadEnd) {
        this.threadEnd = threadEnd;
        this.exe = exe;
        this.exitLo = exitLo;
        this.exitHi = exitHi;
    }

    /**
     * Whether an access by {@code ip} is in the window: it opens at the executable's first access (ld.so and the
     * libraries' constructors before it run before memtrace's runtime records, or unrewritten) and closes for good
     * at libc's {@code exit} (its handlers run after memtrace's runtime stopped recording). A thread other than
     * the main one is compared until its start routine returns (start_thread's store of the result, on).
     */
    public boolean inWindow(long ip, int thread) {
        if (state == 2 || ended.get(thread)) return false;
        Module m = moduleOf(ip);
        if (thread > 0 && m != null && m.name().equals("libc.so.6") && ip - m.bias() == threadEnd) {
            // memtrace ends a thread's trace in a key destructor; Lackey goes on to the thread's exit
            ended.set(thread);
            return false;
        }
        if (state == 0 && m != null && m.name().equals(exe)) state = 1;
        if (state == 1 && m != null && m.name().equals("libc.so.6") && ip - m.bias() >= exitLo && ip - m.bias() < exitHi) state = 2;
        return state == 1;
    }

    /** Adds a loaded object from its file on disk; a file that is not ELF (vdso, gone) is left out. */
    public void addModule(Path path, long bias) {
        try {
            Path real = path.toRealPath();
            long[] span = span(real);
            if (span == null) return;
            long lo = span[0] + bias, hi = span[1] + bias;
            removeModules(lo, hi);
            modules.add(new Module(real.getFileName().toString(), bias, lo, hi));
        } catch (IOException e) {
            // not a file memtrace or Valgrind could name: its instructions count as [other]
        }
    }

    /** Forgets the objects that overlap [lo, hi) (Valgrind discarded their symbols: unloaded). */
    public void removeModules(long lo, long hi) {
        modules.removeIf(m -> m.lo() < hi && lo < m.hi());
        last = null;
    }

    public Module moduleOf(long address) {
        if (last != null && last.contains(address)) return last;
        for (Module m : modules)
            if (m.contains(address)) return last = m;
        return null;
    }

    /** {@code module+hexoffset}, or {@code [other]+hexaddress} outside every known object. */
    public String name(long ip) {
        Module m = moduleOf(ip);
        return m == null ? "[other]+" + Long.toHexString(ip) : m.name() + "+" + Long.toHexString(ip - m.bias());
    }

    public Site site(int thread, String instruction) {
        while (threads.size() <= thread) threads.add(new HashMap<>());
        Site s = threads.get(thread).get(instruction);
        if (s == null) {
            threads.get(thread).put(instruction, s = new Site());
            if (thread == 0 && instruction.equals(TRACE)) traced = s;
        }
        return s;
    }

    /** -Dlackey.trace=module+offset: every named access of that instruction in thread 0 ({@link #tracedAccesses}), to see where two runs part. */
    private static final String TRACE = System.getProperty("lackey.trace", "");
    private Site traced;
    public final List<String> tracedAccesses = new ArrayList<>();

    /** One access ('L' or 'S') of {@code size} bytes at {@code address} by the instruction of {@code site}. */
    public void access(Site s, char kind, long address, int size) {
        if (kind == 'L') {
            s.loads++;
            s.loadBytes += size;
        } else {
            s.stores++;
            s.storeBytes += size;
        }
        Module m = moduleOf(address);
        String named;
        long token;
        if (m != null) {
            token = m.name().hashCode() * 0x9E3779B97F4A7C15L + (address - m.bias());
            named = m.name() + "+" + Long.toHexString(address - m.bias());
        } else {
            int region = mappings.region(address);
            int ordinal = 0;
            while (ordinal < s.bases.size() && s.bases.get(ordinal)[0] != region) ordinal++;
            if (ordinal == s.bases.size()) s.bases.add(new long[] {region, address});
            long delta = address - s.bases.get(ordinal)[1];
            token = ((long) ordinal << 48) ^ delta;
            named = mappings.kind(region) + ordinal + "Δ" + delta;
        }
        s.hash = (s.hash * 0x100000001B3L) ^ (token * 31 + kind * 7 + size);
        if (s == traced) tracedAccesses.add(kind + named + "/" + size);
        if (s.first.size() < NAMED) s.first.add(kind + named + "/" + size);
    }

    /** A rep string instruction's block: {@code bytes} loaded or stored at once. */
    public void block(Site s, char kind, long bytes) {
        s.rep = true;
        if (kind == 'L') s.loadBytes += bytes;
        else s.storeBytes += bytes;
    }

    public List<Map<String, Site>> threads() { return threads; }

    /** Renumbers the threads: the new thread i is the old {@code order.get(i)}. */
    public void renumber(List<Integer> order) {
        List<Map<String, Site>> old = new ArrayList<>(threads);
        while (old.size() < order.size()) old.add(new HashMap<>());
        threads.clear();
        for (int i : order) threads.add(old.get(i));
    }

    /** The [lo, hi) of an ELF file's PT_LOAD segments at link-time addresses, or null if it is not ELF. */
    static long[] span(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer h = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(h, 0);
            if (h.getInt(0) != 0x464c457f) return null;
            long phoff = h.getLong(32);
            int phentsize = h.getShort(54) & 0xffff, phnum = h.getShort(56) & 0xffff;
            ByteBuffer ph = ByteBuffer.allocate(phentsize * phnum).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(ph, phoff);
            // signed: a trampoline file's segments lie below its module's bias, at "negative" addresses
            // (up to 1 GB and more below it: ModuleRewrite.spread), and must not span up to the bias
            long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE;
            for (int i = 0; i < phnum; i++) {
                int at = i * phentsize;
                if (ph.getInt(at) != 1) continue;
                long vaddr = ph.getLong(at + 16), memsz = ph.getLong(at + 40);
                lo = Math.min(lo, vaddr & ~0xfffL);
                hi = Math.max(hi, vaddr + memsz);
            }
            return lo < hi ? new long[] {lo, hi} : null;
        }
    }
}
