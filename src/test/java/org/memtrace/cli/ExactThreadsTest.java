package org.memtrace.cli;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;
import org.memtrace.testutil.TraceFile.Line;

/**
 * Fault mode is exact under threads: traced memory lives on memfds with an always-open alias view, and a
 * faulting instruction runs redirected to the alias instead of opening the page, so no other thread's
 * access can go unseen (docs/madt.md, "Threads"). Real programs, the real agent.
 */
class ExactThreadsTest {
    @TempDir static Path dir;

    @BeforeAll
    static void build() throws Exception {
        Gcc.compile(dir, "shared_array.c", "shared_array", "-g", "-no-pie", "-pthread");
        Gcc.compile(dir, "fork_private.c", "fork_private", "-g", "-no-pie");
        Gcc.compile(dir, "operands.c", "operands", "-g", "-no-pie");
        Gcc.compile(dir, "divide_error.c", "divide_error", "-g", "-no-pie");
        Gcc.compile(dir, "string_ops.c", "string_ops", "-g", "-no-pie");
        Gcc.compile(dir, "thread_mallocs.c", "thread_mallocs", "-g", "-no-pie", "-pthread");
        Gcc.compile(dir, "push_pop.c", "push_pop", "-g", "-no-pie", "-pthread");
        Gcc.compile(dir, "string_compare.c", "string_compare", "-g", "-no-pie", "-pthread");
        Gcc.compile(dir, "block_spans.c", "block_spans", "-g", "-no-pie", "-pthread");
        Gcc.compile(dir, "data_bss_io.c", "data_bss_io", "-g", "-no-pie", "-pthread");
        Gcc.compile(dir, "vector_io.c", "vector_io", "-g", "-no-pie", "-pthread");
        Gcc.compile(dir, "mmsg_io.c", "mmsg_io", "-g", "-no-pie", "-pthread");
    }

