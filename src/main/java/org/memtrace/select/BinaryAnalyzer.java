package org.memtrace.select;

import org.memtrace.x86.Decoder;
import org.memtrace.x86.Instruction;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;

/**
 * Runs the per-block analysis over the functions of an ELF file's .text: decode, split into blocks, then
 * stability analysis, classes and candidates per block. Uses one {@link Decoder}, so one thread.
 */
public final class BinaryAnalyzer {
    private final Decoder decoder = new Decoder();
    private final AnalysisOptions options;

    public BinaryAnalyzer(AnalysisOptions options) {
        this.options = options;
    }

    public List<FunctionModel> analyze(ElfText elf, List<FunctionSymbol> functions) {
        return analyze(elf, functions, Collections.emptyNavigableSet());
    }

    /**
     * The same for a file built by {@code memtrace cc}, whose probe sites are {@code probeSites}: only the
     * program's own instructions are analyzed ({@link ProbeCode}).
     */
    public List<FunctionModel> analyze(ElfText elf, List<FunctionSymbol> functions, NavigableSet<Long> probeSites) {
        ExpressionDistance distance = options.distance();
        var result = new ArrayList<FunctionModel>(functions.size());
        for (FunctionSymbol f : functions) {
            List<Instruction> code = decoder.decodeAll(elf.text(), elf.offsetOf(f), Math.toIntExact(f.size()), f.address());
            // places before the probes go: a probe's bytes then count as part of the instruction before it
            var stability = new StabilityAnalysis(new ExpressionBuilder(elf.places().resolve(code)), options.includeStack());
            if (!probeSites.isEmpty()) {
                code = ProbeCode.programInstructions(code, probeSites);
            }
            result.add(model(f, code, stability, distance));
        }
        return result;
    }

    /**
     * The model of one function whose instructions are already decoded, as a relocatable object holds them
     * (relocations not applied), with the places of its static operands ({@link StaticPlaces#resolve}): what
     * {@link #analyze} computes for each function of a {@code .o}, for a caller that decodes by itself (the
     * {@code memtrace cc} rewriter).
     */
    public static FunctionModel model(FunctionSymbol f, List<Instruction> code, Map<Long, BidParameter.Place> places,
                                      AnalysisOptions options) {
        var stability = new StabilityAnalysis(new ExpressionBuilder(places), options.includeStack());
        return model(f, code, stability, options.distance());
    }

    private static FunctionModel model(FunctionSymbol f, List<Instruction> code, StabilityAnalysis stability,
                                       ExpressionDistance distance) {
        var blocks = new ArrayList<BlockModel>();
        for (BasicBlock block : BlockSplitter.split(code, f.address(), f.end())) {
            blocks.add(BlockModel.of(block, stability.references(block), distance));
        }
        return new FunctionModel(f, blocks);
    }
}
