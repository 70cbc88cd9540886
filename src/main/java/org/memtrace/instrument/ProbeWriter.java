package org.memtrace.instrument;

import org.memtrace.format.SiteFormat;
import org.memtrace.x86.Register;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Writes the probe of docs/compiled-in.md ("The probe") before an instruction, and its entries of the
 * {@code memtrace_sites} table. Site labels are numbered in the order probes are written.
 */
final class ProbeWriter {
    static final String INSTRUCTION_LABEL = ".Lmt_i";
    /** Where a TLS resolver call starts, prefix bytes included: {@code .Lmt_t<instruction index>}. */
    static final String RESOLVER_LABEL = ".Lmt_t";
    static final String SITE_LABEL = ".Lmt_s";
    /** The table's section: allocated (strip keeps it) and retained (--gc-sections keeps it). */
    static final String SITES_SECTION = ".section " + SiteFormat.SECTION + ",\"aR\",@progbits";
    /** The cursor as a link-time offset from the thread pointer: only an executable can resolve it. */
    private static final String LOCAL_CURSOR = "%fs:__memtrace_cursor@tpoff";

    private final StringBuilder table = new StringBuilder();
    private final boolean localCursor;
    private int sites;
    private boolean localGroups;

    /**
     * @param localCursor the object goes into an executable (not compiled -fPIC, not linked -shared): group
     *                    probes address the cursor at its link-time offset, one load, no GOT slot and no
     *                    register for the offset
     */
    ProbeWriter(boolean localCursor) {
        this.localCursor = localCursor;
    }

    int sites() {
        return sites;
    }

    /**
     * Appends the probe for {@code probes} and the instruction's label to {@code out}.
     *
     * @param cfi the call frame address is rsp-based here: the probe's own moves of %rsp are described
     */
    void probe(StringBuilder out, int instruction, List<Site> probes, boolean cfi) {
        probe(out, INSTRUCTION_LABEL + instruction, probes, cfi);
    }

    /**
     * The same probe followed by {@code label} instead of an instruction's label, which the table's
     * {@code insn} field then names: a skeleton loop's entry and exit probes stand before no instruction of
     * their own.
     */
    void probe(StringBuilder out, String label, List<Site> probes, boolean cfi) {
        probeOnly(out, label, probes, cfi);
        out.append(label).append(":\n");
    }

    /**
     * A skeleton loop's probe of register values (its entry, exit or a marker), followed by {@code label}. In
     * an executable it is one group probe for all of them: one frame (two saves, one load and one store of
     * the cursor) and four instructions a value, so that a loop entry costs about what the full build's
     * probes pay for entering and leaving a loop that keeps its cursor in a register (docs/compiled-in.md,
     * "Never slower"). Elsewhere, or with more values than a group holds, {@link #probe}: a frame per value.
     */
    void values(StringBuilder out, String label, List<Site> values, boolean cfi) {
        if (!localCursor || values.size() > ProbeGroups.MAX_SITES
                || ProbeGroups.scratch(values.subList(0, values.size() - 1)) == null) {
            probe(out, label, values, cfi);
            return;
        }
        int base = sites;
        for (Site s : values) {
            entry(sites++, label, s);
        }
        localGroup(out, values, base, ProbeGroups.registers(values, Set.of()), cfi);
        out.append(label).append(":\n");
    }

    /**
     * The probe for {@code probes} of TLS resolver call {@code instruction}, written before the {@code lea}
     * the linker rewrites with the call. Its entries name {@link #RESOLVER_LABEL}, which goes right after the
     * {@code lea} ({@link #resolverLabel}): where the call's bytes start, its prefixes written as data
     * ({@code .value 0x6666}) included.
     */
    void probeAhead(StringBuilder out, int instruction, List<Site> probes, boolean cfi) {
        probeOnly(out, RESOLVER_LABEL + instruction, probes, cfi);
    }

    /** The label of TLS resolver call {@code instruction}'s first byte, for after its {@code lea}. */
    static void resolverLabel(StringBuilder out, int instruction) {
        out.append(RESOLVER_LABEL).append(instruction).append(":\n");
    }

