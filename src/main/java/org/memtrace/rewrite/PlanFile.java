package org.memtrace.rewrite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * The rewrite plan of one module, the file the runtime applies (agent/rewrite/rw_apply.c; its grammar in
 * docs/rewriting.md, "The plan file"): the trampoline text to map, the five bytes to write over each
 * rewritten instruction with the bytes they replace, the build-ids that tie it to the module and to the
 * trampoline file, and the planner's counts, which only Java reads.
 */
record PlanFile(Counts counts, byte[] moduleBuildId, TrampolineLinker.Linked linked, List<Patch> patches, List<Trap> traps) {
    static final long MAGIC = 0x314e4c505752544dL; // "MTRWPLN1" read as u64 little-endian
    static final int VERSION = 5;
    static final int HEADER = 104;
    /** The text starts at a multiple of this in the file: the runtime maps it from there (MAP_PRIVATE), no copy. */
    static final int TEXT_ALIGN = 4096;
    static final int PATCH = 24;
    static final int TRAP = 40;

    /** Five bytes over the instruction at link-time {@code address}: {@code old} must be there, {@code jump} goes there. */
    record Patch(long address, byte[] old, byte[] jump) {}

    /**
     * An {@code int3} over the instruction at link-time {@code address}, whose first byte is {@code old}: the
     * runtime's SIGTRAP handler sends the thread to the trampoline at link-time {@code trampoline}, which
     * records {@code accesses} accesses (the fallback's count); {@code signalMask}: an {@code rt_sigprocmask}
     * system call the handler makes itself, SIGTRAP left out of the mask ({@link Decision.SignalMask}).
     * {@code pun}: when not empty, the bytes that replace the instruction's own (its length: {@code e9} and the
     * free low bytes of a rel32 whose high bytes are the next instructions'), a jump to the stub at link-time
     * {@code stub} that the runtime maps and fills with a jump to the trampoline ({@link Puns}); the int3 stays
     * when the runtime cannot.
     */
    record Trap(long address, long trampoline, byte old, int accesses, boolean signalMask, byte[] pun, long stub) {
        Trap {
            pun = pun.clone();
        }

        Trap(long address, long trampoline, byte old, int accesses, boolean signalMask) {
            this(address, trampoline, old, accesses, signalMask, new byte[0], 0);
        }

        Trap withPun(byte[] bytes, long at) { return new Trap(address, trampoline, old, accesses, signalMask, bytes, at); }
    }

    /**
     * What the planner decided, by outcome: rewritten instructions, those traced through the int3 fallback
     * and those left per {@link Decision.Reason}; {@code punned} of the trapped ones have a punned jump planned
     * ({@link Puns}), which the runtime writes when it can (the others keep their int3).
     */
    record Counts(int rewritten, int[] left, int trapped, int punned) {
        Counts {
            left = left.clone();
        }

        Counts(int rewritten, int[] left, int trapped) { this(rewritten, left, trapped, 0); }

        /** The same counts with {@code n} of the trapped ones punned. */
        Counts punned(int n) { return new Counts(rewritten, left, trapped, n); }

        /** The trapped instructions (not an rt_sigprocmask place) among {@code traps} with a pun planned. */
        static int punned(List<Trap> traps) {
            return (int) traps.stream().filter(t -> !t.signalMask() && t.pun().length > 0).count();
        }

        int leftTotal() {
            int n = 0;
            for (int l : left) n += l;
            return n;
        }
    }

