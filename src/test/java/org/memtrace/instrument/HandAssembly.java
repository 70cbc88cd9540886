package org.memtrace.instrument;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.select.BinaryAnalyzer;
import org.memtrace.select.FunctionModel;
import org.memtrace.select.FunctionSymbol;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Instruction;

/**
 * One function of hand-written AT&T assembly, as the rewriter sees gcc's: each instruction line's text and its
 * decoding, numbered in order, the function's model, and the probes a full build (or one of {@code words}'
 * options) gives it. Assembled by {@code as} at address 0; labels are local, so every jump resolves. No
 * alignment directives: the decoded instructions must be exactly the lines.
 */
record HandAssembly(List<FunctionPlanner.Decoded> code, FunctionModel model, Map<Integer, List<Site>> probes, String source) {
    static HandAssembly of(Path dir, String assembly, String... words) throws IOException, InterruptedException {
        Path s = dir.resolve("hand.s"), o = dir.resolve("hand.o"), bin = dir.resolve("hand.bin");
        Files.writeString(s, "\t.text\nf:\n" + assembly.stripIndent() + "\n");
        run(dir, "as", "--64", "-o", o.toString(), s.toString());
        run(dir, "objcopy", "-O", "binary", "--only-section=.text", o.toString(), bin.toString());
        byte[] bytes = Files.readAllBytes(bin);
        List<String> lines = new ArrayList<>();
        for (String line : assembly.stripIndent().split("\n")) {
            String t = line.strip();
            if (!t.isEmpty() && !t.endsWith(":") && !t.startsWith(".") && !t.startsWith("#")) lines.add(t);
        }
        List<Instruction> decoded = new Decoder().decodeAll(bytes, 0, bytes.length, 0);
        if (decoded.size() != lines.size())
            throw new IllegalStateException(decoded.size() + " instructions decoded for " + lines.size() + " lines");
        var code = new ArrayList<FunctionPlanner.Decoded>();
        for (int i = 0; i < lines.size(); i++)
            code.add(new FunctionPlanner.Decoded(i, AsmSyntax.Instruction.parse(lines.get(i).replaceFirst("\\s+", "\t")), decoded.get(i)));
        CcOptions options = CcOptions.parse(List.of(words));
        var symbol = new FunctionSymbol("f", 0, bytes.length);
        FunctionModel model = BinaryAnalyzer.model(symbol, decoded, Map.of(), options.analysis());
        CcOptions full = CcOptions.parse(List.of(words).stream().filter(w -> !w.equals("--skeleton")).toList());
        FunctionPlanner.Plan plan;
        try {
            plan = FunctionPlanner.plan("f", code, Map.of(), full, true);
        } catch (FunctionPlanner.Unsupported e) {
            throw new IllegalStateException(e);
        }
        return new HandAssembly(List.copyOf(code), model, new LinkedHashMap<>(plan.probes()), assembly.stripIndent());
    }

    private static void run(Path dir, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String said = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) throw new IllegalStateException(String.join(" ", command) + ": " + said);
    }

    /** The code index of the instruction whose text starts with {@code start} (the first such). */
    int at(String start) {
        for (FunctionPlanner.Decoded d : code) if (d.text().text().strip().replaceFirst("\\s+", " ").startsWith(start)) return d.index();
        throw new IllegalArgumentException("no instruction " + start);
    }

    /** The labels right before each instruction, by its index, as the rewriter's first pass records them. */
    Map<Integer, List<String>> labels() {
        var labels = new java.util.HashMap<Integer, List<String>>();
        var pending = new ArrayList<String>();
        int index = 0;
        for (String line : source.split("\n")) {
            String t = line.strip();
            if (t.endsWith(":")) {
                pending.add(t.substring(0, t.length() - 1));
            } else if (!t.isEmpty() && !t.startsWith(".") && !t.startsWith("#")) {
                if (!pending.isEmpty()) labels.put(index, List.copyOf(pending));
                pending.clear();
                index++;
            }
        }
        return labels;
    }

    /** How often each local label is named outside its definition (the rewriter's first pass: jumps, directives). */
    Map<String, Integer> references() {
        var references = new java.util.HashMap<String, Integer>();
        for (String line : source.split("\n")) {
            String t = line.strip();
            if (t.endsWith(":")) continue;
            var m = java.util.regex.Pattern.compile("\\.L[A-Za-z0-9_$.]+").matcher(t);
            while (m.find()) references.merge(m.group(), 1, Integer::sum);
        }
        return references;
    }

    /** Instructions right after a label: a probe group does not reach over them. */
    java.util.BitSet barrier() {
        var barrier = new java.util.BitSet();
        labels().keySet().forEach(barrier::set);
        return barrier;
    }

    /** The skeleton planner on this function, the probes it leaves taken out of a copy. */
    LoopSkeleton.Result plan() {
        return LoopSkeleton.plan(code, model, new LinkedHashMap<>(probes));
    }
}