    /** The probe itself, its entries naming {@code label}. */
    private void probeOnly(StringBuilder out, String label, List<Site> probes, boolean cfi) {
        out.append("\tleaq -128(%rsp), %rsp\n");
        adjust(out, cfi, 128);
        for (String r : List.of("%rax", "%rdx", "%r11")) {
            out.append("\tpushq ").append(r).append('\n');
            adjust(out, cfi, 8);
        }
        for (int i = 0; i < probes.size(); i++) {
            Site s = probes.get(i);
            if (i > 0) {
                out.append("\tmovq 16(%rsp), %rax\n\tmovq 8(%rsp), %rdx\n\tmovq (%rsp), %r11\n");
            }
            int n = sites++;
            out.append(SITE_LABEL).append(n).append(":\n");
            out.append("\tleaq ").append(s.address()).append(", %rax\n");
            if (s.fs()) {
                out.append("\tmovq %fs:0, %rdx\n\tleaq (%rax,%rdx), %rax\n");
            }
            out.append("\tmovq __memtrace_cursor@gottpoff(%rip), %r11\n");
            out.append("\tmovq %fs:(%r11), %rdx\n");
            out.append("\tmovq %rax, (%rdx)\n");
            out.append("\tleaq ").append(SITE_LABEL).append(n).append("(%rip), %rax\n");
            out.append("\tmovq %rax, 8(%rdx)\n");
            out.append("\tleaq 16(%rdx), %rdx\n");
            out.append("\tmovq %rdx, %fs:(%r11)\n");
            entry(n, label, s);
        }
        for (String r : List.of("%r11", "%rdx", "%rax")) {
            out.append("\tpopq ").append(r).append('\n');
            adjust(out, cfi, -8);
        }
        out.append("\tleaq 128(%rsp), %rsp\n");
        adjust(out, cfi, -128);
    }

    /**
     * Appends the probe of a group (ProbeGroups) and the first instruction's label: one save, one cursor load
     * and bump for all its sites, whose records keep program order in the slots. The last site's address is
     * computed first and its store, the highest of the group, comes right after the cursor load: it is the
     * only one that can reach the guard page. A group of one instruction ProbeGroups left alone gets
     * {@link #probe}.
     */
    void group(StringBuilder out, ProbeGroups.Group group, boolean cfi) {
        List<ProbeGroups.Member> members = group.members();
        int first = members.getFirst().index();
        if (members.size() == 1 && !ProbeGroups.groupable(members.getFirst().sites())) {
            probe(out, first, members.getFirst().sites(), cfi);
            return;
        }
        int base = this.sites;
        List<Site> sites = groupEntries(members);
        int n = sites.size();
        if (localCursor) {
            localGroup(out, sites, base, ProbeGroups.registers(sites, group.dead()), cfi);
        } else {
            Register[] scratch = ProbeGroups.scratch(sites.subList(0, n - 1));
            gotGroup(out, sites, base, "%" + scratch[0].name(), "%" + scratch[1].name(), cfi);
        }
        out.append(INSTRUCTION_LABEL).append(first).append(":\n");
    }

    /** The group probe of an object that may go into a shared library: the cursor's TLS offset from its GOT slot. */
    private void gotGroup(StringBuilder out, List<Site> sites, int base, String cursor, String offset, boolean cfi) {
        int n = sites.size();
        out.append("\tleaq -128(%rsp), %rsp\n");
        adjust(out, cfi, 128);
        for (String r : List.of("%rax", cursor, offset)) {
            out.append("\tpushq ").append(r).append('\n');
            adjust(out, cfi, 8);
        }
        Site last = sites.getLast();
        out.append(SITE_LABEL).append(base + n - 1).append(":\n");
        out.append("\tleaq ").append(last.address()).append(", %rax\n");
        if (last.fs()) {
            out.append("\tmovq %fs:0, ").append(cursor).append("\n\tleaq (%rax,").append(cursor).append("), %rax\n");
        }
        out.append("\tmovq __memtrace_cursor@gottpoff(%rip), ").append(offset).append('\n');
        out.append("\tmovq %fs:(").append(offset).append("), ").append(cursor).append('\n');
        store(out, base + n - 1, 16 * (n - 1), cursor, "%rax");
        for (int i = 0; i < n - 1; i++) {
            Site s = sites.get(i);
            if (ProbeGroups.reads(s, ProbeGroups.RAX)) {
                out.append("\tmovq 16(%rsp), %rax\n"); // the program's %rax, for an address that reads it
            }
            out.append(SITE_LABEL).append(base + i).append(":\n");
            out.append("\tleaq ").append(s.address()).append(", %rax\n");
            store(out, base + i, 16 * i, cursor, "%rax");
        }
        out.append("\tleaq ").append(16 * n).append('(').append(cursor).append("), ").append(cursor).append('\n');
        out.append("\tmovq ").append(cursor).append(", %fs:(").append(offset).append(")\n");
        for (String r : List.of(offset, cursor, "%rax")) {
            out.append("\tpopq ").append(r).append('\n');
            adjust(out, cfi, -8);
        }
        out.append("\tleaq 128(%rsp), %rsp\n");
        adjust(out, cfi, -128);
    }

