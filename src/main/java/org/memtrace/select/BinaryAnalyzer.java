package org.memtrace.select;

import org.memtrace.x86.Decoder;
import org.memtrace.x86.Instruction;

import java.util.ArrayList;
import java.util.List;

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
        var stability = new StabilityAnalysis(ExpressionBuilder.forImage(elf), options.includeStack());
        ExpressionDistance distance = options.distance();
        var result = new ArrayList<FunctionModel>(functions.size());
        for (FunctionSymbol f : functions) {
            List<Instruction> code = decoder.decodeAll(elf.text(), elf.offsetOf(f), Math.toIntExact(f.size()), f.address());
            var blocks = new ArrayList<BlockModel>();
            for (BasicBlock block : BlockSplitter.split(code, f.address(), f.end())) {
                blocks.add(BlockModel.of(block, stability.references(block), distance));
            }
            result.add(new FunctionModel(f, blocks));
        }
        return result;
    }
}
