package org.memtrace.cli;

import java.io.PrintWriter;
import java.util.concurrent.CompletableFuture;
import org.memtrace.symbols.AddressSpace;
import org.memtrace.trace.DecodedShapes;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.x86.ZydisUnavailableException;

/**
 * The decoder's shapes, bound on a thread of their own: binding Zydis through the foreign-function API
 * costs {@code memtrace run} 0.3-0.4 s of class loading and linking, which runs here while the agent is
 * extracted and the program starts (docs/madt.md, "Start-up"). The first fault asked about waits for it;
 * every later one goes straight to the decoder. Used by the consumer thread alone.
 */
final class BoundLater implements InstructionShapes {
    private final CompletableFuture<InstructionShapes> binding;
    private final PrintWriter err;
    private InstructionShapes bound;

    /** {@code err}: where the warning goes when the decoder cannot be loaded. */
    BoundLater(AddressSpace space, PrintWriter err) {
        this.err = err;
        binding = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("memtrace-decoder").start(() -> {
            try {
                binding.complete(new DecodedShapes(space));
            } catch (Throwable e) {
                binding.completeExceptionally(e);
            }
        });
    }

    @Override
    public Shape shapeOf(long ip) {
        if (bound == null) bound = await();
        return bound.shapeOf(ip);
    }

    private InstructionShapes await() {
        try {
            return binding.join();
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof ZydisUnavailableException z) return TraceInput.decoderMissing(err, z);
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }
}
