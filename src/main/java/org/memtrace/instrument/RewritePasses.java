package org.memtrace.instrument;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The rewriter's two walks over a {@code .s} file ({@link Rewriter}): {@link LabelingPass} copies it with a
 * label before every numbered instruction and records what the planner needs of the text (each
 * instruction's text and function, the labels before it, barriers, unnumbered code, label references);
 * {@link ProbePass} copies it again with the planned probes, skeleton records and cursor-loop code
 * written around the instructions. Both copy every other line as it is ({@link CopyingPass}).
 */
final class RewritePasses {
    private RewritePasses() {
    }

    /** Writes {@code text} as one line: instructions and directives indented, labels at the margin. */
    static void writeStatement(Writer out, String text) throws IOException {
        if (!text.endsWith(":")) {
            out.write('\t');
        }
        out.write(text);
        out.write('\n');
    }

    /** A pass that copies every line and statement to {@code out}; the passes differ in their instructions. */
    abstract static class CopyingPass implements AsmWalker.Listener {
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
    static final class LabelingPass extends CopyingPass {
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
    static final class ProbePass extends CopyingPass {
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
    static final class IntList {
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
