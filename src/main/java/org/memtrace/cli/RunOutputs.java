package org.memtrace.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.io.IoReason;
import org.memtrace.launch.FileHead;
import org.memtrace.launch.LaunchException;
import org.memtrace.launch.Recorder;
import org.memtrace.launch.Target;

/**
 * The files {@code memtrace run} writes, refused before the program starts when writing them would destroy
 * something (docs/trust.md, "Files memtrace and its runtime create"). The program's inputs are unknown to
 * memtrace, so what its arguments name stands for them: {@code memtrace run -o in.txt -- cat in.txt} truncated
 * the file cat was about to read. The text trace is written in place as it is made (a run can be followed
 * with {@code tail -f}), so its file is opened without following a link and is replaced only when it is
 * empty or an earlier text trace; the other outputs are written whole and renamed into place (OutputFile).
 */
final class RunOutputs {
    /** How every text trace begins (the Hello event's comment line, madt/CommentLines). */
    static final String TRACE_START = "# agent pid=";
    /** How a text trace that recorded nothing begins: its mark alone (a program killed before its first event). */
    static final String EMPTY_TRACE_START = "# incomplete ";

    private RunOutputs() {}

    /**
     * Refuses outputs that would destroy something: the program or its interpreter (opening it truncates
     * it), a file one of the program's arguments names (its input, or its own output), two outputs naming one
     * file, a directory, an existing ELF file (a library the program loads), and for the trace a symbolic
     * link or an existing file that is not an earlier trace.
     */
    static void check(Target target, List<String> arguments, String output, Path saveStream, String streamOption, Path jsonSummary,
                      Path reportFile) throws LaunchException {
        if (output.isEmpty()) throw LaunchException.usage("-o: an empty file name; name a file, or - for standard output");
        Map<String, Path> outputs = new LinkedHashMap<>();
        if (!"-".equals(output)) outputs.put("-o", RawPaths.path(output));
        if (saveStream != null) outputs.put(streamOption, saveStream);
        if (jsonSummary != null) outputs.put("--json-summary", jsonSummary);
        if (reportFile != null) outputs.put("--report", reportFile);
        Map<String, String> what = Map.of("-o", "the trace to", "--save-stream", "the stream file", "--record-only", "the stream file", "--json-summary", "the summary to",
                "--report", "the report to");
        List<Path> programs = new ArrayList<>(target.interpreters());
        programs.add(target.executable());
        List<Map.Entry<String, Path>> seen = new ArrayList<>();
        for (Map.Entry<String, Path> o : outputs.entrySet()) {
            Path file = o.getValue();
            if (OutputFile.isStandardOutput(file))
                throw LaunchException.usage(o.getKey() + " -: memtrace run writes only its trace to standard output (-o -); name a file");
            if (Files.isDirectory(file))
                throw LaunchException.usage("cannot write " + what.get(o.getKey()) + " " + file + ": it is a directory");
            for (Path program : programs)
                if (OutputFile.sameFile(file, program))
                    throw LaunchException.usage(o.getKey() + " " + file + " is the program " + program + " itself; memtrace would overwrite it");
            for (String argument : arguments)
                for (Path named : named(argument))
                    if (OutputFile.sameFile(file, named))
                        throw LaunchException.usage(o.getKey() + " " + file + " is a file the program's argument " + argument
                                + " names (its input or its output); memtrace would overwrite it: name another output");
            OutputFile.refuseDestructive(file, List.of(), o.getKey() + " ");
            // any number of outputs may be thrown away into /dev/null; two outputs in one file destroy each other
            for (Map.Entry<String, Path> before : seen)
                if (OutputFile.sameFile(file, before.getValue()) && !discarded(file.toString()))
                    throw LaunchException.usage(before.getKey() + " and " + o.getKey() + " name the same file " + file + "; give each its own");
            seen.add(o);
        }
        if (saveStream != null) Recorder.refuseNonStream(saveStream);
        if (!"-".equals(output)) {
            Path trace = RawPaths.path(output);
            refuseLink(trace, output);
            if (Files.isRegularFile(trace, LinkOption.NOFOLLOW_LINKS)) {
                try (FileChannel ch = FileChannel.open(trace, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                    refuseNonTrace(ch, output);
                } catch (IOException e) {
                    throw LaunchException.usage("cannot write the trace to " + output + ": " + IoReason.of(e));
                }
            }
        }
    }

    /**
     * The trace's stream, opened before the program starts so that an unwritable path costs one line.
     * Unbuffered: the text writer hands over its bytes in large chunks. Not System.out, which swallows write
     * errors: a full disk or a closed pipe must be said.
     */
    static OutputStream openTrace(String output) throws LaunchException {
        if ("-".equals(output)) return OutputFile.standardOutput();
        Path file = RawPaths.path(output);
        refuseLink(file, output);
        try {
            // a device or a FIFO (/dev/null) is written as it is
            if (Files.exists(file, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS))
                return Files.newOutputStream(file);
            // checked and emptied through one descriptor: no other file can take the name in between
            FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                    LinkOption.NOFOLLOW_LINKS);
            try {
                refuseNonTrace(ch, output);
                ch.truncate(0);
            } catch (IOException | LaunchException e) {
                ch.close();
                throw e;
            }
            return Channels.newOutputStream(ch);
        } catch (IOException | RuntimeException e) {
            throw LaunchException.usage("cannot write the trace to " + output + ": " + IoReason.of(e));
        }
    }

    /** Whether the trace goes to /dev/null (under any name): then it need not be made at all. */
    static boolean discarded(String output) {
        if ("-".equals(output)) return false;
        try {
            return OutputFile.sameFile(RawPaths.path(output), Path.of("/dev/null")) && !Files.isRegularFile(Path.of("/dev/null"));
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * The paths an argument may name: itself, what follows its first '=' ({@code --input=data.txt}), and what
     * follows a short option's letter ({@code -oout.txt}).
     */
    static List<Path> named(String argument) {
        List<Path> paths = new ArrayList<>(2);
        add(paths, argument);
        int eq = argument.indexOf('=');
        if (eq >= 0) add(paths, argument.substring(eq + 1));
        // a value glued to a short option: sort -oout.txt, gcc -oprog
        if (argument.length() > 2 && argument.charAt(0) == '-' && argument.charAt(1) != '-') add(paths, argument.substring(2));
        return paths;
    }

    private static void add(List<Path> paths, String name) {
        if (name.isEmpty()) return;
        try {
            paths.add(RawPaths.path(name));
        } catch (RuntimeException e) {
            // no file can have that name (a NUL, bad hex): nothing to protect
        }
    }

    private static void refuseLink(Path trace, String output) throws LaunchException {
        if (Files.isSymbolicLink(trace))
            throw LaunchException.usage("cannot write the trace to " + output + ": it is a symbolic link (memtrace writes through none): name the file itself");
    }

    private static void refuseNonTrace(FileChannel ch, String output) throws IOException, LaunchException {
        if (ch.size() == 0) return;
        String head = new String(FileHead.of(ch, Math.max(TRACE_START.length(), EMPTY_TRACE_START.length())), StandardCharsets.ISO_8859_1);
        if (!head.startsWith(TRACE_START) && !head.startsWith(EMPTY_TRACE_START))
            throw LaunchException.usage("cannot write the trace to " + output + ": it exists and is not a memtrace text trace (it is left as it is): name another output");
    }
}
