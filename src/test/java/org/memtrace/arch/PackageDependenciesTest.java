package org.memtrace.arch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What each package's package-info.java says it must not depend on, checked on the sources: a class of
 * package P that names a class of a package P may not use (an import, a qualified name, a javadoc link)
 * fails the test with the file and the package it names.
 */
class PackageDependenciesTest {
    private static final Path SOURCES = Path.of("src/main/java/org/memtrace");
    private static final Set<String> ALL = Set.of("analysis", "cache", "cc", "check", "cli", "compress", "event", "export", "format", "heap",
            "instrument", "io", "launch", "madt", "mtr", "report", "rewrite", "select", "skeleton", "symbols", "trace", "x86");
    private static final Pattern NAMED = Pattern.compile("org\\.memtrace\\.([a-z0-9]+)\\.");

    /** The packages each package may not use, as its package-info.java says. */
    private static final Map<String, Set<String>> FORBIDDEN = Map.ofEntries(
            Map.entry("analysis", Set.of("launch", "mtr", "cli", "madt", "report", "export")),
            Map.entry("cache", except()),
            Map.entry("cc", Set.of("cli", "mtr", "trace", "analysis", "madt", "report", "export")),
            Map.entry("check", Set.of("launch", "cli", "mtr", "trace", "analysis", "madt", "report", "export")),
            Map.entry("cli", Set.of()),
            Map.entry("compress", except()),
            Map.entry("event", except()),
            Map.entry("export", Set.of("launch", "mtr", "cli", "madt", "report")),
            Map.entry("format", except()),
            Map.entry("heap", Set.of("launch", "mtr", "analysis", "cli")),
            Map.entry("io", except()),
            Map.entry("instrument", Set.of("launch", "mtr", "trace", "analysis")),
            Map.entry("launch", Set.of("analysis", "madt", "report", "export", "cli")),
            Map.entry("madt", Set.of("launch", "mtr", "cli", "report", "export")),
            Map.entry("mtr", Set.of("launch", "analysis", "cli", "instrument")),
            Map.entry("report", Set.of("launch", "mtr", "cli", "madt", "export")),
            Map.entry("rewrite", Set.of("launch", "cli", "mtr", "trace", "analysis", "madt", "report", "export",
                    "instrument", "cc", "check")),
            Map.entry("select", Set.of("launch", "mtr", "trace", "analysis", "instrument")),
            Map.entry("skeleton", Set.of("launch", "analysis", "cli")),
            Map.entry("symbols", except("event")),
            Map.entry("trace", Set.of("launch", "mtr", "analysis", "cli")),
            Map.entry("x86", except()));

    private static Set<String> except(String... allowed) {
        Set<String> s = new TreeSet<>(ALL);
        s.removeAll(Set.of(allowed));
        return s;
    }

    @Test
    void everyPackageHasItsPackageInfoAndARule() throws IOException {
        Set<String> packages = new TreeSet<>();
        try (Stream<Path> dirs = Files.list(SOURCES)) {
            dirs.filter(Files::isDirectory).forEach(d -> packages.add(d.getFileName().toString()));
        }
        assertThat(packages).isEqualTo(new TreeSet<>(FORBIDDEN.keySet()));
        for (String p : packages) assertThat(SOURCES.resolve(p).resolve("package-info.java")).exists();
    }

    @Test
    void noPackageUsesAPackageItMustNotDependOn() throws IOException {
        List<String> violations = new ArrayList<>();
        for (var rule : FORBIDDEN.entrySet()) {
            try (Stream<Path> files = Files.list(SOURCES.resolve(rule.getKey()))) {
                for (Path f : files.filter(f -> f.toString().endsWith(".java") && !f.endsWith("package-info.java")).toList()) {
                    Matcher m = NAMED.matcher(Files.readString(f));
                    while (m.find())
                        if (!m.group(1).equals(rule.getKey()) && rule.getValue().contains(m.group(1)))
                            violations.add(f + " names org.memtrace." + m.group(1));
                }
            }
        }
        assertThat(violations).isEmpty();
    }
}
