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
 * Which accesses of gcc -O0 code {@link LeaOrigins} ties to the object a {@code lea} named: a global indexed
 * through the lea's register, a local's address copied through a frame slot ({@code p = buf; *(p + n)}), a
 * table of pointers to locals, followed across branches, loops and calls; and what it leaves alone: a pointer
 * across a call that may write it, paths that disagree, a register or a slot written in between, a difference of pointers, optimised code, a lea folded to an object's start right after
 * another one (slack below it).
 */
class LeaOriginsTest {
    @TempDir Path dir;

    /** The origins' names by function ("name@slack" for globals), one per function (the last access's). */
    private Map<String, String> origins(String source, String... flags) throws Exception {
        return originsIn("f.c", source, flags);
    }

    /** As above, the source in {@code file} (gcc compiles a {@code .cc} as C++). */
    private Map<String, String> originsIn(String file, String source, String... flags) throws Exception {
        Files.writeString(dir.resolve(file), source);
        ElfFile elf = ElfFile.read(Gcc.compile(dir, file, "f", flags));
        var functions = DwarfLocals.read(elf);
        Map<String, String> out = new TreeMap<>();
        for (var e : LeaOrigins.of(elf, functions).entrySet()) {
            String fn = functions.stream().filter(f -> f.low() <= e.getKey() && e.getKey() < f.high()).findFirst().orElseThrow().name();
            out.put(fn, switch (e.getValue().origin()) {
                case LeaOrigins.Global g -> g.name() + "/" + g.size() + "@" + g.slack();
                case LeaOrigins.Local l -> l.slot().variable() + "/" + l.slot().size();
            });
        }
        return out;
    }

    @Test
    void pointersFromALeaAreTiedToTheirObject() throws Exception {
        Map<String, String> o = origins("""
                int counts[8]; int others[8]; int idx;
                void global(int i) { counts[i] = 3; }
                short stat(int i) { static short history[16]; return history[i]; }
                void pointer(int n) { char buf[5]; char *p; p = buf; *(p + n) = 1; }
                void copied(int n) { int buf[5]; int *p1 = buf; int *p2 = p1; p2[n] = 1; }
                void rows(int n) { int one[6]; int two[5]; int *r[2] = {one, two}; r[1][n] = 1; }
                int main(void) { return 0; }
                """, "-O0", "-g", "-w");
        assertThat(o).containsOnlyKeys("global", "stat", "pointer", "copied", "rows");
        assertThat(o.get("global")).isEqualTo("counts/32@0");
        assertThat(o.get("stat")).isEqualTo("history/32@0");
        assertThat(o.get("pointer")).isEqualTo("buf/5");
        assertThat(o.get("copied")).isEqualTo("buf/20");
        assertThat(o.get("rows")).isEqualTo("two/20");
    }

    /**
     * C++: globals named as declared, as cc --check names them (gcc's ASan descriptors), not by their mangled
     * {@code .symtab} names; functions of a namespace or a class (a DWARF definition with DW_AT_specification
     * only) have their variables. Keys are the functions' DWARF names.
     */
    @Test
    void cxxGlobalsAreNamedAsDeclaredAndNamespaceFunctionsHaveVariables() throws Exception {
        Map<String, String> o = originsIn("f.cc", """
                static int cases[8];
                namespace ns {
                int table[8];
                void indexed(int i) { table[i] = 4; }
                struct log { void add(int n); };
                void log::add(int n) { char line[6]; char *at = line; *(at + n) = 1; }
                }
                void local(int i) { static short history[16]; history[i] = 5; }
                void file(int i) { cases[i] = 3; }
                int main() { return 0; }
                """, "-O0", "-g", "-w");
        assertThat(o).containsOnlyKeys("indexed", "add", "local", "file");
        assertThat(o.get("indexed")).startsWith("table/32@"); // slack when it follows another object
        assertThat(o.get("add")).isEqualTo("line/6");
        assertThat(o.get("local")).startsWith("history/32@");
        assertThat(o.get("file")).startsWith("cases/32@");
    }

    @Test
    void aDemangledVariableIsNamedByItsLastComponent() {
        assertThat(LeaOrigins.declared("cases")).isEqualTo("cases");
        assertThat(LeaOrigins.declared("ns::table")).isEqualTo("table");
        assertThat(LeaOrigins.declared("local(int)::history")).isEqualTo("history");
        assertThat(LeaOrigins.declared("f(a::b, c::d<e::f>)::x")).isEqualTo("x");
        assertThat(LeaOrigins.declared("ns::box<std::pair<int, ns::q> >::slots")).isEqualTo("slots");
        assertThat(LeaOrigins.declared("(anonymous namespace)::counts")).isEqualTo("counts");
        assertThat(LeaOrigins.declared("vtable for Foo")).isEqualTo("vtable for Foo");
    }

