package org.memtrace.testutil;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.StringReader;
import org.junit.jupiter.api.Test;

/** The mapping logs RewriteLackeyTest names addresses by: Valgrind's and strace's lines, and the regions they make. */
class MappingLogTest {
    @Test
    void valgrindsMmapsAndBrkAreRegionsAndTheRestIsTheStack() {
        MappingLog log = new MappingLog();
        log.valgrindLine("SYSCALL[20458,1](12) sys_brk ( 0x0 ) --> [pre-success] Success(0x4035000) ");
        log.valgrindLine("SYSCALL[20458,1](12) sys_brk ( 0x4056000 ) --> [pre-success] Success(0x4056000) ");
        log.valgrindLine("SYSCALL[20458,1](9) sys_mmap ( 0x0, 1048576, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x4835000) ");
        log.valgrindLine("SYSCALL[20458,1](9) sys_mmap ( 0x0, 16400, 1, 2050, 4, 0 ) --> [pre-fail] Failure(0xc) ");
        log.valgrindLine("SYSCALL[20458,1](0) sys_read ( 0, 0x5c3e000, 4096 ) --> [async] ... ");
        log.valgrindLine("SYSCALL[20458,1](0) ... [async] --> Success(0x3c) ");
        int heap = log.region(0x4035010), arena = log.region(0x4835000);
        assertThat(heap).isNotEqualTo(MappingLog.STACK).isEqualTo(log.region(0x4055fff));
        assertThat(log.kind(heap)).isEqualTo("brk");
        assertThat(arena).isNotEqualTo(heap).isEqualTo(log.region(0x4934fff));
        assertThat(log.kind(arena)).isEqualTo("mmap");
        assertThat(log.region(0x4935000)).isEqualTo(MappingLog.STACK); // one past the arena
        assertThat(log.region(0x1ffefff000L)).isEqualTo(MappingLog.STACK);
    }

    @Test
    void straceLinesPaddedOrNotAndOverlapsMergeIntoTheFirst() {
        MappingLog log = new MappingLog();
        log.straceLine("26015 brk(NULL)                         = 0x55f4fe770000");
        log.straceLine("26015 brk(0x55f4fe791000)               = 0x55f4fe791000");
        log.straceLine("26015 mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f62d0a06000");
        log.straceLine("26015 mmap(0x7f62d0a07000, 4096, PROT_READ, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x7f62d0a07000");
        log.straceLine("26015 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f62d0a08000");
        int first = log.region(0x7f62d0a06000L);
        assertThat(log.kind(log.region(0x55f4fe780000L))).isEqualTo("brk");
        assertThat(log.region(0x7f62d0a07800L)).isEqualTo(first); // mapped over part of the first: the same region
        assertThat(log.region(0x7f62d0a08000L)).isNotEqualTo(first).isNotEqualTo(MappingLog.STACK); // adjacent, not merged
    }

    /** Only the program's calls after its execve count; strace pads a 4-digit pid with two spaces. */
    @Test
    void memtracesRunKeepsTheProgramsCallsAfterItsExecve(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        var trace = dir.resolve("t");
        var calls = dir.resolve("s");
        java.nio.file.Files.writeString(trace, "# agent pid=9005 page-size=4096 regions=0\n# thread 9005 start parent=0\n");
        java.nio.file.Files.writeString(calls, String.join("\n",
                "9005  execve(\"/usr/lib/jvm/x/lib/jspawnhelper\", [...]) = 0",
                "9005  brk(NULL)                         = 0x5555555d0000",
                "9005  brk(0x5555555f1000)               = 0x5555555f1000",
                "9006  mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7000000",
                "9005  execve(\"/usr/bin/sqlite3\", [\"/usr/bin/sqlite3\"]) = 0",
                "9005  brk(NULL <unfinished ...>",
                "9005  <... brk resumed>)                = 0x5555555a0000",
                "9005  brk(0x5555555c1000)               = 0x5555555c1000", ""));
        MappingLog log = new MappingLog();
        MemtraceRun.mappings(trace, calls, log);
        assertThat(log.kind(log.region(0x5555555b0000L))).isEqualTo("brk");
        assertThat(log.region(0x5555555e0000L)).isEqualTo(MappingLog.STACK); // jspawnhelper's heap, before the execve
        assertThat(log.region(0x7ffff7000000L)).isEqualTo(MappingLog.STACK); // another process
    }

    /** Valgrind reads an object's symbols while it maps it: those lines start on the call's line, its result comes later. */
    @Test
    void lackeysLogWithAResultAfterTheSymbolLines() throws Exception {
        String log = """
                SYSCALL[4821,1](9) sys_mmap ( 0x4a15000, 24576, 3, 2066, 4, 1896448 )--4821-- Reading syms from /usr/lib/x86_64-linux-gnu/libc.so.6
                --4821--    svma 0x0000026380, avma 0x000486c380
                 --> [pre-success] Success(0x4a15000)\s
                SYSCALL[4821,1](9) sys_mmap ( 0x0, 8192, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x5000000)\s
                """;
        InstructionTally tally = new InstructionTally();
        LackeyRun.parse(new BufferedReader(new StringReader(log)), tally);
        assertThat(tally.moduleOf(0x486c380 + 0x100)).isNotNull().extracting(InstructionTally.Module::name).isEqualTo("libc.so.6");
        assertThat(tally.mappings.region(0x4a15000)).isNotEqualTo(MappingLog.STACK);
        assertThat(tally.mappings.region(0x5001000)).isNotEqualTo(MappingLog.STACK).isNotEqualTo(tally.mappings.region(0x4a15000));
    }

    /** Named by mapping and first access, not by place: two runs with the heap and an mmap elsewhere hash alike. */
    @Test
    void anInstructionsAccessesCompareAcrossPlacements() {
        long[] hashes = new long[2];
        long[][] places = {{0x4035000L, 0x4835000L}, {0x55f4fe770000L, 0x7f62d0a06000L}};
        for (int run = 0; run < 2; run++) {
            InstructionTally t = new InstructionTally();
            long heap = places[run][0], map = places[run][1];
            t.mappings.brk(heap);
            t.mappings.brk(heap + 0x21000);
            t.mappings.add(map, map + 0x100000);
            var s = t.site(0, "x+0");
            t.access(s, 'L', heap + 0x2a0, 8);
            t.access(s, 'L', map + 0x30, 8);
            t.access(s, 'L', heap + 0x2b0, 8);
            t.access(s, 'S', map + 0x4030, 8);
            hashes[run] = s.hash;
        }
        assertThat(hashes[0]).isEqualTo(hashes[1]);
        // and a different stride in one mapping is a difference
        InstructionTally t = new InstructionTally();
        t.mappings.brk(0x4035000L);
        t.mappings.brk(0x4056000L);
        t.mappings.add(0x4835000L, 0x4935000L);
        var s = t.site(0, "x+0");
        t.access(s, 'L', 0x4035000L + 0x2a0, 8);
        t.access(s, 'L', 0x4835000L + 0x30, 8);
        t.access(s, 'L', 0x4035000L + 0x2b8, 8);
        t.access(s, 'S', 0x4835000L + 0x4030, 8);
        assertThat(s.hash).isNotEqualTo(hashes[0]);
    }
}
