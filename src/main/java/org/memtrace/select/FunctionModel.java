package org.memtrace.select;

import java.util.List;

/** A function's blocks, each modelled by {@link BlockModel}. */
public record FunctionModel(FunctionSymbol function, List<BlockModel> blocks) {
    public FunctionModel {
        blocks = List.copyOf(blocks);
    }

    public int instructions() {
        return blocks.stream().mapToInt(b -> b.block().instructions().size()).sum();
    }
}
