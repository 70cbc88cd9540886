#!/usr/bin/env bash
# Java hot-path micro-benchmarks (JMH), e.g. the symbolic resolver: bench/jmh.sh NamingBenchmark
# Extra arguments go to JMH (bench/jmh.sh NamingBenchmark -f 1 -wi 3 -i 5).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results jmh "$@"
cd "$root"
mvn -q -B -ntp test-compile org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/test-classpath.txt
"$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED \
  -cp "target/classes:target/test-classes:$(cat target/test-classpath.txt)" org.openjdk.jmh.Main "$@"
