# Figures of a trace for the bench scripts (sourced after $root and $JAVA_HOME are set).

# a number from a memtrace summary on stderr: summary_value FILE 'loads'
summary_value() { awk -v k="$2" '$0 ~ "^ +" k " " { v = ($NF == "%") ? $(NF-1) "%" : $NF; gsub(",", "", v); print v; exit }' "$1" 2>/dev/null || true; }

# the ms the program waited for the writer, from a summary FILE (its "program waited for the writer" line)
writer_wait() { awk '/program waited for the writer:/ { v = $6; gsub(",", "", v); print v; exit }' "$1"; }

# the entropy bound of a trace in bytes per access, "-" when the test classes are not built
bound_of() {
  [ -f "$root/target/test-classes/org/memtrace/bench/EntropyBound.class" ] || { echo -; return; }
  "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$root/target/memtrace.jar:$root/target/test-classes" \
    org.memtrace.bench.EntropyBound "$1" 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "bound-B/access") printf "%.3f", $(i+1) }' || echo -
}
