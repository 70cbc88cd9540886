/*
 * check_demangle.c: C++ names in check reports spelled as the source spells them, new_free(int, int) for
 * _ZL8new_freeii and Foo::bar(int) for _ZN3Foo3barEi, by the system's c++filt, as memtrace's Java side spells
 * every other name it writes (docs/naming.md, "C++ names"): the same demangler as gdb, objdump -C and
 * memtrace report, so the names agree.
 *
 * A name is sent only when it looks mangled (_Z and then letters, digits, '_', '.', '$'), as an argument of
 * /usr/bin/c++filt, which prints its spelling on a line. c++filt is run only from a trusted place
 * (docs/trust.md): the path resolved to its real file, a regular file of root writable by no one else, in
 * directories of root writable by no one else; with an empty environment but LC_ALL=C, standard input and error
 * on /dev/null, through posix_spawn (no fork of a big process, no handler of the program's runs in the child).
 * Answers are cached (64 names), so a report spawns it at most once per new name, ~2 ms each.
 *
 * A report's `through F` and `in F` name a function without the return type c++filt prints before a template
 * function's name (mc_spell_function): `std::vector<int>::_M_realloc_insert<int const&>(...)`, not `void std::...`.
 *
 * When c++filt is missing, untrusted or fails, or MEMTRACE_CHECK has `mangled`, the name stays as the symbol
 * table spells it: a raw name is still a correct name.
 *
 * What it gets wrong: while the child runs, the program may get a SIGCHLD it did not cause (its handler then
 * finds no child of its own to reap); a name longer than 1 KB stays raw.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int mc_keep_mangled;

#define CXXFILT "/usr/bin/c++filt"

static int looks_mangled(const char *s)
{
    if (s[0] != '_' || s[1] != 'Z' || !s[2]) return 0;
    for (; *s; s++) {
        char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$'))
            return 0;
    }
    return 1;
}

static int root_only(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* CXXFILT's real file when it and every directory above it are root's and writable by no one else */
static const char *trusted_tool(void)
{
    static char real[PATH_MAX];
    static int state;            /* 0 unknown, 1 trusted, -1 not */
    if (state) return state > 0 ? real : NULL;
    state = -1;
    struct stat st;
    if (!realpath(CXXFILT, real) || lstat(real, &st) != 0 || !S_ISREG(st.st_mode) || !root_only(real)) return NULL;
    char dir[PATH_MAX];
    strcpy(dir, real);
    for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
        if (slash == dir) { if (!root_only("/")) return NULL; break; }
        *slash = 0;
        if (!root_only(dir)) return NULL;
    }
    state = 1;
    return real;
}

/* c++filt's spelling of one mangled name into out; 0 when it gives none */
static int run_cxxfilt(const char *name, char *out, size_t n)
{
    const char *tool = trusted_tool();
    if (!tool) return 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return 0;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    sigset_t all;
    sigfillset(&all);
    posix_spawnattr_setsigdefault(&attr, &all);   /* the program's handlers are not the child's */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char *argv[] = {(char *)tool, (char *)name, NULL};
    char *envp[] = {"LC_ALL=C", NULL};
    pid_t pid;
    int ok = posix_spawn(&pid, tool, &fa, &attr, argv, envp) == 0;
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(p[1]);
    size_t len = 0;
    if (ok) {
        for (;;) {
            ssize_t k = read(p[0], out + len, n - 1 - len);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            len += (size_t)k;
            if (len == n - 1) break;
        }
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    }
    close(p[0]);
    out[len] = 0;
    char *nl = strchr(out, '\n');
    if (!nl) return 0;           /* no answer, or longer than the buffer */
    *nl = 0;
    return len > 0 && out[0] && strcmp(out, name) != 0;
}

#define CACHE 64
#define NAME_MAX_LEN 1024
static struct { char raw[NAME_MAX_LEN], spelled[NAME_MAX_LEN]; int ok; } cache[CACHE];
static int ncache, next_slot;

/* A demangled function name without the return type c++filt prints before a template function's name
 * ("void std::vector<int>::_M_realloc_insert<int const&>(...)" is std::vector<int>::_M_realloc_insert<int
 * const&>(...)): the qualified name and its parameters, as every other function is spelled. The return type is
 * what stands before the last space outside brackets ahead of the parameter list, when the name ends in its
 * template arguments ('>'); "(anonymous namespace)" is part of a name, and at "operator" the name has begun
 * (its symbol may hold brackets, "operator< <int>"). Any other name is returned as it is. */
const char *mc_skip_return_type(const char *s)
{
    if (!s) return s;
    int depth = 0;
    long space = -1, end = -1;
    for (long i = 0; s[i]; i++) {
        char c = s[i];
        if (depth == 0 && c == 'o' && strncmp(s + i, "operator", 8) == 0 && (i == 0 || s[i - 1] == ' ' || s[i - 1] == ':')) {
            return space >= 0 && s[i - 1] == ' ' && i - 1 == space ? s + space + 1 : s;
        }
        if (depth == 0 && c == '(') {
            if (strncmp(s + i, "(anonymous namespace)", 21) == 0) { i += 20; continue; }
            end = i;
            break;
        }
        if (c == '<' || c == '(' || c == '[' || c == '{') depth++;
        else if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) depth--;
        else if (c == ' ' && depth == 0) space = i;
    }
    return end > 0 && space >= 0 && s[end - 1] == '>' ? s + space + 1 : s;
}

/* A function's name for a report's `through F` and `in F`: spelled (mc_spell), without a return type */
const char *mc_spell_function(const char *name)
{
    return mc_skip_return_type(mc_spell(name));
}

const char *mc_spell(const char *name)
{
    if (mc_keep_mangled || !name || !looks_mangled(name) || strlen(name) >= NAME_MAX_LEN) return name;
    for (int i = 0; i < ncache; i++)
        if (strcmp(cache[i].raw, name) == 0) return cache[i].ok ? cache[i].spelled : name;
    int slot = next_slot;
    next_slot = (next_slot + 1) % CACHE;
    if (ncache < CACHE) ncache++;
    strcpy(cache[slot].raw, name);
    cache[slot].ok = run_cxxfilt(name, cache[slot].spelled, sizeof cache[slot].spelled);
    return cache[slot].ok ? cache[slot].spelled : name;
}
