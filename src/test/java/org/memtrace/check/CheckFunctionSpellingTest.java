package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/**
 * A report's {@code through F} and {@code in F} name a function by its qualified name and parameters, never with
 * the return type c++filt prints before a template function's name (check_demangle.c, mc_skip_return_type):
 * check_demangle.c built alone with a driver that spells each line of its input.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckFunctionSpellingTest {
    Path dir;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        CheckBuilds.fixture(dir, "skip_return_type.c");
        Path agent = Path.of("agent").toAbsolutePath();
        Gcc.run(List.of("gcc", "-O1", "-D_GNU_SOURCE", "-I" + agent.resolve("check"), "-I" + agent.resolve("common"),
                "-I" + agent.resolve("include"), "-o", dir.resolve("spell").toString(), dir.resolve("skip_return_type.c").toString(),
                agent.resolve("check/check_demangle.c").toString()));
    }

    private List<String> spell(List<String> names, String... args) throws Exception {
        Path in = dir.resolve("names.txt");
        Files.write(in, names);
        List<String> command = new java.util.ArrayList<>(List.of(dir.resolve("spell").toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectInput(in.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
        return out.lines().toList();
    }

    @Test
    void templateFunctionsLoseTheirReturnTypeAndNothingElseChanges() throws Exception {
        Map<String, String> e = new LinkedHashMap<>();
        e.put("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, "
                + "std::vector<int, std::allocator<int> > >, int const&)",
                "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, "
                + "std::vector<int, std::allocator<int> > >, int const&)");
        e.put("std::__detail::_MakeUniq<int []>::__array std::make_unique<int []>(unsigned long)", "std::make_unique<int []>(unsigned long)");
        e.put("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > f[abi:cxx11]<int>(int)", "f[abi:cxx11]<int>(int)");
        e.put("void (anonymous namespace)::bar<int>(int)", "(anonymous namespace)::bar<int>(int)");
        e.put("bool operator< <int>(int const&, int const&)", "operator< <int>(int const&, int const&)");
        // no return type: as they are
        for (String same : List.of("std::vector<int, std::allocator<int> >::vector(unsigned long, std::allocator<int> const&)",
                "std::unique_ptr<int [], std::default_delete<int []> >::reset<int*, void>(int*)", "Foo::operator new(unsigned long)",
                "(anonymous namespace)::foo(int)", "foo()::{lambda(int)#1}::operator()(int) const", "main", "_Z3fooi",
                "void (*f<int>(int))(double)", "cxx_uaf_string_temp::make(int) [clone .constprop.0]"))
            e.put(same, same);
        assertThat(spell(List.copyOf(e.keySet()))).containsExactlyElementsOf(e.values());
    }

    /** The mangled name of the example, through c++filt (as a report spells it), when c++filt is there. */
    @Test
    void aMangledTemplateFunctionIsSpelledWithoutItsReturnType() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/c++filt")), "no c++filt");
        assertThat(spell(List.of("_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_"), "mangled"))
                .containsExactly("std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, "
                        + "std::vector<int, std::allocator<int> > >, int const&)");
    }
}
