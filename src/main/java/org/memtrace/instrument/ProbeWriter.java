package org.memtrace.instrument;

import java.util.List;

/**
 * Writes the probe of docs/compiled-in.md ("The probe") before an instruction, and its entries of the
 * {@code memtrace_sites} table. Site labels are numbered in the order probes are written.
 */
final class ProbeWriter {
    static final String INSTRUCTION_LABEL = ".Lmt_i";
    static final String SITE_LABEL = ".Lmt_s";
    /** The table's section: allocated (strip keeps it) and retained (--gc-sections keeps it). */
    static final String SITES_SECTION = ".section memtrace_sites,\"aR\",@progbits";

    private final StringBuilder table = new StringBuilder();
    private int sites;

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
        out.append(label).append(":\n");
    }

    private static void adjust(StringBuilder out, boolean cfi, int bytes) {
        if (cfi) {
            out.append("\t.cfi_adjust_cfa_offset ").append(bytes).append('\n');
        }
    }

    private void entry(int site, String label, Site s) {
        table.append("\t.long ").append(SITE_LABEL).append(site).append("-.\n");
        table.append("\t.long ").append(label).append("-.\n");
        table.append("\t.byte ").append(s.kind()).append(", ").append(s.size()).append(", ").append(s.access())
                .append(", ").append(s.flags()).append('\n');
        table.append("\t.short ").append(s.weightMa()).append(", ").append(s.weightAia()).append(", ")
                .append(s.blockRefs()).append(", ").append(s.blockMa()).append(", ").append(s.blockAia())
                .append(", 0\n");
    }

    /** The site table, to be appended at the end of the file; empty when no probe was written. */
    String table() {
        if (sites == 0) {
            return "";
        }
        return "\t" + SITES_SECTION + "\n\t.p2align 3\n" + table;
    }
}