    /**
     * The group probe of an executable's object: the second scratch register holds the addresses instead of
     * %rax, so no address needs the program's %rax back from the stack, and the cursor is one %fs load at
     * its link-time offset. Only registers that are not dead are saved, with a step over the red zone that
     * keeps the probe 152 bytes below the program's %rsp, as the sites' %rsp-based operands assume; with
     * none saved %rsp does not move, and an %rsp-based address gets those 152 bytes taken off again.
     */
    private void localGroup(StringBuilder out, List<Site> sites, int base, ProbeGroups.Registers registers, boolean cfi) {
        int n = sites.size();
        String cursor = "%" + registers.cursor().name();
        String address = "%" + registers.address().name();
        List<String> saved = new ArrayList<>(2);
        if (!registers.addressDead()) {
            saved.add(address);
        }
        if (!registers.cursorDead()) {
            saved.add(cursor);
        }
        int step = FunctionPlanner.RSP_OFFSET - 8 * saved.size();
        if (!saved.isEmpty()) {
            out.append("\tleaq -").append(step).append("(%rsp), %rsp\n");
            adjust(out, cfi, step);
            for (String r : saved) {
                out.append("\tpushq ").append(r).append('\n');
                adjust(out, cfi, 8);
            }
        }
        Site last = sites.getLast();
        out.append(SITE_LABEL).append(base + n - 1).append(":\n");
        address(out, last, address, saved.isEmpty());
        if (last.fs()) {
            out.append("\tmovq %fs:0, ").append(cursor).append("\n\tleaq (").append(address).append(',').append(cursor)
                    .append("), ").append(address).append('\n');
        }
        out.append("\tmovq ").append(LOCAL_CURSOR).append(", ").append(cursor).append('\n');
        store(out, base + n - 1, 16 * (n - 1), cursor, address);
        for (int i = 0; i < n - 1; i++) {
            out.append(SITE_LABEL).append(base + i).append(":\n");
            address(out, sites.get(i), address, saved.isEmpty());
            store(out, base + i, 16 * i, cursor, address);
        }
        out.append("\tleaq ").append(16 * n).append('(').append(cursor).append("), ").append(cursor).append('\n');
        out.append("\tmovq ").append(cursor).append(", ").append(LOCAL_CURSOR).append('\n');
        if (!saved.isEmpty()) {
            for (String r : saved.reversed()) {
                out.append("\tpopq ").append(r).append('\n');
                adjust(out, cfi, -8);
            }
            out.append("\tleaq ").append(step).append("(%rsp), %rsp\n");
            adjust(out, cfi, -step);
        }
        localGroups = true;
    }

    /**
     * Before the label of a loop that keeps its cursor in a register (CursorLoops): saves the two registers
     * below the red zone, where they stay until the loop is left (nothing in the loop touches %rsp), and
     * loads the cursor once.
     */
    void loopEntry(StringBuilder out, CursorLoops.Loop loop, boolean cfi) {
        out.append("\tleaq -128(%rsp), %rsp\n");
        adjust(out, cfi, 128);
        for (Register r : List.of(loop.address(), loop.cursor())) {
            out.append("\tpushq %").append(r.name()).append('\n');
            adjust(out, cfi, 8);
        }
        out.append("\tmovq ").append(LOCAL_CURSOR).append(", %").append(loop.cursor().name()).append('\n');
        localGroups = true;
    }

    /**
     * A group probe inside such a loop: the records and the advanced cursor, nothing saved, loaded or stored
     * in memory (a store of the cursor on every pass was measured to cost gemm a third of its time). The
     * first store is followed by the site's {@code lea} and store, the bytes by which the full-buffer
     * handler knows this form, which has no cursor load before it.
     */
    void loopGroup(StringBuilder out, ProbeGroups.Group group, CursorLoops.Loop loop) {
        int base = this.sites;
        List<Site> sites = groupEntries(group.members());
        int n = sites.size();
        String cursor = "%" + loop.cursor().name();
        String address = "%" + loop.address().name();
        out.append(SITE_LABEL).append(base + n - 1).append(":\n");
        address(out, sites.getLast(), address, true);
        store(out, base + n - 1, 16 * (n - 1), cursor, address);
        for (int i = 0; i < n - 1; i++) {
            out.append(SITE_LABEL).append(base + i).append(":\n");
            address(out, sites.get(i), address, true);
            store(out, base + i, 16 * i, cursor, address);
        }
        out.append("\tleaq ").append(16 * n).append('(').append(cursor).append("), ").append(cursor).append('\n');
        out.append(INSTRUCTION_LABEL).append(group.members().getFirst().index()).append(":\n");
    }

