package org.memtrace.cli;

import java.io.PrintWriter;
import java.util.Arrays;

public final class Main {
    public static void main(String[] args) {
        // Temporary dispatch until the picocli top-level command lands: register AnalyzeCommand there.
        if (args.length > 0 && args[0].equals("analyze")) {
            System.exit(AnalyzeCommand.run(new PrintWriter(System.out), new PrintWriter(System.err),
                    Arrays.copyOfRange(args, 1, args.length)));
        }
        System.out.println("memtrace (under construction)");
    }
}
