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
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
        var first = new LabelingPass();
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

        var second = new ProbePass(groups, early, probes.keySet(), skeleton, loops);
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
    private Map<Integer, List<Site>> plan(AsmWalker walker, LabelingPass first, Path object, List<String> warnings,
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

    private static List<FunctionPlanner.Decoded> decode(List<Integer> indices, LabelingPass first, int[] section,
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

    /** Writes {@code text} as one line: instructions and directives indented, labels at the margin. */
    private static void writeStatement(Writer out, String text) throws IOException {
        if (!text.endsWith(":")) {
            out.write('\t');
        }
        out.write(text);
        out.write('\n');
    }

    /** A pass that copies every line and statement to {@code out}; the passes differ in their instructions. */
    private abstract static class CopyingPass implements AsmWalker.Listener {
        Writer out;

        @Override
        public void rawLine(String line) throws IOException {
            out.write(line + "\n");
        }

        @Override
        public void statement(String s) throws IOException {
            writeStatement(out, s);
        }
    }

    /** Pass one: the labeled copy, and each numbered instruction's text and function. */
    private static final class LabelingPass extends CopyingPass {
        final List<String> text = new ArrayList<>();
        final IntList function = new IntList();
        /** Instructions after a label or unnumbered code: a probe group does not reach over them. */
        final BitSet barrier = new BitSet();
        /** Instructions after unnumbered code (anything but labels, {@code .loc} and {@code .cfi_*}). */
        final BitSet unnumbered = new BitSet();
        /** The labels right before an instruction, by its index. */
        final Map<Integer, List<String>> labels = new HashMap<>();
        /** How often each local label is named in the file, outside its definition. */
        final Map<String, Integer> references = new HashMap<>();
        private final List<String> pending = new ArrayList<>();
        private boolean sinceLast;
        private boolean codeSinceLast;

        @Override
        public void rawLine(String line) throws IOException {
            sinceLast |= !line.isBlank();
            codeSinceLast |= !line.isBlank();
            count(line);
            super.rawLine(line);
        }

        @Override
        public void statement(String s) throws IOException {
            sinceLast |= !(s.startsWith(".loc") || s.startsWith(".cfi_"));
            if (s.endsWith(":")) {
                pending.add(s.substring(0, s.length() - 1));
            } else if (!s.startsWith(".loc") && !s.startsWith(".cfi_")) {
                codeSinceLast = true;
                count(s);
            }
            super.statement(s);
        }

        private void count(String text) {
            Matcher m = LOCAL_LABEL.matcher(text);
            while (m.find()) {
                references.merge(m.group(), 1, Integer::sum);
            }
        }

        @Override
        public void instruction(int index, int f, AsmSyntax.Instruction instruction, boolean cfaOnRsp)
                throws IOException {
            if (sinceLast) {
                barrier.set(index);
                sinceLast = false;
            }
            if (!pending.isEmpty()) {
                labels.put(index, List.copyOf(pending));
                pending.clear();
            }
            if (codeSinceLast) {
                unnumbered.set(index);
                codeSinceLast = false;
            }
            count(instruction.text());
            text.add(instruction.text());
            function.add(f);
            out.write(ProbeWriter.INSTRUCTION_LABEL + index + ":\n\t" + instruction.text() + "\n");
        }
    }

    /** Pass two: the instrumented copy. */
    private static final class ProbePass extends CopyingPass {
        private final Map<Integer, ProbeGroups.Group> groups;
        /** TLS resolver pushes by the instruction their probe stands before. */
        private final Map<Integer, ProbeGroups.Member> early;
        private final java.util.Set<Integer> probed;
        private final SkeletonWriter skeleton;
        private final Map<String, CursorLoops.Loop> loopsByLabel = new HashMap<>();
        private final Map<Integer, CursorLoops.Loop> loopsByGroup = new HashMap<>();
        private final Map<Integer, CursorLoops.Loop> loopsByExit = new HashMap<>();
        ProbeWriter writer;
        private final StringBuilder buffer = new StringBuilder(4096);
        /** Whether the CFA was rsp-based at the last instruction: a loop's entry probe stands between instructions. */
        private boolean cfaOnRsp;
        /** Alignment directives since the last instruction: repeated after a loop's entry code, for its label. */
        private final List<String> alignment = new ArrayList<>();

        ProbePass(Map<Integer, ProbeGroups.Group> groups, Map<Integer, ProbeGroups.Member> early,
                  java.util.Set<Integer> probed, SkeletonWriter skeleton, List<CursorLoops.Loop> loops) {
            this.groups = groups;
            this.early = early;
            this.probed = probed;
            this.skeleton = skeleton;
            for (CursorLoops.Loop loop : loops) {
                loopsByLabel.put(loop.label() + ":", loop);
                loop.groups().forEach(g -> loopsByGroup.put(g, loop));
                loopsByExit.put(loop.last(), loop);
            }
        }

        @Override
        public void statement(String s) throws IOException {
            buffer.setLength(0);
            if (skeleton.loops() > 0) {
                skeleton.beforeLabel(buffer, s, writer, cfaOnRsp);
            }
            CursorLoops.Loop loop = loopsByLabel.get(s);
            if (loop != null) {
                writer.loopEntry(buffer, loop, cfaOnRsp);
            }
            if (!buffer.isEmpty()) {
                // the loop's label keeps the alignment gcc gave it, after the entry code
                for (String a : alignment) {
                    buffer.append('\t').append(a).append('\n');
                }
                out.write(buffer.toString());
            }
            if (s.startsWith(".p2align") || s.startsWith(".align") || s.startsWith(".balign")) {
                alignment.add(s);
            }
            super.statement(s);
        }

        @Override
        public void instruction(int index, int function, AsmSyntax.Instruction instruction, boolean cfaOnRsp)
                throws IOException {
            ProbeGroups.Group group = groups.get(index);
            alignment.clear();
            buffer.setLength(0);
            ProbeGroups.Member push = early.get(index);
            if (push != null) {
                writer.probeAhead(buffer, push.index(), push.sites(), cfaOnRsp);
            }
            skeleton.beforeInstruction(buffer, index, writer, cfaOnRsp);
            CursorLoops.Loop loop = loopsByGroup.get(index);
            if (loop != null) {
                writer.loopGroup(buffer, group, loop);
            } else if (group != null) {
                writer.group(buffer, group, cfaOnRsp);
            } else if (probed.contains(index) || skeleton.needsLabel(index)) {
                ProbeWriter.member(buffer, index);
            }
            buffer.append('\t').append(skeleton.text(index, instruction)).append('\n');
            if (push != null) {
                ProbeWriter.resolverLabel(buffer, push.index());
            }
            CursorLoops.Loop left = loopsByExit.get(index);
            if (left != null) {
                writer.loopExit(buffer, left, cfaOnRsp); // before a skeleton loop's exit probe, which reads the cursor
            }
            skeleton.afterInstruction(buffer, index, instruction, writer, cfaOnRsp);
            this.cfaOnRsp = cfaOnRsp;
            out.write(buffer.toString());
        }
    }

    /** A local label as gcc names them: what a jump, a table or debug data may refer to. */
    private static final Pattern LOCAL_LABEL = Pattern.compile("\\.L[A-Za-z0-9_$.]+");

    /** A growable int array: one entry per instruction of a large file, without boxing. */
    private static final class IntList {
        private int[] values = new int[1024];
        private int size;

        void add(int v) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }

        int get(int i) {
            return values[i];
        }
    }
}
