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
 * named as memtrace names it relative to something both runs share: {@code module+offset} inside a loaded
 * object (its globals), else its difference to the first such address the same instruction touched in the same
 * thread (stack, heap and anonymous memory lie at other addresses under Valgrind; their strides and order do
 * not). Fed by {@link LackeyRun} and {@link MemtraceRun}; compared by {@link LackeyComparison}.
 */
public final class InstructionTally {
    /** A loaded ELF object: file name (of its real path), load bias, and the [lo, hi) it spans. */
    public record Module(String name, long bias, long lo, long hi) {
        public boolean contains(long address) { return address - lo >= 0 && address - lo < hi - lo; }
    }

    /** The accesses of one instruction in one thread. */
    public static final class Site {
        public long loads, stores, loadBytes, storeBytes, hash = 17;
        /** The hash with every difference of 1 MB or more made one token: equal when only other mappings' places differ. */
        public long near = 17;
        /** rep movs/stos/lods: memtrace records a block, Lackey an access per element; bytes compare. */
        public boolean rep;
        /** Set by the first access outside every module: later ones are named relative to it. */
        long base;
        boolean based;
        /** The first few accesses, named, for a difference's message. */
        public final List<String> first = new ArrayList<>(4);
    }

    private final List<Module> modules = new ArrayList<>();
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
        return threads.get(thread).computeIfAbsent(instruction, k -> new Site());
    }

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
            if (!s.based) {
                s.based = true;
                s.base = address;
            }
            token = address - s.base;
            named = "Δ" + token;
        }
        s.hash = (s.hash * 0x100000001B3L) ^ (token * 31 + kind * 7 + size);
        long far = m == null && Math.abs(token) >= 1 << 20 ? 0x7fffffffL : token;
        s.near = (s.near * 0x100000001B3L) ^ (far * 31 + kind * 7 + size);
        if (s.first.size() < 4) s.first.add(kind + named + "/" + size);
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
            // signed, from the lowest: a trampoline file whose text is planned below its module has segments at
            // negative link-time addresses (0xffff...), and a span ending at 0 would cover every module between
            // the text and the trampoline file's bias (python3's libc text placed 16 MB above libc took ld.so)
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