    /** After the loop's back edge, on the path that leaves it: the cursor to memory, the program's two registers back. */
    void loopExit(StringBuilder out, CursorLoops.Loop loop, boolean cfi) {
        out.append("\tmovq %").append(loop.cursor().name()).append(", ").append(LOCAL_CURSOR).append('\n');
        for (Register r : List.of(loop.cursor(), loop.address())) {
            out.append("\tpopq %").append(r.name()).append('\n');
            adjust(out, cfi, -8);
        }
        out.append("\tleaq 128(%rsp), %rsp\n");
        adjust(out, cfi, -128);
    }

    /** {@code lea} of the site's address into {@code register}; {@code inPlace}: the probe has not moved %rsp. */
    private static void address(StringBuilder out, Site s, String register, boolean inPlace) {
        out.append("\tleaq ").append(s.address()).append(", ").append(register).append('\n');
        if (inPlace && ProbeGroups.reads(s, ProbeGroups.RSP)) {
            out.append("\tleaq ").append(-FunctionPlanner.RSP_OFFSET).append('(').append(register).append("), ")
                    .append(register).append('\n');
        }
    }

    /** The label of an instruction whose records the probe of its group writes. */
    static void member(StringBuilder out, int instruction) {
        out.append(INSTRUCTION_LABEL).append(instruction).append(":\n");
    }

    /** Stores the address (in {@code address}) and the site at {@code offset} from the cursor. */
    private static void store(StringBuilder out, int site, int offset, String cursor, String address) {
        out.append("\tmovq ").append(address).append(", ").append(offset == 0 ? "" : Integer.toString(offset))
                .append('(').append(cursor).append(")\n");
        out.append("\tleaq ").append(SITE_LABEL).append(site).append("(%rip), ").append(address).append('\n');
        out.append("\tmovq ").append(address).append(", ").append(offset + 8).append('(').append(cursor).append(")\n");
    }

    private static void adjust(StringBuilder out, boolean cfi, int bytes) {
        if (cfi) {
            out.append("\t.cfi_adjust_cfa_offset ").append(bytes).append('\n');
        }
    }

    /**
     * A group's sites in program order, their site-table entries made at the next site numbers: a group's
     * slots follow each other, so its entries do too.
     */
    private List<Site> groupEntries(List<ProbeGroups.Member> members) {
        List<Site> sites = new ArrayList<>();
        for (ProbeGroups.Member m : members) {
            for (Site s : m.sites()) {
                entry(this.sites++, INSTRUCTION_LABEL + m.index(), s);
                sites.add(s);
            }
        }
        return sites;
    }

    private void entry(int site, String label, Site s) {
        table.append(SiteFormat.directives(SITE_LABEL + site, label, s.kind(), s.size(), s.access(), s.flags(), s.weightMa(),
                s.weightAia(), s.blockRefs(), s.blockMa(), s.blockAia()));
    }

    /** The site table, to be appended at the end of the file; empty when no probe was written. */
    String table() {
        if (sites == 0) {
            return "";
        }
        return "\t" + SITES_SECTION + "\n\t.p2align 3\n" + table + (localGroups ? CURSOR_DEFINITION : "");
    }

    /**
     * A weak definition of the cursor for the executable that links this object: a link-time offset needs the
     * variable in the executable's own TLS block. Every such object carries one (the linker keeps the
     * first); the executable exports it, and the runtime's references bind to it. The definition would let
     * a link without the runtime succeed and the first probe crash, so a word nobody reads refers to the
     * runtime's memtrace_start (a link-time PC-relative reference, no load-time relocation): such a link
     * fails as it did before, on an undefined symbol.
     */
    private static final String CURSOR_DEFINITION = """
            \t.weak __memtrace_cursor
            \t.section .tbss,"awT",@nobits
            \t.p2align 3
            \t.type __memtrace_cursor, @object
            \t.size __memtrace_cursor, 8
            __memtrace_cursor:
            \t.zero 8
            \t.section .rodata
            \t.p2align 2
            \t.reloc ., R_X86_64_PLT32, memtrace_start
            \t.long 0
            """;
}
