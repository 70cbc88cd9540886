package org.memtrace.mtr;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.memtrace.event.Event;
import org.memtrace.symbols.ElfFile;

/**
 * Follows the MT_MODULE and MT_MAPPING events of a trace and keeps the site tables of the instrumented
 * modules placed where they were loaded, so an access record's site (a run-time address) finds its entry.
 * A module is keyed by path and load bias; its file must still have the recorded build-id. For a file with
 * skeleton loops the build-id is the checksum that ties the trace to the skeleton it is replayed from (the
 * section is part of what the linker hashes): a file whose build-id differs from the recorded one, or a
 * recording or file without one, is refused, since a stale skeleton would compute wrong addresses.
 *
 * <p>A site is looked up in the placed tables when a record first names it and kept in a map from then on,
 * so the map holds the sites the run executed, not every site of every loaded table.
 */
final class ModuleSites {
    private static final int RECENT_BITS = 15, RECENT = 1 << RECENT_BITS;
    private final SiteMap sites = new SiteMap();
    /**
     * In front of {@link #sites}, direct-mapped: the access sites named last. A large program's run names tens
     * of thousands of sites (sqlite3), whose map does not stay in the cache; most records name a few
     * thousand of them.
     */
    private final long[] recentKeys = new long[RECENT];
    private final Event.ProbeSite[] recent = new Event.ProbeSite[RECENT];
    /** Every table placed, in the order the trace loaded them: a later one's site at an address wins. */
    private final List<SiteTable.Placement> placements = new ArrayList<>();
    /** The placements of trampoline files (rewrite mode): their code stands for instructions of other modules. */
    private final Set<SiteTable.Placement> trampolines = new HashSet<>();
    /** Addresses no placed table has a probe at, since the last placement (damage: rare, so boxed). */
    private final Set<Long> unknown = new HashSet<>();
    private final Map<String, SiteTable> tables = new HashMap<>();
    /** Of a trampoline file (rewrite mode), the build-id of the module it rewrites, by the file's path. */
    private final Map<String, String> rewrittenOf = new HashMap<>();
    /** The load bias of each module the trace loaded, by build-id: where a trampoline file's sites name instructions. */
    private final Map<String, Long> biasById = new HashMap<>();
    private final Set<String> placed = new HashSet<>();
    /** The table placed last, by path and bias: its report again (the same library reopened) changes nothing. */
    private String lastPlaced;
    private final List<Event.Module> unnamed = new ArrayList<>();
    /** Files mapped at offset 0, by start address: the loader names the main program "", its first mapping does. */
    private final TreeMap<Long, String> fileStarts = new TreeMap<>();
    private final Consumer<String> problems;

    ModuleSites(Consumer<String> problems) { this.problems = problems; }

    void observe(Event event) throws MtrFormatException {
        // instanceof, not a pattern switch: this sees every event (an allocation-heavy trace's are mostly
        // malloc and free), and a pattern switch dispatches through a bootstrap call each time
        if (event instanceof Event.Module m) {
            add(m);
        } else if (event instanceof Event.Mapping m) {
            if (m.offset() == 0 && !m.path().isEmpty() && !m.path().startsWith("[")) fileStarts.put(m.start(), m.path());
            if (!unnamed.isEmpty()) {
                List<Event.Module> waiting = List.copyOf(unnamed);
                unnamed.clear();
                for (Event.Module w : waiting) add(w);
            }
        }
    }

    /** The site at {@code address} when a record named it before and it is an access site, else null: the common record's lookup. */
    Event.ProbeSite access(long address) {
        int h = (int) ((address * 0x9E3779B97F4A7C15L) >>> 64 - RECENT_BITS);
        if (recentKeys[h] == address && recent[h] != null) return recent[h];
        Event.ProbeSite p = sites.access(address);
        if (p != null) {
            recentKeys[h] = address;
            recent[h] = p;
        }
        return p;
    }

    SiteTable.Site site(long address) {
        SiteTable.Site s = sites.get(address);
        return s != null ? s : resolve(address);
    }

    /**
     * {@code ip} where a program stopped (a fatal signal), trampoline code named by the instruction of the
     * module it stands for (docs/rewriting.md, "A crash in a moved instruction"); any other {@code ip}
     * unchanged.
     */
    long original(long ip) {
        for (int i = placements.size() - 1; i >= 0; i--) {
            SiteTable.Placement p = placements.get(i);
            if (!trampolines.contains(p)) continue;
            long insn = p.instructionAt(ip);
            if (insn != -1) return insn;
        }
        return ip;
    }

