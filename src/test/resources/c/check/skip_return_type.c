/* CheckFunctionSpellingTest's driver for check_demangle.c's mc_skip_return_type: each line of standard input, a
 * demangled name, is printed as a report's `through F` spells it (with an argument: a mangled name, through
 * c++filt first, as mc_spell_function). */
#include <stdio.h>
#include <string.h>

const char *mc_skip_return_type(const char *s);
const char *mc_spell_function(const char *name);

int main(int argc, char **argv)
{
    (void)argv;
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        printf("%s\n", argc > 1 ? mc_spell_function(line) : mc_skip_return_type(line));
    }
    return 0;
}