    /** read/write of a buffer across .data's file-backed page and .bss, and open of a path at the end of .rodata. */
    @Test
    void systemCallBuffersAcrossDataAndBssOpenNothing() throws Exception {
        var r = memtrace("data-bss.trace", "data_bss_io");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(dir.resolve("data_bss_io").toString())))
                .startsWith("read 12288 wrote 12288 ");
        assertThat(windowsAtRisk(r.stderr())).isZero();
        TraceFile t = TraceFile.read(dir.resolve("data-bss.trace"));
        long buf = symbol("data_bss_io", "buf");
        // the buffer does lie across two lines of the memory map: the file's page and the anonymous rest
        assertThat(t.comments()).anyMatch(c -> c.matches("mapping 0x[0-9a-f]+-0x[0-9a-f]+ rw- offset=0x[1-9a-f][0-9a-f]* traced .*")
                && Long.parseUnsignedLong(c.substring(c.indexOf('-') + 3, c.indexOf(' ', c.indexOf('-'))), 16) < buf + 12288
                && Long.parseUnsignedLong(c.substring(c.indexOf('-') + 3, c.indexOf(' ', c.indexOf('-'))), 16) > buf);
        // the kernel's write into it and read from it are one event each, over all of it
        assertThat(t.of('W').stream().filter(l -> l.number(0) == buf && l.fields().getLast().equals("read"))).hasSize(1);
        assertThat(t.of('G').stream().filter(l -> l.number(0) == buf && l.fields().getLast().equals("write"))).hasSize(1);
    }

    /** writev/readv, sendmsg/recvmsg and process_vm_readv, their vectors and buffers in the heap, .data and .bss, another thread alive. */
    @Test
    void vectorSystemCallsReachTheirBuffersThroughTheAliasAndOpenNothing() throws Exception {
        String file = dir.resolve("vector.out").toString();
        String plain = Gcc.run(List.of(dir.resolve("vector_io").toString(), file));
        var r = memtrace("vector.trace", "vector_io", file);
        assertThat(r.status()).as(r.stderr()).isZero();
        // the results, bytes and the passed descriptor as untraced (heap addresses differ: those lines aside)
        assertThat(r.stdout().lines().filter(l -> !l.startsWith("at ")))
                .containsExactlyElementsOf(plain.lines().filter(l -> !l.startsWith("at ")).toList());
        assertThat(r.stdout()).contains("writev 28000 readv 28000 same 1 ",
                "sendmsg 1500 recvmsg 1500 intact 1 controllen 24 flags 0 fd passed 1", "process_vm_readv 100 same 1");
        assertThat(windowsAtRisk(r.stderr())).isZero();
        Map<String, Long> at = r.stdout().lines().filter(l -> l.startsWith("at ")).map(l -> l.split(" "))
                .collect(Collectors.toMap(w -> w[1], w -> Long.parseUnsignedLong(w[2].substring(2), 16)));
        TraceFile t = TraceFile.read(dir.resolve("vector.trace"));
        // one block event per buffer the kernel read (G) or wrote (W), at the program's addresses, in order
        assertThat(kernelBlocks(t, 'G', "writev")).containsExactly(
                at.get("out0") + " 5000", at.get("out1") + " 3000", at.get("out2") + " 20000");
        assertThat(kernelBlocks(t, 'W', "readv")).containsExactly(at.get("bss_in") + " 6000", at.get("heap_in") + " 22000");
        assertThat(kernelBlocks(t, 'G', "sendmsg")).containsExactly(at.get("msg") + " 1000", at.get("data_out") + " 500");
        assertThat(kernelBlocks(t, 'W', "recvmsg")).containsExactly(at.get("in1") + " 700", at.get("in2") + " 800");
        assertThat(kernelBlocks(t, 'W', "process_vm_readv")).containsExactly(at.get("local") + " 100");
        assertThat(at.get("bss_in")).isEqualTo(symbol("vector_io", "bss_in"));
    }

    /** sendmmsg/recvmmsg: three messages each way through the alias, then 5,000 pieces in one call, past what is redirected. */
    @Test
    void multiMessageSystemCallsReachTheirBuffersThroughTheAlias() throws Exception {
        String plain = Gcc.run(List.of(dir.resolve("mmsg_io").toString()));
        var r = memtrace("mmsg.trace", "mmsg_io");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout().lines().filter(l -> !l.startsWith("at ")))
                .containsExactlyElementsOf(plain.lines().filter(l -> !l.startsWith("at ")).toList())
                .containsExactly("sendmmsg 3 msg_len 1000 2000 300",
                        "recvmmsg 3 msg_len 1000 2000 300 intact 1 controllen 24 namelen 0 fd passed 1 timeout left 1",
                        "sendmmsg 5 of 5000 pieces same 1");
        assertThat(windowsAtRisk(r.stderr())).isZero();
        Map<String, Long> at = r.stdout().lines().filter(l -> l.startsWith("at ")).map(l -> l.split(" "))
                .collect(Collectors.toMap(w -> w[1], w -> Long.parseUnsignedLong(w[2].substring(2), 16)));
        TraceFile t = TraceFile.read(dir.resolve("mmsg.trace"));
        // every piece of every message, up to the message's msg_len, in order; the 5,000 one-byte pieces after
        List<String> fetched = kernelBlocks(t, 'G', "sendmmsg");
        assertThat(fetched).hasSize(4 + 5000).startsWith(at.get("out0") + " 400", (at.get("out0") + 400) + " 600",
                at.get("out1") + " 2000", at.get("data_out") + " 300");
        assertThat(fetched.subList(4, fetched.size())).containsExactlyElementsOf(
                LongStream.range(0, 5000).mapToObj(i -> (at.get("bytes") + i) + " 1").toList());
        assertThat(kernelBlocks(t, 'W', "recvmmsg")).containsExactly(
                at.get("in0") + " 1000", at.get("in1") + " 2000", at.get("bss_in") + " 300");
        assertThat(at.get("bss_in")).isEqualTo(symbol("mmsg_io", "bss_in"));
    }

    private static List<String> kernelBlocks(TraceFile t, char kind, String call) {
        return t.of(kind).stream().filter(l -> l.raw() && l.fields().getLast().equals(call))
                .map(l -> l.number(0) + " " + l.field(2)).toList();
    }

    /** memset, memcpy and memmove over two adjacent moved mappings (and a memmove overlapping its source from above in one), another thread alive: nothing opened. */
    @Test
    void blockOperationsAcrossTwoMovedPiecesOpenNothing() throws Exception {
        var r = memtrace("spans.trace", "block_spans");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(dir.resolve("block_spans").toString()))).endsWith("span ok\n");
        assertThat(windowsAtRisk(r.stderr())).isZero();
        TraceFile t = TraceFile.read(dir.resolve("spans.trace"));
        // one event each, over the whole 3-page span, named after the function
        assertThat(t.of('W').stream().filter(l -> l.fields().getLast().equals("memset")).map(l -> l.field(2)))
                .containsExactly("12288");
        assertThat(t.of('Y').stream().map(l -> l.fields().getLast() + " " + l.field(4)))
                .containsExactly("memcpy 12288", "memmove 12287", "memmove 4096");
    }

    private static Cli.Result memtrace(String trace, String... program) throws Exception {
        String[] all = new String[program.length + 8];
        System.arraycopy(new String[] {"run", "--mode", "fault", "--addresses", "raw", "-o", dir.resolve(trace).toString(), "--"}, 0, all, 0, 8);
        System.arraycopy(program, 0, all, 8, program.length);
        all[8] = dir.resolve(program[0]).toString();
        return Cli.run(dir, all);
    }

    private static long symbol(String program, String name) throws Exception {
        return RunIntegrationTest.symbolIn(dir.resolve(program), name);
    }

    private static long windowsAtRisk(String stderr) {
        return stderr.lines().map(String::strip).filter(l -> l.startsWith("windows at risk"))
                .map(l -> l.substring("windows at risk".length()).strip().replace(",", "")).mapToLong(Long::parseLong)
                .findFirst().orElseThrow(() -> new AssertionError("no windows at risk in the summary:\n" + stderr));
    }

    private static List<Line> accessesIn(TraceFile t, char kind, long start, long bytes) {
        return t.of(kind).stream().filter(l -> l.number(0) >= start && l.number(0) < start + bytes).toList();
    }

    /** Two threads store 5,000 ints each into the same pages at once, then load them back. */
    private void everyAccessOfBothThreadsExactlyOnce(String trace, String... program) throws Exception {
        String plain = Gcc.run(List.of(dir.resolve(program[0]).toString(), program.length > 1 ? program[1] : "global"));
        var r = memtrace(trace, program);
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout().lines().filter(l -> l.startsWith("thread")))
                .containsExactlyElementsOf(plain.lines().filter(l -> l.startsWith("thread")).toList())
                .containsExactly("thread 0 sum 12497500", "thread 1 sum 12502500");
        long array = Long.parseUnsignedLong(r.stdout().lines().filter(l -> l.startsWith("array 0x")).findFirst()
                .orElseThrow().substring(8), 16);
        TraceFile t = TraceFile.read(dir.resolve(trace));
        String main = t.lines().getFirst().fields().getLast();
        for (char kind : new char[] {'S', 'L'}) {
            List<Line> in = accessesIn(t, kind, array, 4 * 10_000);
            assertThat(in).extracting(l -> l.number(0)).as("%c", kind).doesNotHaveDuplicates()
                    .containsExactlyInAnyOrderElementsOf(LongStream.range(0, 10_000).map(i -> array + 4 * i).boxed().toList());
            // thread t touched the elements t, t+2, ...: the parity of the index names the thread
            Map<String, List<Long>> parityByThread = in.stream().collect(Collectors.groupingBy(l -> l.field(4),
                    Collectors.mapping(l -> (l.number(0) - array) / 4 % 2, Collectors.toList())));
            assertThat(parityByThread).hasSize(2).doesNotContainKey(main);
            assertThat(parityByThread.values()).allSatisfy(p -> assertThat(p).hasSize(5_000).containsOnly(p.getFirst()));
        }
        assertThat(windowsAtRisk(r.stderr())).isZero();
    }

    @Test
    void twoThreadsSharingTheSamePagesOfAGlobalArrayLoseNothing() throws Exception {
        everyAccessOfBothThreadsExactlyOnce("shared-global.trace", "shared_array");
    }

    @Test
    void twoThreadsSharingTheSamePagesOfAHeapBlockLoseNothing() throws Exception {
        everyAccessOfBothThreadsExactlyOnce("shared-heap.trace", "shared_array", "heap");
    }

    @Test
    void twoThreadsSharingTheSamePagesOfAnAnonymousMappingLoseNothing() throws Exception {
        everyAccessOfBothThreadsExactlyOnce("shared-mmap.trace", "shared_array", "mmap");
    }

    @Test
    void aForkedChildWritesItsOwnCopyOfTracedMemory() throws Exception {
        var r = memtrace("fork.trace", "fork_private");
        assertThat(r.status()).as(r.stderr()).isZero();
        // the child saw the parent's values at the fork (exit 0), the parent kept its own
        assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(dir.resolve("fork_private").toString())))
                .isEqualTo("child 0 parent 2 10 11\n");
        TraceFile t = TraceFile.read(dir.resolve("fork.trace"));
        assertThat(t.comments()).anyMatch(c -> c.startsWith("fork "));
        // only the parent's store is traced; the child runs untraced
        assertThat(accessesIn(t, 'S', symbol("fork_private", "global_value"), 4)).hasSize(1);
    }

    @Test
    void eachOperandShapeIsRedirectedToTheExactAddress() throws Exception {
        var r = memtrace("operands.trace", "operands");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(dir.resolve("operands").toString())))
                .isEqualTo("q 100 r 0 v 5 rip 1005 old 30 cells 101 110 16 19 35 32 35\n");
        long cells = symbol("operands", "cells"), rip = symbol("operands", "rip_cell");
        TraceFile t = TraceFile.read(dir.resolve("operands.trace"));
        List<String> asm = t.lines().stream().filter(Line::access)
                .filter(l -> l.number(0) >= cells && l.number(0) < cells + 512 || l.number(0) == rip)
                .skip(64) // the loop that fills the 64 cells
                .limit(11).map(l -> l.type() + " " + (l.number(0) == rip ? "rip" : "+" + (l.number(0) - cells)) + " " + l.field(3))
                .toList();
        assertThat(asm).containsExactly(
                "S +8 8",                  // movq $101, 8(base)
                "L +40 8",                 // movq 16(base,index,8)
                "S rip 8",                 // movq rip_cell(%rip)
                "S +80 8",                 // movq (%r9,%r10,8): REX.B and REX.X
                "L +128 32", "S +160 32",  // vmovdqu, two-byte VEX
                "L +256 32", "S +288 32",  // vmovdqu off %r11, three-byte VEX
                "L +240 8", "S +240 8",    // lock xadd: one locked read-modify-write
                "L +320 8");               // div: rax and rdx implicit, so another scratch
        assertThat(windowsAtRisk(r.stderr())).isZero();
    }

    @Test
    void aDivideErrorOfARedirectedDivShowsTheProgramItsOwnInstructionAndRegisters() throws Exception {
        var r = memtrace("divide.trace", "divide_error");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(dir.resolve("divide_error").toString())))
                .isEqualTo("SIGFPE at the div, rcx 5678\n");
        TraceFile t = TraceFile.read(dir.resolve("divide.trace"));
        assertThat(accessesIn(t, 'L', symbol("divide_error", "zero"), 8)).hasSize(1);
    }

    @Test
    void stringInstructionsAreEmulatedThroughTheAliasOneRecordPerElement() throws Exception {
        var r = memtrace("strings.trace", "string_ops");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(dir.resolve("string_ops").toString())))
                .isEqualTo("0123456789 HGFEDCBAHGFEDCBAHGFEDCBAHGFEDCBA 0123456789ab ax ffffffffffff6c6b edge zzz\n");
        long src = symbol("string_ops", "src"), dst = symbol("string_ops", "dst");
        TraceFile t = TraceFile.read(dir.resolve("strings.trace"));
        // the program's own instructions (-no-pie: its code is below 0x402000), in order
        List<Line> own = t.lines().stream().filter(Line::access).filter(l -> l.number(2) < 0x402000)
                .filter(l -> l.field(1).equals("[heap]") || l.number(0) >= src && l.number(0) < dst + 64).toList();
        long edge = own.stream().filter(l -> l.field(1).equals("[heap]")).findFirst().orElseThrow().number(0);
        assertThat((edge + 1) % 4096).isZero();
        List<String> expected = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) expected.addAll(List.of("L src+" + i + " 1", "S dst+" + i + " 1")); // rep movsb
        for (int i = 0; i < 4; i++) expected.add("S dst+" + (16 + 8 * i) + " 8");                       // rep stosq
        for (int i = 0; i < 3; i++) expected.addAll(List.of("L src+" + (8 - 4 * i) + " 4", "S dst+" + (56 - 4 * i) + " 4")); // std; rep movsl
        expected.add("L src+20 2");                                                                        // lodsw
        for (int i = 0; i < 3; i++) expected.add("S edge+" + i + " 1");                                    // rep stosb over a page boundary
        assertThat(own.stream().limit(expected.size()).map(l -> l.type() + " " + (l.field(1).equals("[heap]") ? "edge+" + (l.number(0) - edge)
                : l.number(0) >= dst ? "dst+" + (l.number(0) - dst) : "src+" + (l.number(0) - src)) + " " + l.field(3)).toList())
                .containsExactlyElementsOf(expected);
        assertThat(windowsAtRisk(r.stderr())).isZero();
    }

    @Test
    void pushAndPopOfAMemoryOperandAreEmulatedThroughTheAliasUnderTwoThreads() throws Exception {
        var r = memtrace("pushpop.trace", "push_pop");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(dir.resolve("push_pop").toString())))
                .isEqualTo("cells 11 33 11 edge 1122334455667788 copied 4000 of 4000\n");
        long cells = symbol("push_pop", "cells"), from = symbol("push_pop", "from"), to = symbol("push_pop", "to");
        TraceFile t = TraceFile.read(dir.resolve("pushpop.trace"));
        // the program's own instructions (-no-pie: its code is below 0x402000), in order
        List<Line> own = t.lines().stream().filter(Line::access).filter(l -> l.number(2) < 0x402000).toList();
        List<Line> alone = own.stream().filter(l -> l.field(1).equals("[heap]") || l.number(0) >= cells && l.number(0) < cells + 64)
                .limit(6).toList();
        long edge = alone.get(4).number(0);
        assertThat((edge + 4) % 4096).isZero();
        // one record per push or pop, the memory operand only (the stack is not traced); the operand across
        // two pages is one access, as the open route gives it
        assertThat(alone.stream().map(l -> l.type() + " " + (l.field(1).equals("[heap]") ? "edge+" + (l.number(0) - edge)
                : "cells+" + (l.number(0) - cells)) + " " + l.field(3)).toList())
                .containsExactly("L cells+0 8", "S cells+8 8",     // pushq cells(%rip); popq cells+8(%rip)
                        "L cells+16 8", "S cells+32 8",            // pushq 16(base); popq 24(base,index,8)
                        "S edge+0 8",                               // the plain store that fills it
                        "L edge+0 8");                              // pushq (edge): across the page boundary
        assertThat(own).filteredOn(l -> l.type() == 'S' && l.field(1).equals("[heap]")).extracting(l -> l.number(0) - edge)
                .containsExactly(0L, 8L);                           // ...and popq 8(edge)
        // both threads' pushes of `from` and pops into `to` (main only stores `from` and loads `to`): each
        // element exactly once, by the thread that owns it
        for (var kind : List.of(Map.entry('L', from), Map.entry('S', to))) {
            List<Line> in = own.stream().filter(l -> l.type() == kind.getKey())
                    .filter(l -> l.number(0) >= kind.getValue() && l.number(0) < kind.getValue() + 8 * 4000).toList();
            assertThat(in).extracting(l -> l.number(0)).as("%c", kind.getKey()).doesNotHaveDuplicates()
                    .containsExactlyInAnyOrderElementsOf(LongStream.range(0, 4000).map(i -> kind.getValue() + 8 * i).boxed().toList());
            Map<String, List<Long>> parityByThread = in.stream().collect(Collectors.groupingBy(l -> l.field(4),
                    Collectors.mapping(l -> (l.number(0) - kind.getValue()) / 8 % 2, Collectors.toList())));
            assertThat(parityByThread.values()).hasSize(2).allSatisfy(p -> assertThat(p).hasSize(2000).containsOnly(p.getFirst()));
        }
        assertThat(windowsAtRisk(r.stderr())).isZero();
    }

    @Test
    void cmpsAndScasAreEmulatedWithTheCpusFlagsOneRecordPerOperandUnderTwoThreads() throws Exception {
        var r = memtrace("compare.trace", "string_compare");
        assertThat(r.status()).as(r.stderr()).isZero();
        // rcx, rsi/rdi and the flags CF PF AF ZF SF OF after each, as the CPU left them untraced
        assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(dir.resolve("string_compare").toString())))
                .isEqualTo("""
                        cmpsb rcx 2 rsi +6 flags 95
                        cmpsq rdi +8 flags 814
                        scasw rcx 6 rdi -1 flags 4
                        scasb rcx 97 flags 44
                        via the stack abcdeXgh
                        thread 0 scanned 2048
                        thread 1 scanned 2048
                        """);
        TraceFile t = TraceFile.read(dir.resolve("compare.trace"));
        List<Line> own = t.lines().stream().filter(Line::access).filter(l -> l.number(2) < 0x402000).toList();
        Map<String, Long> at = new java.util.LinkedHashMap<>();
        for (String name : List.of("left", "right", "big", "words")) at.put(name, symbol("string_compare", name));
        long edge = own.stream().filter(l -> l.field(1).equals("[heap]")).findFirst().orElseThrow().number(0);
        assertThat((edge + 2) % 4096).isZero();
        java.util.function.Function<Line, String> named = l -> {
            if (l.field(1).equals("[heap]")) return l.type() + " edge+" + (l.number(0) - edge) + " " + l.field(3);
            var in = at.entrySet().stream().filter(n -> l.number(0) >= n.getValue() && l.number(0) < n.getValue() + 16)
                    .max(Map.Entry.comparingByValue()); // the nearest symbol below
            return in.map(n -> l.type() + " " + n.getKey() + "+" + (l.number(0) - n.getValue()) + " " + l.field(3)).orElse(null);
        };
        List<String> expected = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) expected.addAll(List.of("L left+" + i + " 1", "L right+" + i + " 1")); // repe cmpsb: both operands
        expected.addAll(List.of("L big+0 8", "L big+8 8"));                                             // cmpsq
        for (int i = 3; i >= 0; i--) expected.add("L words+" + 2 * i + " 2");                           // std; repe scasw
        for (int i = 0; i < 3; i++) expected.add("S edge+" + i + " 1");                                 // the stores that fill it
        for (int i = 0; i < 3; i++) expected.add("L edge+" + i + " 1");                                 // repne scasb across pages
        for (int i = 0; i < 8; i++) expected.add("L left+" + i + " 1");  // rep movsb to the (untraced) stack
        for (int i = 0; i < 8; i++) expected.add("S right+" + i + " 1"); // rep movsb from the stack
        assertThat(own.stream().map(named).filter(java.util.Objects::nonNull).toList()).containsExactlyElementsOf(expected);
        // both threads scanned lines of the same page at once: every byte exactly once, by the thread of its line
        long text = symbol("string_compare", "text");
        List<Line> scanned = accessesIn(t, 'L', text, 4096);
        assertThat(scanned).extracting(l -> l.number(0)).doesNotHaveDuplicates()
                .containsExactlyInAnyOrderElementsOf(LongStream.range(0, 4096).map(i -> text + i).boxed().toList());
        Map<String, List<Long>> parityByThread = scanned.stream().collect(Collectors.groupingBy(l -> l.field(4),
                Collectors.mapping(l -> (l.number(0) - text) / 64 % 2, Collectors.toList())));
        assertThat(parityByThread.values()).hasSize(2).allSatisfy(p -> assertThat(p).hasSize(2048).containsOnly(p.getFirst()));
        assertThat(windowsAtRisk(r.stderr())).isZero();
    }

    @Test
    void threadArenasAreMovedWholeNotBlockByBlock() throws Exception {
        var r = Cli.run(dir, "run", "--mode", "fault", "--quiet", "-o", dir.resolve("mallocs.trace").toString(), "--",
                dir.resolve("thread_mallocs").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(dir.resolve("thread_mallocs").toString())))
                .isEqualTo("sums 4999950000 4999950000 mappings under 200\n");
    }
}