    @Test
    void aPointerThatMayHaveChangedIsLeftAlone() throws Exception {
        Map<String, String> o = origins("""
                int g[8]; int *other; int idx; void touch(void *p) { other = p; }
                void taken_call(int n) { int *p = g; touch(&p); p[n] = 1; }
                void either(int n) { int *p = g; if (n > 3) p = other; p[n] = 1; }
                void looped(int n) { int *p = g; for (int i = 0; i < n; i++) { p[i] = 1; p = other; } }
                int *gp; void global_call(int n) { gp = g; touch(0); gp[n] = 1; }
                void written(int n) { int *p = g; p = other; p[n] = 1; }
                long diff(int *q) { char *p = (char *)g; long d = p - (char *)q; return ((char *)other)[d]; }
                void through(int n) { int buf[4]; int *p = buf; *other = n; p[n] = 1; touch(buf); }
                int main(void) { return 0; }
                """, "-O0", "-g", "-w");
        assertThat(o).isEmpty();
    }

    /**
     * Followed through the function's branches to a fixpoint: across a branch both of whose paths agree, a
     * loop's back edge ({@code p--} in its slot), a call that cannot write the slot (its address never taken); a
     * pointer kept in a global; gcc's {@code add %rbp,%rax; sub $0x70,%rax} for a stack array of structs; an
     * access wider than its variable (a struct laid on a smaller buffer).
     */
    @Test
    void pointersAreFollowedAcrossBranchesLoopsAndCalls() throws Exception {
        Map<String, String> o = origins("""
                int g[8]; int *other; int idx; void touch(void *p) { other = p; } int five(void) { return 5; }
                void across_call(int n) { int *p = g; touch(0); p[n] = 1; }
                void branch(int n) { int *p = g; if (n > 3) n = 0; p[n] = 1; }
                void down(void) { int buf[5]; int *p = &buf[4]; for (int i = 0; i <= 5; i++) { *p = 1; p--; } }
                void returned(void) { int buf[5]; int *p = buf; *(p + five()) = 1; }
                struct s3 { int a, b, c; } *gs;
                void kept(void) { char buf[10]; gs = (struct s3 *)buf; gs->c = 1; }
                struct rec { int id; short kind; short flags; int weight; };
                void records(int last) { struct rec table[8]; for (int i = 0; i <= last; i++) table[i].kind = 1; touch(table); }
                void wide(void) { char buf[2]; int *p = (int *)buf; *p = 1; }
                int main(void) { return 0; }
                """, "-O0", "-g", "-w");
        assertThat(o).containsOnlyKeys("across_call", "branch", "down", "returned", "kept", "records", "wide");
        assertThat(o.get("across_call")).isEqualTo("g/32@0");
        assertThat(o.get("branch")).isEqualTo("g/32@0");
        assertThat(o.get("down")).isEqualTo("buf/20");
        assertThat(o.get("returned")).isEqualTo("buf/20");
        assertThat(o.get("kept")).isEqualTo("buf/10");
        assertThat(o.get("records")).isEqualTo("table/96");
        assertThat(o.get("wide")).isEqualTo("buf/2");
    }

    @Test
    void optimisedCodeIsNotRead() throws Exception {
        assertThat(origins("""
                int counts[8]; int idx;
                void global(int i) { counts[i] = 3; }
                int main(void) { return 0; }
                """, "-O2", "-g", "-w")).isEmpty();
    }

    @Test
    void aLeaFoldedToTheStartOfTheNextGlobalHasTheOneBeforeAsSlack() throws Exception {
        Map<String, String> o = origins("""
                char first[16], second[16];
                void folded(int n) { char *e = first + sizeof first; e[-n] = 7; }
                int main(void) { return 0; }
                """, "-O0", "-g", "-w", "-fno-common");
        String fold = o.get("folded");
        // gcc may lay second before first: then first + 16 is the end of both, nothing after it, no origin
        assertThat(fold == null || fold.equals("second/16@16") || fold.startsWith("first/")).as(String.valueOf(fold)).isTrue();
        assertThat(fold).isNotEqualTo("second/16@0");
    }
}
