package org.memtrace.instrument;

import org.memtrace.select.BidParameter;
import org.memtrace.select.StaticPlaces;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSection;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Instruction;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The assembly rewriter of {@code memtrace cc}: turns a compiler's .s into one with a probe before every
 * selected memory instruction and a {@code memtrace_sites} table (docs/compiled-in.md).
 *
 * <p>How an instruction of the text is matched to its machine code: a first pass writes a copy with a label
 * {@code .Lmt_i<N>} before every instruction, the real assembler turns it into an object with
 * {@code --keep-locals}, and the labels' offsets in the object's symbol table say where each instruction's
 * bytes are; Zydis decodes them (relocations are not applied, which leaves the operands' shapes intact).
 * The second pass writes the instrumented copy. Both passes stream the file; per-function work is linear
 * in the function's size apart from the selection's per-block candidate sets.
 */
public final class Rewriter {

    /** Assembles a .s into an object, as the build's own assembler would, keeping local labels. */
    public interface Assembler {
        /** @return whether the assembler succeeded */
        boolean assembleKeepingLocals(Path source, Path object) throws IOException, InterruptedException;
    }

    /**
     * What a rewrite did.
     *
     * @param source       the source file the .s came from (its {@code .file} directive), else the .s's name
     * @param instructions instructions of executable sections that the rewriter could number
     * @param instrumented instructions that received a probe
     * @param sites        probe sites (records per execution of all probes)
     * @param warnings     one line per function left uninstrumented or instruction left alone
     */
    public record Result(String source, int instructions, int instrumented, int sites, List<String> warnings) {
        public Result {
            warnings = List.copyOf(warnings);
        }
    }

    /** The labeled copy did not assemble: the input itself is broken, and the real assembler should say why. */
    public static final class InputRejected extends IOException {
        InputRejected(String message) {
            super(message);
        }
    }

    /** The section that records the options of the build (docs/compiled-in.md, "The build's options"). */
    public static final String OPTIONS_SECTION = "memtrace_cc";

    private final CcOptions options;
    private final Assembler assembler;
    private final boolean localCursor;

    /** A rewriter whose probes suit any object, shared libraries included (the cursor's offset from the GOT). */
    public Rewriter(CcOptions options, Assembler assembler) {
        this(options, assembler, false);
    }

    /**
     * @param localCursor the object goes into an executable only: group probes read the cursor at its
     *                    link-time TLS offset (docs/compiled-in.md, "The probe")
     */
    public Rewriter(CcOptions options, Assembler assembler, boolean localCursor) {
        this.options = options;
        this.assembler = assembler;
        this.localCursor = localCursor;
    }

    /** Writes the instrumented form of {@code input} to {@code output}; temporary files go next to {@code output}. */
    public Result rewrite(Path input, Path output) throws IOException, InterruptedException {
        String name = output.getFileName().toString();
        Path labeled = output.resolveSibling(name + ".labels.s");
        Path object = output.resolveSibling(name + ".labels.o");
        try {
            return rewrite(input, output, labeled, object);
        } finally {
            Files.deleteIfExists(labeled);
            Files.deleteIfExists(object);
        }
    }

    private Result rewrite(Path input, Path output, Path labeled, Path object) throws IOException, InterruptedException {
        var first = new RewritePasses.LabelingPass();
        AsmWalker walker;
        try (BufferedReader in = Files.newBufferedReader(input, StandardCharsets.UTF_8);
             BufferedWriter out = Files.newBufferedWriter(labeled, StandardCharsets.UTF_8)) {
            first.out = out;
            walker = new AsmWalker(first);
            walker.walk(in);
        }
        var warnings = new ArrayList<String>();
        walker.inlineAccesses().forEach((function, insns) -> warnings.add("function " + function
                + ": inline assembly is not traced: " + insns.size() + (insns.size() == 1 ? " instruction" : " instructions")
                + " that may access memory (" + String.join("; ", insns.subList(0, Math.min(3, insns.size())))
                + (insns.size() > 3 ? "; ..." : "") + ")"));
        if (walker.intelSyntax()) {
            warnings.add("Intel syntax is not supported; assembled uninstrumented");
            Files.copy(input, output, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            return new Result(source(walker, input), walker.instructionCount(), 0, 0, warnings);
        }
        if (!assembler.assembleKeepingLocals(labeled, object)) {
            throw new InputRejected(input + " does not assemble");
        }
        var skeleton = new SkeletonWriter();
        Map<Integer, ProbeGroups.Group> groups = new HashMap<>();
        Map<Integer, ProbeGroups.Member> early = new HashMap<>();
        List<CursorLoops.Loop> loops = new ArrayList<>();
        Map<Integer, List<Site>> probes = plan(walker, first, object, warnings, skeleton, groups, early, loops);

        var second = new RewritePasses.ProbePass(groups, early, probes.keySet(), skeleton, loops);
        var writer = new ProbeWriter(localCursor);
        second.writer = writer;
        try (BufferedReader in = Files.newBufferedReader(input, StandardCharsets.UTF_8);
             BufferedWriter out = Files.newBufferedWriter(output, StandardCharsets.UTF_8)) {
            second.out = out;
            new AsmWalker(second).walk(in);
            out.write(writer.table());
            out.write(skeleton.table());
            if (writer.sites() > 0) {
                out.write(optionsRecord());
            }
        }
        return new Result(source(walker, input), walker.instructionCount(), probes.size(), writer.sites(), warnings);
    }

    /**
     * The build's selection options for {@code memtrace analyze}, in section {@value #OPTIONS_SECTION}: one
     * string per object, mergeable, so a linked file keeps each distinct set once.
     */
    private String optionsRecord() {
        String text = "memtrace cc " + OptionWords.join(options.selectionWords());
        return "\t.section " + OPTIONS_SECTION + ",\"MS\",@progbits,1\n\t.asciz \""
                + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"\n";
    }

    private static String source(AsmWalker walker, Path input) {
        return walker.sourceFile() != null ? walker.sourceFile() : input.getFileName().toString();
    }

    /** Decodes every numbered instruction from the labeled object and plans the probes function by function. */
    private Map<Integer, List<Site>> plan(AsmWalker walker, RewritePasses.LabelingPass first, Path object, List<String> warnings,
                                          SkeletonWriter skeleton, Map<Integer, ProbeGroups.Group> groups,
                                          Map<Integer, ProbeGroups.Member> early, List<CursorLoops.Loop> loops)
            throws IOException {
        int count = walker.instructionCount();
        int[] section = new int[count];
        long[] offset = new long[count];
        Arrays.fill(section, -1);
        ElfFile elf = ElfFile.read(object);
        StaticPlaces places = StaticPlaces.ofObject(elf);
        for (ElfSymbol s : elf.symtab()) {
            String n = s.name();
            if (n.startsWith(ProbeWriter.INSTRUCTION_LABEL) && s.isDefined()) {
                try {
                    int i = Integer.parseInt(n, ProbeWriter.INSTRUCTION_LABEL.length(), n.length(), 10);
                    if (i >= 0 && i < count) {
                        section[i] = s.sectionIndex();
                        offset[i] = s.value();
                    }
                } catch (NumberFormatException e) {
                    // a label of the program's own that happens to start like ours: not one of them
                }
            }
        }
        List<List<Integer>> byFunction = new ArrayList<>();
        for (int f = 0; f < walker.functions().size(); f++) {
            byFunction.add(new ArrayList<>());
        }
        for (int i = 0; i < count; i++) {
            byFunction.get(first.function.get(i)).add(i);
        }
        Map<Integer, byte[]> contents = new HashMap<>();
        var decoder = new Decoder();
        Map<Integer, List<Site>> probes = new HashMap<>();
        for (int f = 0; f < byFunction.size(); f++) {
            String function = walker.functions().get(f);
            try {
                List<FunctionPlanner.Decoded> code = decode(byFunction.get(f), first, section, offset, elf, contents, decoder);
                List<Instruction> decoded = code.stream().map(FunctionPlanner.Decoded::instruction).toList();
                var placed = code.isEmpty() ? Map.<Long, BidParameter.Place>of()
                        : places.resolve(section[code.getFirst().index()], decoded);
                // an executable's linker always relaxes TLS resolver calls away: no probe for their push there
                FunctionPlanner.Plan plan = FunctionPlanner.plan(function, code, placed, options, !localCursor);
                probes.putAll(plan.probes());
                skeleton.add(plan.skeleton());
                Map<Integer, List<Site>> grouped = new HashMap<>(plan.probes());
                plan.early().forEach((call, lea) -> {
                    grouped.remove(call);
                    early.put(lea, new ProbeGroups.Member(call, plan.probes().get(call)));
                });
                Map<Integer, ProbeGroups.Group> own = ProbeGroups.group(code, grouped, first.barrier);
                groups.putAll(own);
                if (localCursor) {
                    // A loop the skeleton declined keeps the full build's probes, cursor included, so that it costs
                    // and records what a full build's does (same probe code, so the same site spacing: its records
                    // pack to the same bytes). A skeleton loop of the same simple shape keeps its cursor in a
                    // register too, for the accesses it still logs: its entry probe comes before the cursor's load
                    // and its exit probe after the cursor's store. Not one with markers, whose probes stand
                    // inside it and read the cursor from memory.
                    Set<Integer> skeletal = new HashSet<>();
                    Set<Integer> simple = new HashSet<>();
                    for (LoopSkeleton.Loop l : plan.skeleton().loops()) {
                        skeletal.add(l.backEdge());
                        l.items().forEach(item -> skeletal.add(item.instruction()));
                        l.markers().forEach(marker -> skeletal.add(marker.instruction()));
                        if (l.markers().isEmpty() && l.header() != null && !l.exitTaken()) simple.add(l.backEdge());
                    }
                    for (CursorLoops.Loop l : CursorLoops.find(code, own, first.unnumbered, first.labels, first.references)) {
                        if (simple.contains(l.last()) || !skeletal.contains(l.last()) && Collections.disjoint(l.groups(), skeletal)) loops.add(l);
                    }
                }
                plan.notes().forEach(n -> warnings.add("function " + function + ": " + n));
            } catch (FunctionPlanner.Unsupported e) {
                warnings.add("function " + function + " left uninstrumented: " + e.getMessage());
            }
        }
        return probes;
    }

    private static List<FunctionPlanner.Decoded> decode(List<Integer> indices, RewritePasses.LabelingPass first, int[] section,
                                                        long[] offset, ElfFile elf, Map<Integer, byte[]> contents,
                                                        Decoder decoder) throws FunctionPlanner.Unsupported, IOException {
        var code = new ArrayList<FunctionPlanner.Decoded>(indices.size());
        int home = -1;
        long end = -1;
        for (int i : indices) {
            String text = first.text.get(i);
            if (section[i] < 0) {
                throw new FunctionPlanner.Unsupported("'" + text + "' is not in the assembled object (conditional assembly?)");
            }
            if (home >= 0 && section[i] != home) {
                throw new FunctionPlanner.Unsupported("code in two sections");
            }
            home = section[i];
            if (offset[i] < end) {
                throw new FunctionPlanner.Unsupported("'" + text + "' overlaps the instruction before it");
            }
            ElfSection s = elf.sections().get(home);
            byte[] bytes = contents.get(home);
            if (bytes == null) {
                bytes = elf.contents(s);
                contents.put(home, bytes);
            }
            Optional<Instruction> insn = offset[i] < bytes.length
                    ? decoder.decode(bytes, (int) offset[i], offset[i]) : Optional.empty();
            if (insn.isEmpty()) {
                throw new FunctionPlanner.Unsupported("'" + text + "' does not decode");
            }
            end = insn.get().nextAddress();
            code.add(new FunctionPlanner.Decoded(i, AsmSyntax.Instruction.parse(text), insn.get()));
        }
        return code;
    }
}
