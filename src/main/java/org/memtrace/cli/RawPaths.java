package org.memtrace.cli;

import java.lang.reflect.Constructor;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.util.HexFormat;
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

    /** The path an argument names: the launcher's bytes, or the argument itself. */
    static Path path(String argument) {
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
