package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.symbols.ElfFile;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * The PLT stubs in {@code memtrace run --mode rewrite} (docs/rewriting.md, "The planner"): each call through
 * {@code labs@plt} records its {@code jmp *GOT} load of labs's slot; a lazily bound one's first call also the
 * {@code push $n} of its entry and PLT0's {@code push GOT+8} and {@code jmp *GOT+16} into ld.so's resolver
 * (ld.so itself untraced); {@code __cxa_finalize}'s {@code .plt.got} entry at exit. In the classic lazy PLT,
 * the IBT one ({@code endbr64}, entries in {@code .plt.sec}) and a program linked {@code -z now}.
 */
class RewritePltTest {
    @TempDir Path dir;

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {"lazy|-Wl,-z,lazy", "ibt|-fcf-protection -Wl,-z,ibtplt -Wl,-z,lazy", "now|-Wl,-z,now"})
    void everyStubRecordsItsLoadsAndPushes(String form, String flags) throws Exception {
        List<String> options = new ArrayList<>(List.of("-O1", "-fno-builtin"));
        options.addAll(List.of(flags.split(" ")));
        Path prog = Gcc.compile(dir, "rewrite_plt.c", "prog", options.toArray(String[]::new));
        Path trace = dir.resolve("t.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("6\n");
        assertThat(r.stderr()).containsPattern("rewrite: \\d+ memory instructions of " + prog + " rewritten, \\d+ by a punned jump, \\d+ through the int3 fallback, 0 left untraced\n");

        ElfFile elf = ElfFile.read(prog);
        long plt = elf.section(".plt").orElseThrow().address();
        boolean ibt = form.equals("ibt"), lazy = !form.equals("now");
        List<String> expected = new ArrayList<>();
        List<String> stubs = new ArrayList<>();
        String gotSlot = null;
        for (var l : TraceFile.read(trace).lines()) {
            if (!l.access()) continue;
            String data = l.field(0).replaceAll("^\\[stack\\]\\+\\d+$", "[stack]"), code = l.field(2);
            if (code.equals("__do_global_dtors_aux+14")) gotSlot = data; // cmpq $0,__cxa_finalize's slot
            // the program's stubs (libc's own, __tls_get_addr@plt, read libc's GOT)
            if (code.matches(".*@plt\\+\\d+|prog\\+0x[0-9a-f]+") && !l.field(1).equals("libc.so.6")) stubs.add(l.type() + " " + data + " " + code + " " + l.field(3));
        }
        String entry = ibt ? "@plt+4" : "@plt+0";
        // labs (its slot GOT+24), three calls; printf (GOT+32), one
        for (int call = 0; call < 3; call++) {
            expected.add("L _GLOBAL_OFFSET_TABLE_+24 labs" + entry + " 8");
            if (call == 0 && lazy) bind(expected, ibt ? name(plt + 0x14) : "labs@plt+6", plt);
        }
        expected.add("L _GLOBAL_OFFSET_TABLE_+32 printf" + entry + " 8");
        if (lazy) bind(expected, ibt ? name(plt + 0x24) : "printf@plt+6", plt);
        // at exit, __do_global_dtors_aux calls __cxa_finalize through .plt.got, named as objdump names it
        expected.add("L " + gotSlot + " __cxa_finalize@plt+" + (ibt ? 4 : 0) + " 8");
        assertThat(stubs).containsExactlyElementsOf(expected);
    }

    /** A lazy entry's first call: its {@code push $n}, then PLT0's {@code push GOT+8} (load and push) and {@code jmp *GOT+16}. */
    private static void bind(List<String> expected, String push, long plt) {
        expected.add("S [stack] " + push + " 8");
        expected.add("L _GLOBAL_OFFSET_TABLE_+8 " + name(plt) + " 8");
        expected.add("S [stack] " + name(plt) + " 8");
        expected.add("L _GLOBAL_OFFSET_TABLE_+16 " + name(plt + 6) + " 8");
    }

    /** How the trace names an address of the PLT no symbol covers. */
    private static String name(long address) { return "prog+0x" + Long.toHexString(address); }
}
