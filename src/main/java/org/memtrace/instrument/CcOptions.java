package org.memtrace.instrument;

import org.memtrace.select.AnalysisOptions;
import org.memtrace.select.ScoreTriplet;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The options of {@code memtrace cc} that reach the rewriter.
 *
 * @param omega   the cost-controlling parameter of paper 001; 1 instruments every memory instruction
 * @param chunk   the chunk size C of the selection's distance function
 * @param scores  the score triplet of the distance function
 * @param stack   stack accesses (rsp/rbp based, push/pop/call/ret/leave slots) are traced
 * @param mode    the operation mode written into the site table
 * @param keepAsm a directory that receives a copy of every instrumented .s
 * @param skeleton loops log their base registers and trip count instead of their computable accesses, which
 *                 the reader replays (docs/compiled-in.md, "Skeleton loops")
 */
public record CcOptions(double omega, long chunk, ScoreTriplet scores, boolean stack, Mode mode,
                        Optional<Path> keepAsm, boolean skeleton) {

    public static final CcOptions DEFAULTS = new CcOptions(1, AnalysisOptions.DEFAULT_CHUNK, ScoreTriplet.DEFAULT,
            true, Mode.LOG, Optional.empty(), false);

    public CcOptions(double omega, long chunk, ScoreTriplet scores, boolean stack, Mode mode, Optional<Path> keepAsm) {
        this(omega, chunk, scores, stack, mode, keepAsm, false);
    }

    /** The paper's operation modes; they only change the mode bits of the site table's flags. */
    public enum Mode {
        LOG(0x00), MA(0x04), AIA(0x08);

        final int flagBits;

        Mode(int flagBits) {
            this.flagBits = flagBits;
        }
    }

    /** Options as written on the command line (the leading part) and what follows them, for gcc. */
    public record Split(CcOptions options, List<String> optionWords, List<String> rest) {
    }

    public boolean selective() {
        return omega < 1;
    }

    public AnalysisOptions analysis() {
        return new AnalysisOptions(chunk, scores, stack);
    }

    /**
     * Parses memtrace cc options only: every word must be one of them (or the value of one).
     *
     * @throws IllegalArgumentException with a one-line message naming the bad word
     */
    public static CcOptions parse(List<String> words) {
        Split split = split(words);
        if (!split.rest().isEmpty()) {
            throw new IllegalArgumentException("unknown memtrace cc option '" + split.rest().getFirst() + "'");
        }
        return split.options();
    }

    /**
     * Splits a {@code memtrace cc} command line: the leading memtrace options (up to the first word that
     * is not one, or past a {@code --}) and the gcc arguments after them. {@code optionWords} is what the
     * driver hands the rewriter in {@code MEMTRACE_CC_OPTIONS}.
     *
     * @throws IllegalArgumentException with a one-line message when an option's value is missing or bad
     */
    public static Split split(List<String> words) {
        double omega = DEFAULTS.omega;
        long chunk = DEFAULTS.chunk;
        ScoreTriplet scores = DEFAULTS.scores;
        boolean stack = true;
        Mode mode = Mode.LOG;
        Optional<Path> keep = Optional.empty();
        boolean skeleton = false;
        int i = 0;
        for (; i < words.size(); i++) {
            String w = words.get(i);
            String name = w.contains("=") && w.startsWith("--") ? w.substring(0, w.indexOf('=')) : w;
            String inline = name.equals(w) ? null : w.substring(w.indexOf('=') + 1);
            switch (name) {
                case "--" -> {
                    return new Split(options(omega, chunk, scores, stack, mode, keep, skeleton),
                            List.copyOf(words.subList(0, i)), List.copyOf(words.subList(i + 1, words.size())));
                }
                case "--no-stack" -> stack = false;
                case "--skeleton" -> skeleton = true;
                case "--omega", "--chunk", "--scores", "--mode", "--keep-asm" -> {
                    String value = inline;
                    if (value == null) {
                        if (i + 1 >= words.size()) {
                            throw new IllegalArgumentException("option " + name + " needs a value");
                        }
                        value = words.get(++i);
                        if (name.equals("--keep-asm") && value.startsWith("-")) {
                            // `cc --keep-asm -O2 x.c` would take -O2 as the directory and hand x.c to gcc
                            // unoptimised; a directory that really starts with '-' is spelled --keep-asm=./-d.
                            throw new IllegalArgumentException("option --keep-asm needs a directory, not the "
                                    + "option '" + value + "' (write --keep-asm=./" + value + " for such a name)");
                        }
                    }
                    switch (name) {
                        case "--omega" -> omega = omega(value);
                        case "--chunk" -> chunk = chunk(value);
                        case "--scores" -> scores = scores(value);
                        case "--mode" -> mode = mode(value);
                        default -> keep = Optional.of(Path.of(value));
                    }
                }
                default -> {
                    return new Split(options(omega, chunk, scores, stack, mode, keep, skeleton),
                            List.copyOf(words.subList(0, i)), List.copyOf(words.subList(i, words.size())));
                }
            }
        }
        return new Split(options(omega, chunk, scores, stack, mode, keep, skeleton), List.copyOf(words), List.of());
    }

    /** A skeleton replays every access of a loop, so it cannot stand on a selection that leaves accesses out. */
    private static CcOptions options(double omega, long chunk, ScoreTriplet scores, boolean stack, Mode mode,
                                     Optional<Path> keep, boolean skeleton) {
        if (skeleton && omega < 1) {
            throw new IllegalArgumentException("--skeleton needs --omega 1: a skeleton replays every access of a loop");
        }
        return new CcOptions(omega, chunk, scores, stack, mode, keep, skeleton);
    }

    /** The options in {@code MEMTRACE_CC_OPTIONS}, quoted as {@link OptionWords} reads them. */
    public static CcOptions fromEnvironment(String value) {
        return parse(OptionWords.split(value));
    }

    /**
     * Every option that decides which probes a build gets, spelled out (defaults included) so that
     * {@link #parse} reads them back: what an instrumented object records about its build.
     */
    public List<String> selectionWords() {
        var words = new ArrayList<>(List.of("--omega", Double.toString(omega), "--chunk", Long.toString(chunk),
                "--scores", scores.s1() + "," + scores.s2() + "," + scores.s3(), "--mode", mode.name().toLowerCase(Locale.ROOT)));
        if (!stack) {
            words.add("--no-stack");
        }
        if (skeleton) {
            words.add("--skeleton");
        }
        return words;
    }

    private static double omega(String v) {
        double w;
        try {
            w = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad --omega '" + v + "': expected a number in [0,1]");
        }
        if (!(w >= 0 && w <= 1)) {
            throw new IllegalArgumentException("bad --omega " + v + ": omega must be in [0,1]");
        }
        return w;
    }

    private static long chunk(String v) {
        long c;
        try {
            c = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad --chunk '" + v + "': expected a positive number of bytes");
        }
        if (c <= 0) {
            throw new IllegalArgumentException("bad --chunk " + v + ": the chunk size must be positive");
        }
        return c;
    }

    private static ScoreTriplet scores(String v) {
        String[] parts = v.split(",", -1);
        try {
            if (parts.length != 3) {
                throw new NumberFormatException();
            }
            return new ScoreTriplet(Integer.parseInt(parts[0].trim()), Integer.parseInt(parts[1].trim()),
                    Integer.parseInt(parts[2].trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad --scores '" + v + "': expected three integers s1,s2,s3");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad --scores '" + v + "': " + e.getMessage());
        }
    }

    private static Mode mode(String v) {
        return switch (v) {
            case "log" -> Mode.LOG;
            case "ma" -> Mode.MA;
            case "aia" -> Mode.AIA;
            default -> throw new IllegalArgumentException("bad --mode '" + v + "': expected log, ma or aia");
        };
    }
}
