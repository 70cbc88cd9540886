# Build and install memtrace (docs/install.md).
#   make                          builds the jar (Maven, through the launcher) and the files made from it
#   make install PREFIX=/opt/mt   installs (default PREFIX /usr/local; DESTDIR for staging)
#   make uninstall PREFIX=/opt/mt removes exactly what install put there
# Installed: PREFIX/bin/{memtrace,memtrace-cc,memtrace-c++}; PREFIX/lib/memtrace/ (the jar, the agent, the
# runtime libmemtrace-rt.so that programs built by memtrace cc load, the check runtime, the gcc wrapper, the launcher's scripts);
# a man page per command in PREFIX/share/man/man1; bash and zsh completion. The installed launcher needs a
# JDK 25 and the runtime libraries (libzydis4.0, libzstd), not Maven nor the sources.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
LIBDIR = $(DESTDIR)$(PREFIX)/lib/memtrace
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
# the jar to install; the default builds it (tests install one of their own)
JAR ?= target/memtrace.jar
GEN ?= target/install-files
JAVA = $(shell bash -c '. scripts/env.sh && memtrace_find_jdk && echo "$$JAVA_HOME/bin/java"')

PAGES = memtrace memtrace-run memtrace-analyze memtrace-print memtrace-cc memtrace-cachesim memtrace-convert \
        memtrace-report memtrace-skeleton memtrace-help
NATIVE = libmemtrace-agent.so libmemtrace-rt.so libmemtrace-check.so memtrace-cc-wrapper
SCRIPTS = env.sh cc-client.sh

all: $(GEN)/stamp

target/memtrace.jar: FORCE
	MEMTRACE_CDS=off ./memtrace --version >/dev/null

# man pages, completion and the native files, written from the jar (org.memtrace.cli.InstallFiles)
$(GEN)/stamp: $(JAR)
	rm -rf $(GEN) && mkdir -p $(GEN)
	"$(JAVA)" --enable-native-access=ALL-UNNAMED -cp $(JAR) org.memtrace.cli.InstallFiles $(GEN)
	touch $@

install: $(GEN)/stamp
	install -d $(BINDIR) $(LIBDIR) $(MANDIR) $(BASHDIR) $(ZSHDIR)
	install -m 644 $(JAR) $(LIBDIR)/memtrace.jar
	for f in $(NATIVE); do install -m 755 $(GEN)/lib/$$f $(LIBDIR)/$$f || exit 1; done
	for f in $(SCRIPTS); do install -m 644 scripts/$$f $(LIBDIR)/$$f || exit 1; done
	install -m 755 memtrace memtrace-cc memtrace-c++ $(BINDIR)/
	for p in $(PAGES); do install -m 644 $(GEN)/man/$$p.1 $(MANDIR)/$$p.1 || exit 1; done
	install -m 644 $(GEN)/bash/memtrace $(BASHDIR)/memtrace
	install -m 644 $(GEN)/zsh/_memtrace $(ZSHDIR)/_memtrace

uninstall:
	rm -f $(BINDIR)/memtrace $(BINDIR)/memtrace-cc $(BINDIR)/memtrace-c++
	rm -f $(LIBDIR)/memtrace.jar $(addprefix $(LIBDIR)/,$(NATIVE) $(SCRIPTS))
	-rmdir $(LIBDIR)
	rm -f $(addprefix $(MANDIR)/,$(addsuffix .1,$(PAGES)))
	rm -f $(BASHDIR)/memtrace $(ZSHDIR)/_memtrace

FORCE:
.PHONY: all install uninstall FORCE
