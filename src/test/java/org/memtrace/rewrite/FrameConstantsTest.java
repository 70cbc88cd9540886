package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.DwarfLocals;
import org.memtrace.symbols.ElfFile;
import org.memtrace.testutil.Gcc;

/**
 * The static classification of gcc -O0's constant frame accesses ({@link FrameConstants}): each bug shape is
 * found against the variable it overran, and the frame bytes gcc keeps outside every DWARF variable (pushed
 * registers, the stack protector's canary, a variadic function's register save area, a hidden struct-return
 * pointer, stack arguments read wider than their type, x87 control words, compound literals,
 * {@code __builtin_return_address}) give no finding. sqlite3 3.40 built -O0 -g (2698 functions) and ITC's
 * no-defect half give none either (measured by hand: docs/check.md).
 */
class FrameConstantsTest {
    @TempDir Path dir;

    private Map<String, FrameConstants.Finding> findings(String source, String... flags) throws Exception {
        Files.writeString(dir.resolve("f.c"), source);
        ElfFile elf = ElfFile.read(Gcc.compile(dir, "f.c", "f", flags));
        Map<String, FrameConstants.Finding> out = new TreeMap<>();
        for (FrameConstants.Finding f : FrameConstants.of(elf, DwarfLocals.read(elf)).values()) out.put(f.slot().function(), f);
        return out;
    }

    @Test
    void constantAccessesOutsideTheirVariableAreFoundAndNamed() throws Exception {
        Map<String, FrameConstants.Finding> f = findings("""
                volatile int sink; int idx;
                void pad(void) { int buf[5]; buf[5] = 1; sink = buf[idx]; }
                void smash(void) { char tag[5]; tag[5] = 1; sink = tag[idx]; }
                long under(void) { long t[4] = {1, 2, 3, 4}; return t[-1]; }
                struct pair { int key; int vals[3]; };
                void field(void) { struct pair p; p.vals[3] = 9; sink = p.vals[idx]; }
                void inside(void) { int a[4]; int b[4]; b[4] = 1; sink = a[idx] + b[idx]; }
                int main(void) { return 0; }
                """, "-O0", "-g", "-w", "-fno-stack-protector");
        assertThat(f).containsOnlyKeys("pad", "smash", "under", "field");
        assertThat(f.get("pad").slot().variable()).isEqualTo("buf");
        assertThat(f.get("pad").offset()).isEqualTo(20);
        assertThat(f.get("smash").slot().variable()).isEqualTo("tag");
        assertThat(f.get("smash").offset()).isEqualTo(5);
        assertThat(f.get("under").slot().variable()).isEqualTo("t");
        assertThat(f.get("under").offset()).isEqualTo(-8);
        assertThat(f.get("field").slot().variable()).isEqualTo("p");
        assertThat(f.get("field").offset()).isEqualTo(16);
        assertThat(f.get("field").slot().size()).isEqualTo(16);
        // b[4] lands in a (gcc puts a above b): a neighbour's bytes, not told from a's own access
    }

    @Test
    void theFrameBytesGccKeepsOutsideEveryVariableGiveNoFinding() throws Exception {
        String shapes = """
                #include <stdarg.h>
                #include <string.h>
                volatile int sink; volatile double dsink;
                struct big { long a[6]; };
                struct big make(int k) { struct big b; memset(&b, 0, sizeof b); b.a[k & 3] = k; return b; }
                long use_big(int k) { struct big b = make(k); return b.a[0] + b.a[5]; }
                int vsum(int n, ...) { va_list ap; va_start(ap, n); int s = 0; for (int i = 0; i < n; i++) s += va_arg(ap, int); va_end(ap); return s; }
                int narrow(int a, int b, int c, int d, int e, int f, short g, char h) { return a + b + c + d + e + f + g + h; }
                int trunc(long double x) { return (int)x; }
                int lit(int k) { int *p = (int[]){k, k + 1, k + 2}; return p[0] + p[2]; }
                void *ra(void) { return __builtin_return_address(0); }
                struct two { long x; int y; };
                long halves(struct two t) { return t.x + t.y; }
                long saved(long a) { register long r asm("rbx") = a * 3; asm volatile("" : "+r"(r)); long buf[3] = {r, a, 1}; return buf[a & 1] + buf[2]; }
                int guarded(int k) { char s[16]; memset(s, k, sizeof s); return s[k & 15]; }
                int main(int argc, char **argv) {
                  struct two t = {1, 2};
                  dsink = trunc(2.5L) + lit(3) + vsum(2, 1, 2) + narrow(1, 2, 3, 4, 5, 6, 7, 8) + use_big(argc) + halves(t) + saved(argc) + guarded(argc);
                  return ra() == 0;
                }
                """;
        assertThat(findings(shapes, "-O0", "-g", "-w")).isEmpty();
        assertThat(findings(shapes, "-O0", "-g", "-w", "-fstack-protector-all")).isEmpty();
        // at -O2 no function is taken (no frame pointer, constants folded): nothing classified at all
        assertThat(findings(shapes, "-O2", "-g", "-w")).isEmpty();
    }
}
