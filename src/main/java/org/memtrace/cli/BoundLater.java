package org.memtrace.cli;

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
    private InstructionShapes bound;

    BoundLater(AddressSpace space) {
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
            if (e.getCause() instanceof ZydisUnavailableException z) {
                System.err.println(z.getMessage() + " (access sizes are reported as 0)");
                return InstructionShapes.UNKNOWN;
            }
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }
}
