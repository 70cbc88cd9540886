package org.memtrace.rewrite;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.memtrace.symbols.DwarfLocals;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSegment;
import org.memtrace.x86.Decoder;

/**
 * Plans one module's rewrite and keeps it in the cache, keyed by the module's contents: the plan file the
 * runtime applies and the trampoline file the reader names sites through. A second run of the same
 * module finds both and plans nothing (docs/rewriting.md, "Where the rewrite happens").
 */
public final class ModuleRewrite {
    /** Changes whenever the planner or the trampolines change, so an older plan is not taken for a current one. */
    static final String PLANNER_VERSION = "rewrite-25-no-dead-registers-by-landing-pads";
    /** Room left between the trampolines and the module's first byte. */
    private static final long GAP = 0x10000;
    /** The lowest address a mapping may take: the usual {@code vm.mmap_min_addr} (the runtime's floor too). */
    static final long LOWEST_MAPPING = 0x10000;
    /** How far a trampoline may be from any byte of its module: the runtime's bound, a rel32 less a margin. */
    static final long REACH = 0x7ff00000L - 0x100000L;

    /**
     * A module ready to run rewritten: its plan, its trampoline file and what the planner decided; with a
     * selection ({@code --omega}) how many memory instructions it chose, of how many; for the executable of a
     * check planned now, run --check's table ({@link FrameTable}) made from the DWARF the plan read (empty for a
     * plan found in the cache, a library's or a trace's: the run reads the table itself then, if it wants one).
     */
    public record Prepared(Path plan, Path trampolines, PlanFile.Counts counts, Optional<SelectionCounts> selection,
                           Optional<FrameTable> frames) {
        Prepared(Path plan, Path trampolines, PlanFile.Counts counts) { this(plan, trampolines, counts, Optional.empty(), Optional.empty()); }

        public int rewritten() { return counts.rewritten(); }

        public int left() { return counts.leftTotal(); }

        /**
         * With a selection, what the summary line says before the rewrite's counts ("omega 0.25: 120 of 480
         * memory references selected; "); empty without one.
         */
        public String selectedWords() {
            return selection.map(s -> "omega " + s.omega() + ": " + s.selected() + " of " + s.references() + " memory references selected; ")
                    .orElse("");
        }

        /** The instructions traced through the int3 fallback, punned ones included. */
        public int trapped() { return counts.trapped(); }

        /** Of {@link #trapped}, those with a punned jump planned, which the runtime writes when it can. */
        public int punned() { return counts.punned(); }

        /**
         * The summary's words for {@code module}: "N memory instructions of M rewritten, P by a punned jump, T
         * through the int3 fallback, L left untraced (reasons)", after the selection's words ({@link
         * #selectedWords}): N patched by a jump, P by a punned jump as planned, T keeping their int3 as planned.
         * Which puns the runtime could not write (and which then keep their int3) the run's record says
         * (MT_FALLBACK, the summary's "punned jumps" line).
         */
        public String counted(String module) { return counted(module, "rewritten", "untraced"); }

        /** The same words for a check plan's trampolines ("checked", "unchecked") or a trace's. */
        public String counted(String module, String done, String notDone) {
            String reasons = leftByReason();
            return selectedWords() + rewritten() + " memory instructions of " + module + " " + done + ", " + punned() + " by a punned jump, "
                    + (trapped() - punned()) + " through the int3 fallback, " + left() + " left " + notDone
                    + (reasons.isEmpty() ? "" : " (" + reasons + ")");
        }

        /** The instructions left untraced, by reason, in words ("12 shorter than 5 bytes, 3 calls"); empty when none. */
        public String leftByReason() {
            List<String> parts = new ArrayList<>();
            Decision.Reason[] reasons = Decision.Reason.values();
            for (int i = 0; i < reasons.length && i < counts.left().length; i++)
                if (counts.left()[i] > 0) parts.add(counts.left()[i] + " " + reasons[i].words());
            return String.join(", ", parts);
        }
    }

    /**
     * What a selection chose in a module: {@code selected} of its {@code references} memory references (the
     * analysis's, {@link Selective}), at ω {@code omega}.
     */
    public record SelectionCounts(double omega, int selected, int references) {}

    private ModuleRewrite() {}

    /** The module's plan from {@code cache} (a directory memtrace made, {@link RewriteCache}), planned now if it is not there. */
    public static Prepared prepare(Path module, Path cache) throws IOException, RewriteException {
        return prepare(module, cache, PlanChoice.TRACE);
    }

