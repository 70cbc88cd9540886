package org.memtrace.cli;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.memtrace.io.IoReason;
import org.memtrace.launch.LaunchException;
import picocli.CommandLine;

/**
 * Paths whose names are not UTF-8 (legal on Linux, where a name is bytes). The JVM decodes its arguments as
 * UTF-8 and replaces what is not, and neither {@code -Dsun.jnu.encoding} (ignored since JDK 18) nor a locale
 * (ISO-8859-1 is not installed everywhere, and would garble every UTF-8 name in the output) brings the bytes
 * back; so the launcher passes such an argument as {@value #PREFIX} and the hex of its bytes, and this turns
 * it into a path of exactly those bytes. The JDK has no public way to make one: the Unix file system's path
 * class is built by reflection (the jar's manifest opens {@code java.base/sun.nio.fs} to memtrace).
 */
final class RawPaths {
    private RawPaths() {}

    static final String PREFIX = "\u0001memtrace-bytes:";

    /**
     * A program to run whose name (or a directory on its path) is not UTF-8: the JVM hands a child only text
     * arguments, so the program is run through a symbolic link of a UTF-8 name, in a directory of its own
     * that memtrace makes (mode 0700) and removes on exit; argv[0] is then the link's name. Its arguments
     * must be UTF-8: there is no way to pass other bytes through the JVM, so one that is not is refused.
     */
    static List<String> program(List<String> command) throws LaunchException {
        for (String a : command.subList(1, command.size()))
            if (a.startsWith(PREFIX))
                throw LaunchException.usage("an argument of the program is not UTF-8; memtrace can pass the program only UTF-8 arguments");
        if (!command.getFirst().startsWith(PREFIX)) return command;
        Path program = path(command.getFirst());
        try {
            Path dir = Files.createTempDirectory("memtrace-program.");
            dir.toFile().deleteOnExit();
            Path link = Files.createSymbolicLink(dir.resolve("program"), program.toAbsolutePath());
            link.toFile().deleteOnExit();
            List<String> named = new ArrayList<>(command);
            named.set(0, link.toString());
            return named;
        } catch (IOException | RuntimeException e) {
            throw LaunchException.usage("cannot run " + program + ": " + IoReason.of(e instanceof IOException io ? io : new IOException(e)));
        }
    }

    /** The path {@code argument} names with {@code suffix} appended to its last name ("t" and ".mtr": "t.mtr"). */
    static Path withSuffix(String argument, String suffix) {
        // the launcher's bytes are hex: the suffix joins them as hex too, not as text after the hex
        if (argument.startsWith(PREFIX)) return path(argument + HexFormat.of().formatHex(suffix.getBytes(StandardCharsets.UTF_8)));
        return path(argument + suffix);
    }

    /** The path an argument names: the launcher's bytes, or the argument itself. */
    static Path path(String argument) {
        // Path.of("") is the working directory: "-o ''" would name it, not fail as a missing name should
        if (argument.isEmpty()) throw new CommandLine.TypeConversionException("an empty file name");
        if (!argument.startsWith(PREFIX)) return Path.of(argument);
        byte[] bytes;
        try {
            bytes = HexFormat.of().parseHex(argument, PREFIX.length(), argument.length());
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException("a file name passed as bytes is not hex: " + argument.substring(PREFIX.length()));
        }
        try {
            Class<?> unixPath = Class.forName("sun.nio.fs.UnixPath");
            Constructor<?> make = unixPath.getDeclaredConstructor(Class.forName("sun.nio.fs.UnixFileSystem"), byte[].class);
            make.setAccessible(true);
            return (Path) make.newInstance(FileSystems.getDefault(), bytes);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new CommandLine.TypeConversionException("this JVM cannot open a file whose name is not UTF-8 ("
                    + e.getClass().getSimpleName() + "); start memtrace with its launcher, which opens java.base/sun.nio.fs");
        }
    }
}