    byte[] bytes() {
        byte[] path = linked.file().toString().getBytes(StandardCharsets.UTF_8);
        int ids = pad(moduleBuildId.length + linked.buildId().length + path.length);
        int textAt = (HEADER + ids + TEXT_ALIGN - 1) & -TEXT_ALIGN;
        int[] fixups = linked.fixups();
        int size = textAt + pad(linked.text().length) + PATCH * patches.size() + pad(4 * fixups.length) + TRAP * traps.size();
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(MAGIC).putInt(VERSION).putInt(patches.size());
        b.putLong(linked.textAddress()).putLong(linked.text().length).putLong(linked.cursorSlot());
        b.putInt(moduleBuildId.length).putInt(linked.buildId().length).putInt(path.length).putInt(counts.left().length);
        for (int i = 0; i < 8; i++) b.putInt(i < counts.left().length ? counts.left()[i] : 0);
        b.putInt(counts.rewritten()).putInt(fixups.length).putInt(traps.size()).putInt(counts.trapped());
        b.put(moduleBuildId).put(linked.buildId()).put(path);
        b.position(textAt).put(linked.text());
        b.position(textAt + pad(linked.text().length));
        for (Patch p : patches) {
            b.putLong(p.address()).put(p.old()).put(new byte[8 - p.old().length]).put(p.jump()).put(new byte[8 - p.jump().length]);
        }
        for (int f : fixups) b.putInt(f);
        b.position(b.position() + (fixups.length % 2) * 4);
        for (Trap t : traps)
            b.putLong(t.address()).putLong(t.trampoline()).putLong(t.stub()).put(t.old()).put((byte) (t.signalMask() ? 1 : 0))
                    .put((byte) t.pun().length).put((byte) 0).putInt(t.accesses()).put(t.pun()).put(new byte[8 - t.pun().length]);
        return b.array();
    }

    /** What Java needs of a plan written before: its counts, and the length of its module's build-id (0: none). */
    record Summary(Counts counts, int moduleIdLength) {}

    /**
     * The summary of a plan file written before (a cached plan), from its header and its int3 places alone:
     * libc's plan is 13 MB, nearly all of it trampoline text that only the runtime reads.
     */
    static Summary summary(Path plan) throws IOException, RewriteException {
        try (FileChannel channel = FileChannel.open(plan, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            long size = channel.size();
            ByteBuffer h = read(channel, 0, (int) Math.min(size, HEADER));
            if (h.limit() < HEADER || h.getLong(0) != MAGIC || h.getInt(8) != VERSION) throw new RewriteException(plan + " is not a rewrite plan");
            long count = Integer.toUnsignedLong(h.getInt(96));
            if (HEADER + TRAP * count > size) throw new RewriteException(plan + " is not a rewrite plan (damaged)");
            int[] left = new int[Math.min(8, Math.max(0, h.getInt(52)))];
            for (int i = 0; i < left.length; i++) left[i] = h.getInt(56 + 4 * i);
            ByteBuffer t = read(channel, size - TRAP * count, (int) (TRAP * count));
            int punned = 0; // as Counts.punned: no rt_sigprocmask place, a pun planned
            for (int at = 0; at < t.limit(); at += TRAP) if (t.get(at + 25) == 0 && t.get(at + 26) > 0) punned++;
            return new Summary(new Counts(h.getInt(88), left, h.getInt(100)).punned(punned), h.getInt(40));
        }
    }

    private static ByteBuffer read(FileChannel channel, long at, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) if (channel.read(b, at + b.position()) < 0) break;
        return b.flip();
    }

    /** The int3 places of a plan file written before, punned ones with their pun (tests read what was planned). */
    static List<Trap> traps(Path plan) throws IOException, RewriteException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(plan)).order(ByteOrder.LITTLE_ENDIAN);
        if (b.limit() < HEADER || b.getLong(0) != MAGIC || b.getInt(8) != VERSION) throw new RewriteException(plan + " is not a rewrite plan");
        return traps(b);
    }

    private static List<Trap> traps(ByteBuffer b) {
        int count = b.getInt(96);
        List<Trap> out = new java.util.ArrayList<>(count);
        for (int at = b.limit() - TRAP * count; at < b.limit(); at += TRAP) {
            byte[] pun = new byte[b.get(at + 26)];
            b.get(at + 32, pun);
            out.add(new Trap(b.getLong(at), b.getLong(at + 8), b.get(at + 24), b.getInt(at + 28), b.get(at + 25) != 0, pun, b.getLong(at + 16)));
        }
        return out;
    }

    private static int pad(int n) { return (n + 7) & ~7; }
}
