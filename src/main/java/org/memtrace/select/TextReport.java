package org.memtrace.select;

import java.io.PrintWriter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The human-readable output of {@code memtrace analyze}. */
public final class TextReport {
    private final PrintWriter out;

    public TextReport(PrintWriter out) {
        this.out = out;
    }

    public void header(ElfText elf, AnalysisOptions options) {
        out.printf("memtrace analyze: %s (%s)%n", elf.path(), elf.kind());
        out.printf("chunk %d, scores %s, stack accesses %s%n", options.chunkSize(), options.scores(),
                options.includeStack() ? "included" : "excluded");
    }

    /** A file built by memtrace cc: its options, and whether its probes record what the selection chooses. */
    public void build(BuildCheck check) {
        String how = check.options().isEmpty() ? "memtrace cc (options not recorded)" : String.join("; ", check.options());
        out.printf("built by %s: %d probe sites skipped, the program's own instructions analyzed%n", how, check.probeSites());
        String sites = "site table: %d instrumented instructions%s".formatted(check.instrumented(),
                check.unprobed() == 0 ? "" : " (%d functions that reference memory have no probe: left out)".formatted(check.unprobed()));
        check.comparison().ifPresentOrElse(d -> out.printf("%s, %s%n", sites, d.none() ? "exactly the selected ones"
                        : "%d selected ones have no probe, %d probed ones are not selected".formatted(d.selectedWithoutProbe(), d.probedNotSelected())),
                () -> out.printf("%s (not compared: %s)%n", sites, check.notCompared()));
    }

    public void summary(AnalysisSummary s) {
        out.printf("omega %s: functions %d, blocks %d, instructions %d, memory-referencing %d, classes %d, selected %d%n",
                s.omega(), s.functions(), s.blocks(), s.instructions(), s.memoryReferences(), s.classes(), s.selected());
        out.printf("  MA %.4f  AIA %.4f  (block means weighted by memory references)%n",
                s.minimalAccuracy(), s.alignmentIndependentAccuracy());
    }

    /** The accuracy curve over ω, as Fig. 3 plots it, with static weights. */
    public void sweep(List<AnalysisSummary> points) {
        out.println();
        out.println(" omega  selected      MA     AIA  MA (#) / AIA (+)");
        for (AnalysisSummary s : points) {
            int ma = (int) Math.round(s.minimalAccuracy() * 40);
            int aia = (int) Math.round(s.alignmentIndependentAccuracy() * 40);
            out.printf("%6.2f  %8d  %.4f  %.4f  |%s%s%n", s.omega(), s.selected(), s.minimalAccuracy(),
                    s.alignmentIndependentAccuracy(), "#".repeat(ma), "+".repeat(Math.max(0, aia - ma)));
        }
    }

    public void functionTable(List<FunctionModel> functions, double omega) {
        out.println();
        out.printf("%-40s %7s %7s %7s %7s %8s %7s %7s%n", "function", "blocks", "insns", "memrefs", "classes",
                "selected", "MA", "AIA");
        for (FunctionModel f : functions) {
            AnalysisSummary s = AnalysisSummary.of(List.of(f), omega);
            out.printf("%-40s %7d %7d %7d %7d %8d %7.4f %7.4f%n", f.function().name(), s.blocks(), s.instructions(),
                    s.memoryReferences(), s.classes(), s.selected(), s.minimalAccuracy(), s.alignmentIndependentAccuracy());
        }
    }

    public void functionDetail(FunctionModel f, double omega) {
        out.println();
        out.printf("function %s at 0x%x, %d bytes%n", f.function().name(), f.function().address(), f.function().size());
        for (BlockModel b : f.blocks()) {
            Selection s = b.select(omega);
            out.printf("%n block 0x%x-0x%x: %d instructions, n=%d, m=%d, W=%d, MA %.3f, AIA %.3f%n",
                    b.block().start(), b.block().end(), b.block().instructions().size(), b.references().size(),
                    b.classes().size(), s.budget(), s.minimalAccuracy(), s.alignmentIndependentAccuracy());
            Map<EquivalenceClass, Integer> number = new HashMap<>();
            for (EquivalenceClass c : b.classes()) {
                number.put(c, number.size() + 1);
            }
            for (MemoryReference r : b.references()) {
                EquivalenceClass c = b.classes().stream().filter(k -> k.members().contains(r)).findFirst().orElseThrow();
                out.printf("   0x%x  %-10s %-50s class %d%n", r.address(), r.instruction().mnemonic(), r.expression(), number.get(c));
            }
            Map<EquivalenceClass, String> fate = new HashMap<>();
            for (Selection.Choice choice : s.knapsack()) {
                fate.put(choice.candidate().equivalenceClass(),
                        "selected: stands for %d under MA, %d under AIA".formatted(choice.maWeight(), choice.aiaWeight()));
                for (Candidate a : choice.associated()) {
                    fate.put(a.equivalenceClass(), "not selected, counted under AIA by class "
                            + number.get(choice.candidate().equivalenceClass()));
                }
            }
            for (Candidate c : b.candidates().candidates()) {
                EquivalenceClass k = c.equivalenceClass();
                out.printf("   class %d: |[e]|=%d value %s  %s%n", number.get(k), k.size(), c.value(),
                        fate.getOrDefault(k, "not selected"));
            }
        }
    }

    public void flush() {
        out.flush();
    }
}