    /**
     * The same, for {@code choice}: only the memory instructions its selection chooses (none: every one), the
     * plan cached under a key that includes the selection's options; trampolines that check or record as its
     * probes say. A check plan leaves out the instructions none of whose accesses is checked
     * ({@link CheckProbe#checked}: stack slots, globals, thread-local storage), which then run as they are, and
     * counts only checked accesses' instructions: rewritten are those checked, left those that needed a check
     * and could not be patched.
     */
    public static Prepared prepare(Path module, Path cache, PlanChoice choice) throws IOException, RewriteException {
        byte[][] read = new byte[1][];
        String key = contentKey(module, cache, choice, read);
        Prepared cached = cached(key, cache, choice, false);
        return cached != null ? cached : plan(module, cache, choice, key, read[0] != null ? read[0] : Files.readAllBytes(module), true);
    }

    /**
     * The module planned now, its bytes {@code image}, its plan kept in {@code cache} under {@code key}; with
     * {@code executable}, a check's {@link Prepared#frames} made too.
     */
    private static Prepared plan(Path module, Path cache, PlanChoice choice, String key, byte[] image, boolean executable)
            throws IOException, RewriteException {
        Selective selective = choice.selective();
        Probes probes = choice.probes();
        Path plan = cache.resolve(key + ".plan"), trampolines = cache.resolve(key + ".elf"), chosen = cache.resolve(key + ".selection");
        ElfFile elf;
        try {
            elf = ElfFile.parse(module.toString(), image);
        } catch (ElfFormatException e) {
            throw new RewriteException(module + " is not an ELF file: " + e.getMessage());
        }
        if (elf.type() != ElfFile.ET_EXEC && elf.type() != ElfFile.ET_DYN)
            throw new RewriteException(module + " is neither an executable nor a shared library");
        List<Decision> decisions;
        DeadRegisters dead;
        Selective.Chosen selection = null;
        try {
            if (selective != null) selection = selective.choose(elf);
            Selective.Chosen s = selection;
            PatchPlanner planner = s == null ? new PatchPlanner(new Decoder()) : new PatchPlanner(new Decoder(), s::traced, selective.options().includeStack());
            decisions = planner.plan(elf);
            dead = DeadRegisters.of(elf, planner.swept());
        } catch (ElfFormatException e) {
            throw new RewriteException(module + ": " + e.getMessage());
        }
        // run --check: direct accesses to the stack variables of unoptimised frame-pointer functions (DWARF)
        // (and the DWARF read for that, once, serves run --check's table too: FrameTable)
        DwarfLocals.Frames dwarf = probes.checks() ? DwarfLocals.readAll(elf) : DwarfLocals.Frames.NONE;
        StackSlots slots = probes.checks() ? StackSlots.of(elf, dwarf) : StackSlots.NONE;
        Optional<FrameTable> frames = probes.checks() && executable ? Optional.of(FrameTable.of(elf, dwarf, slots.cfaAtCalls())) : Optional.empty();
        List<Decision.Patch> patches = new ArrayList<>();
        Set<Long> patched = new HashSet<>();
        List<Decision.Patch> trapped = new ArrayList<>(); // linked after the patches: trampoline patches.size() + k
        int[] left = new int[Decision.Reason.values().length];
        int rewritten = 0;
        long room = GAP;
        for (Decision d : decisions) {
            switch (d) {
                case Decision.Patch p -> {
                    if (probes == Probes.CHECK && !CheckProbe.checksAny(p, slots)) continue; // nothing to check: left as it is
                    patches.add(p);
                    room += TrampolineWriter.bound(p) + (probes.checks() ? CheckProbe.bound(p, slots) : 0);
                    for (Decision.Part part : p.parts())
                        if (probes == Probes.CHECK ? !CheckProbe.checks(part, slots).isEmpty() : !part.accesses().isEmpty()) {
                            rewritten++;
                            patched.add(part.instruction().address());
                        }
                }
                case Decision.Trapped t -> {
                    // a check plan traps only what it checks; the trap's trampoline checks or records as the others do
                    if (probes == Probes.CHECK && !CheckProbe.checksAny(t.patch(), slots)) continue;
                    trapped.add(t.patch());
                    room += TrampolineWriter.bound(t.patch()) + (probes.checks() ? CheckProbe.bound(t.patch(), slots) : 0);
                    for (Decision.Part part : t.patch().parts()) patched.add(part.instruction().address());
                }
                case Decision.SignalMask m -> {
                    trapped.add(m.patch());
                    room += TrampolineWriter.bound(m.patch());
                }
                case Decision.Covered c -> { } // counted with the patch that moved it
                case Decision.Left l -> {
                    if (probes != Probes.CHECK || l.instruction().accesses().stream()
                            .anyMatch(a -> CheckProbe.checked(a) && !slots.frameSlot(l.instruction().address(), a)))
                        left[l.reason().ordinal()]++;
                }
            }
        }
        long base = textBase(module, elf, room);
        Path work = Files.createTempDirectory(cache, "work-");
        try {
            Path linkedFile = work.resolve("trampolines.elf");
            List<Decision.Patch> all = new ArrayList<>(patches);
            all.addAll(trapped);
            TrampolineLinker.Linked linked = TrampolineLinker.link(all, probes,
                    selection == null ? SiteWeights.FULL : selection.siteWeights(patched), slots, dead, base, elf.buildId().orElse(new byte[0]), work, linkedFile);
            if (linked.text().length > room)
                throw new RewriteException(module + ": the trampolines came out larger than their bound (" + linked.text().length + " bytes)");
            List<PlanFile.Patch> writes = new ArrayList<>(patches.size());
            for (int i = 0; i < patches.size(); i++) writes.add(jump(patches.get(i), linked.trampolines()[i]));
            for (Decision.Patch p : patches) if (p.via() != null) writes.add(hop(p));
            List<PlanFile.Trap> traps = new ArrayList<>(trapped.size());
            int viaTrap = 0;
            for (int i = 0; i < trapped.size(); i++) {
                Decision.Part part = trapped.get(i).parts().getFirst();
                boolean mask = part.instruction().flow() == org.memtrace.x86.Flow.SYSTEM_CALL;
                if (!mask) viaTrap++;
                // the accesses its trampoline records: the instruction's and its tail's (a trap runs both)
                int accesses = trapped.get(i).all().stream().mapToInt(x -> x.accesses().size()).sum();
                traps.add(new PlanFile.Trap(part.instruction().address(), linked.trampolines()[patches.size() + i], part.bytes()[0],
                        accesses, mask));
            }
            traps.sort(Comparator.comparingLong(PlanFile.Trap::address)); // the runtime's binary search
            Map<Long, Integer> lengths = new HashMap<>(), own = new HashMap<>();
            for (Decision.Patch t : trapped) lengths.put(t.instruction().address(), t.instruction().length());
            // a jump's room is every byte it replaces (a run's, not its first instruction's): prefix padding may fill it
            for (Decision.Patch p : patches)
                if (p.via() == null) own.put(p.instruction().address(), (int) (p.end() - p.instruction().address()));
            try {
                Puns.Result punned = Puns.add(elf, writes, traps, lengths, own, base, room);
                writes = punned.writes();
                traps = punned.traps();
            } catch (ElfFormatException e) {
                throw new RewriteException(module + ": " + e.getMessage());
            }
            Files.move(linkedFile, trampolines, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            linked = new TrampolineLinker.Linked(trampolines, linked.textAddress(), linked.text(), linked.cursorSlot(),
                    linked.trampolines(), linked.buildId(), linked.fixups());
            PlanFile file = new PlanFile(new PlanFile.Counts(rewritten, left, viaTrap, PlanFile.Counts.punned(traps)), elf.buildId().orElse(new byte[0]), linked, writes, traps);
            Optional<SelectionCounts> counts = Optional.empty();
            if (selection != null) {
                counts = Optional.of(new SelectionCounts(selective.omega(), selection.selected(), selection.references()));
                Path temporary = work.resolve("selection");
                Files.writeString(temporary, selection.selected() + " " + selection.references() + "\n");
                Files.move(temporary, chosen, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            Path temporary = work.resolve("plan");
            Files.write(temporary, file.bytes());
            Files.move(temporary, plan, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return new Prepared(plan, trampolines, file.counts(), counts, frames);
        } finally {
            deleteTree(work);
        }
    }

    /**
     * The link-time address of the trampolines' text, {@code room} bytes at most (docs/rewriting.md,
     * "Placement within ±2 GB"). Below the module when it fits: a position-independent module's "below 0" is
     * a place relative to its load bias, and a position-dependent executable's is the room under its first
     * segment, above the null-page guard. An executable whose code starts too low for that (the usual
     * non-PIE one at 0x400000, with more than about 4 MB of trampolines: python3) gets them above, as far
     * from its end as a rel32 from its first byte allows, because the kernel starts its brk heap just after
     * its last segment and a mapping in the heap's way makes brk fail (malloc then goes on with mmap, but a
     * program that calls sbrk itself would not).
     * A position-independent module's text lies {@link #spread} below it, not right below: the loader maps
     * libraries next to each other, so the place right below one is the next library's (or the plan file's
     * own mapping, top-down below them), and a text the runtime must move has every page copied to move its
     * rel32s (MADV_POPULATE_WRITE, most of a warm start's cost); at its link-time place it is the page
     * cache's pages, mapped and never written but for the cursor slot's page.
     */
    static long textBase(Path module, ElfFile elf, long room) throws RewriteException {
        long lowest = elf.loadSegments().stream().mapToLong(ElfSegment::vaddr).min()
                .orElseThrow(() -> new RewriteException(module + " has no loadable segment"));
        long end = elf.loadSegments().stream().mapToLong(s -> s.vaddr() + s.memSize()).max().orElseThrow();
        if (elf.type() == ElfFile.ET_DYN)
            return (lowest - room - spread(elf.buildId().orElse(new byte[0]), end - lowest + room)) & ~0xfffL;
        long below = (lowest - room) & ~0xfffL;
        if (lowest - room >= LOWEST_MAPPING && below >= LOWEST_MAPPING) return below;
        long above = (lowest + REACH - room) & ~0xfffL;
        if (above < ((end + 0xfff) & ~0xfffL))
            throw new RewriteException(module + ": its trampolines (up to " + ((room + 0xfffff) >> 20)
                    + " MB) fit neither below its code nor above it within 2 GB");
        return above;
    }

    /** The least and most distance {@link #spread} puts between a position-independent module and its text. */
    static final long SPREAD_MIN = 64L << 20, SPREAD_MAX = 1L << 30;

    /**
     * How far below a position-independent module its text ends: SPREAD_MIN to SPREAD_MAX, in 64 KB steps
     * drawn from the module's build-id, so two modules' texts rarely meet (libc's 8 MB and another 8 MB
     * overlap at about 1.7 % of the pairs' distances) whatever libraries a program loads next to each other.
     * Past the first 64 MB under the libraries, which the loader's mappings, the plan files' and the
     * program's first mappings take. Less when module and text would not be within a rel32 of each other
     * ({@code span}: the module's bytes and the text's): never past the runtime's reach.
     */
    static long spread(byte[] buildId, long span) {
        long h = 0;
        for (byte b : buildId) h = h * 31 + (b & 0xff);
        long steps = (SPREAD_MAX - SPREAD_MIN) >> 16;
        long d = SPREAD_MIN + (Math.floorMod(h * 0x9E3779B97F4A7C15L >>> 17, steps) << 16);
        long most = REACH - span - (16L << 20);
        return Math.max(0, Math.min(d, most));
    }

    /**
     * A shared library's plan: as {@link #prepare}, for a library with a GNU build-id, by which the runtime
     * finds it among the loaded objects (a library without one is refused, and excluded by the caller).
     */
    public static Prepared prepareLibrary(Path library, Path cache) throws IOException, RewriteException {
        return prepareLibrary(library, cache, PlanChoice.TRACE);
    }

    /** The same for {@code choice} ({@link #prepare(Path, Path, PlanChoice)}). */
    public static Prepared prepareLibrary(Path library, Path cache, PlanChoice choice) throws IOException, RewriteException {
        byte[][] read = new byte[1][];
        String key;
        try {
            key = contentKey(library, cache, choice, read);
        } catch (IOException e) {
            throw new RewriteException("cannot read it: " + e.getMessage());
        }
        Prepared cached = cached(key, cache, choice, true);
        if (cached != null) return cached;
        ElfFile elf;
        try {
            elf = ElfFile.readSections(library);
        } catch (IOException | RuntimeException e) {
            throw new RewriteException("cannot read it: " + e.getMessage());
        }
        if (elf.buildId().isEmpty()) throw new RewriteException("no build-id to find it by");
        return plan(library, cache, choice, key, read[0] != null ? read[0] : Files.readAllBytes(library), false);
    }

    /**
     * Why a check run leaves {@code library} unrewritten, or null: glibc's own libraries (libc, libm, the
     * loader's companions, NSS and gconv modules), whose string functions read past a string's end by design
     * (aligned vector loads) and are checked instead by what they mean, as for {@code memtrace cc --check}.
     */
    public static String unchecked(Path library) {
        String name = library.getFileName().toString();
        boolean glibc = name.matches("(libc|libm|libmvec|libpthread|libdl|librt|libresolv|libanl|libutil|libBrokenLocale|libthread_db|libmemusage|libpcprofile|libSegFault|libc_malloc_debug)\\.so(\\..*)?")
                || name.startsWith("libnss_") || name.startsWith("ld-linux") || library.toString().contains("/gconv/");
        return glibc ? "glibc's: its functions are checked by what they do" : null;
    }

    /**
     * The {@code jmp rel32} from the instruction to its trampoline at {@code trampoline}; from the dead padding
     * of {@link Decision.Patch#via} when the patch has one ({@link #hop} jumps there).
     */
    static PlanFile.Patch jump(Decision.Patch p, long trampoline) throws RewriteException {
        if (p.via() != null) {
            long rel = trampoline - (p.via().address() + PatchPlanner.JUMP_LENGTH);
            if (rel != (int) rel) throw new RewriteException("a trampoline is out of reach of the padding at 0x" + Long.toHexString(p.via().address()));
            byte[] jump = new byte[PatchPlanner.JUMP_LENGTH];
            jump[0] = (byte) 0xe9;
            PatchPlanner.writeInt(jump, 1, (int) rel);
            return new PlanFile.Patch(p.via().address(), p.via().old(), jump);
        }
        long rel = trampoline - (p.instruction().address() + PatchPlanner.JUMP_LENGTH);
        if (rel != (int) rel) throw new RewriteException("a trampoline is out of reach of its instruction at 0x" + Long.toHexString(p.instruction().address()));
        byte[] jump = new byte[PatchPlanner.JUMP_LENGTH];
        jump[0] = (byte) 0xe9;
        PatchPlanner.writeInt(jump, 1, (int) rel);
        // the bytes there now, up to 8 of them: a jump padded with prefixes (Puns) writes more than 5
        int n = (int) Math.min(8, p.end() - p.instruction().address());
        byte[] old = new byte[n];
        int at = 0;
        for (Decision.Part part : p.parts())
            for (byte b : part.bytes()) if (at < old.length) old[at++] = b;
        return new PlanFile.Patch(p.instruction().address(), old, jump);
    }

    /** The {@code jmp rel8} over the first 2 bytes of a patch's instruction to its {@link Decision.Patch#via} padding. */
    static PlanFile.Patch hop(Decision.Patch p) {
        byte[] old = java.util.Arrays.copyOf(p.parts().getFirst().bytes(), 2);
        long rel = p.via().address() - (p.instruction().address() + 2);
        return new PlanFile.Patch(p.instruction().address(), old, new byte[] {(byte) 0xeb, (byte) rel});
    }

    /** The counts a cached plan's selection file holds ("selected references"). */
    private static Optional<SelectionCounts> readCounts(Selective selective, Path file) throws IOException, RewriteException {
        String[] words = Files.readString(file).trim().split(" ");
        try {
            return Optional.of(new SelectionCounts(selective.omega(), Integer.parseInt(words[0]), Integer.parseInt(words[1])));
        } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
            throw new RewriteException(file + " is not a selection's counts");
        }
    }

    /**
     * The plan of the module whose content key is {@code key} when the cache has it, read no further than its
     * header and int3 places (a warm start-up reads no module and no trampoline text in Java); null
     * when it must be planned. {@code library}: a plan without the module's build-id is refused, as planning
     * the library would be (the runtime finds a library by it).
     */
    private static Prepared cached(String key, Path cache, PlanChoice choice, boolean library) throws IOException, RewriteException {
        Path plan = cache.resolve(key + ".plan"), trampolines = cache.resolve(key + ".elf"), chosen = cache.resolve(key + ".selection");
        Selective selective = choice.selective();
        if (!Files.isRegularFile(plan, LinkOption.NOFOLLOW_LINKS) || !Files.isRegularFile(trampolines, LinkOption.NOFOLLOW_LINKS)
                || selective != null && !Files.isRegularFile(chosen, LinkOption.NOFOLLOW_LINKS))
            return null;
        PlanFile.Summary summary = PlanFile.summary(plan);
        if (library && summary.moduleIdLength() == 0) throw new RewriteException("no build-id to find it by");
        return new Prepared(plan, trampolines, summary.counts(), selective == null ? Optional.empty() : readCounts(selective, chosen),
                Optional.empty());
    }

    /** The module's content key ({@link RewriteCache#contentKey}); {@code read[0]}: its bytes when they were read for it. */
    private static String contentKey(Path module, Path cache, PlanChoice choice, byte[][] read) throws IOException {
        return RewriteCache.contentKey(module, PLANNER_VERSION + "\0" + choice.key(), cache, image -> key(image, choice), read);
    }

    private static String key(byte[] image, PlanChoice choice) {
        // the choice is part of the plan: ω 0.25 and ω 0.5, a check and a trace, are plans of their own
        return RewriteCache.sha256(PLANNER_VERSION.getBytes(java.nio.charset.StandardCharsets.US_ASCII),
                choice.key().getBytes(java.nio.charset.StandardCharsets.UTF_8), image);
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a work directory left in the cache costs space only
        }
    }
}