    private SiteTable.Site resolve(long address) {
        if (unknown.contains(address)) return null;
        for (int i = placements.size() - 1; i >= 0; i--) {
            SiteTable.Site s = placements.get(i).site(address);
            if (s != null) {
                sites.put(address, s);
                return s;
            }
        }
        unknown.add(address);
        return null;
    }

    /** Loops the rewriter declined to skeletonize, by reason, over the instrumented files the trace loaded. */
    Map<String, Long> declinedLoops() {
        Map<String, Long> all = new TreeMap<>();
        for (SiteTable t : tables.values()) if (t != null) t.skeleton().declined().forEach((r, n) -> all.merge(r, n, Long::sum));
        return all;
    }

    private void add(Event.Module m) throws MtrFormatException {
        String path = m.path();
        if (path.isEmpty()) {
            var e = fileStarts.ceilingEntry(m.loadBias());
            if (e == null) {
                unnamed.add(m);
                return;
            }
            path = e.getValue();
        }
        if (m.buildId().length > 0) biasById.put(hex(m.buildId()), m.loadBias());
        // placed again only when another table was placed since (a dlopen of another library at its address)
        String key = path + '@' + m.loadBias();
        if (!placed.add(key) && key.equals(lastPlaced)) return;
        SiteTable table = table(path, m.buildId());
        if (table == null) return;
        lastPlaced = key;
        // a trampoline file is reported where its text was mapped; the module it rewrites may lie elsewhere
        String of = rewrittenOf.get(path);
        SiteTable.Placement p = table.placeAt(m.loadBias(), of != null ? biasById.getOrDefault(of, m.loadBias()) : m.loadBias());
        placements.add(p);
        if (of != null) trampolines.add(p);
        // what it places over: sites found in tables loaded before it (a dlopen at an address used before), misses
        sites.removeIf(p::has);
        Arrays.fill(recent, null);
        unknown.clear();
    }

    /**
     * The file's table, read once per path; null for a file without one or one that cannot be read.
     *
     * @throws MtrFormatException when the file has skeleton loops and its build-id does not match the recording's
     */
    private SiteTable table(String path, byte[] buildId) throws MtrFormatException {
        if (tables.containsKey(path)) return tables.get(path);
        SiteTable table = null;
        ElfFile elf;
        try {
            elf = ElfFile.readSections(org.memtrace.symbols.RecordedPath.of(path));
        } catch (IOException | RuntimeException e) {
            // the vdso, a deleted or unreadable file: uninstrumented as far as the trace can tell
            tables.put(path, null);
            return null;
        }
        byte[] id = elf.buildId().orElse(null);
        if (elf.section(SkeletonTable.SECTION).isPresent()) {
            if (buildId.length == 0 || id == null)
                throw new MtrFormatException(path + " has skeleton loops but " + (id == null ? "the file" : "the recording")
                        + " has no build-id to tie the trace to them; link it with -Wl,--build-id (memtrace cc --skeleton does)");
            if (!Arrays.equals(id, buildId))
                throw new MtrFormatException(path + " is not the build the trace was recorded from (build-id " + hex(buildId)
                        + " in the trace, " + hex(id) + " on disk): its skeleton loops cannot be replayed");
        }
        try {
            if (buildId.length > 0 && id != null && !Arrays.equals(id, buildId)) {
                if (elf.section(SiteTable.SECTION).isPresent())
                    problems.accept(path + " changed since the recording (its build-id differs): its probes cannot be named and are left out");
            } else {
                table = SiteTable.of(elf);
                var of = elf.section("memtrace_rewritten");
                if (of.isPresent() && of.get().size() > 0) rewrittenOf.put(path, hex(contents(elf, of.get())));
            }
        } catch (MtrFormatException e) {
            problems.accept(e.getMessage() + "; its probes are left out");
        } catch (RuntimeException e) {
            // a table the reader cannot make sense of: uninstrumented as far as the trace can tell
        }
        tables.put(path, table);
        return table;
    }

    private static byte[] contents(ElfFile elf, org.memtrace.symbols.ElfSection section) {
        try {
            return elf.contents(section);
        } catch (org.memtrace.symbols.ElfFormatException e) {
            return new byte[0];
        }
    }

    private static String hex(byte[] id) {
        var s = new StringBuilder();
        for (byte b : id) s.append(String.format("%02x", b));
        return s.toString();
    }
}
