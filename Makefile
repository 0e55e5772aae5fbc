# cloister build. `make` builds build/cloister; see README.md for the rest.
PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
# NATIVE=0 builds without the native runtime (ns/, seccomp/, cgroups/, the
# bwrap front-end): only the docker and codeplane executors, for hosts that
# cannot run it; no libseccomp, libcap or libmnl needed (docs/executors.md).
NATIVE  ?= 1
ifeq ($(NATIVE),0)
PKGS    := jansson
else
PKGS    := jansson libcap libmnl libseccomp
endif
# libgit2: headers only; src/workspace/wsdl.c loads it (and libcrypto) on first use.
GIT2_CFLAGS := $(shell pkg-config --cflags libgit2 2>/dev/null)
# sqlite3: headers only; src/state/sqlite_dl.c loads the library on first use.
SQLITE_CFLAGS := $(shell pkg-config --cflags sqlite3 2>/dev/null)

B := build
# Warnings are errors for the toolchains this project is built and tested
# with (Debian 12's gcc 12 and clang 14: developers and CI, see
# tests/integration/matrix.sh); with any other compiler they stay warnings,
# so a newer compiler's new warning does not break someone's build.
# WERROR=-Werror or WERROR= overrides. Every opt-out is listed with its reason.
CC_ID := $(shell $(CC) --version 2>/dev/null | head -1)
WERROR ?= $(if $(or $(findstring Debian 12.,$(CC_ID)),$(findstring Debian clang version 14.,$(CC_ID))),-Werror)
WARN := -Wall -Wextra $(WERROR) -Wshadow -Wformat=2 -Wstrict-prototypes \
        -Wmissing-prototypes -Wno-unused-parameter
# -Wno-unused-parameter: function-table callbacks share one signature and
# not every backend needs every argument.
HARDEN := -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE -fno-strict-overflow
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=gnu17 $(WARN) $(HARDEN) $(CFLAGS) -I. -DCL_NATIVE=$(NATIVE) \
              $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(SQLITE_CFLAGS) $(GIT2_CFLAGS)
LDFLAGS ?=
ALL_LDFLAGS := -pie -Wl,-z,relro,-z,now $(LDFLAGS)
# jansson, libcap and libseccomp are linked statically when Debian ships the
# archive: every shared library costs the launch ~70 us in ld.so. libmnl has
# no archive in Debian and stays shared. STATIC_LIBS=0 links all shared.
STATIC_LIBS ?= 1
LIBDIR := $(shell $(CC) -print-multiarch 2>/dev/null | sed 's|^|/usr/lib/|')
ifeq ($(NATIVE),0)
JANSSON_STATIC := -Wl,-Bstatic -ljansson -Wl,-Bdynamic
LIBS := $(if $(and $(filter 1,$(STATIC_LIBS)),$(wildcard $(LIBDIR)/libjansson.a)),$(JANSSON_STATIC),-ljansson)
else ifeq ($(STATIC_LIBS)$(wildcard $(LIBDIR)/libjansson.a)$(wildcard $(LIBDIR)/libcap.a)$(wildcard $(LIBDIR)/libseccomp.a),1$(LIBDIR)/libjansson.a$(LIBDIR)/libcap.a$(LIBDIR)/libseccomp.a)
LIBS := -Wl,-Bstatic -ljansson -lcap -lseccomp -Wl,-Bdynamic -lmnl
else
LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -ljansson -lcap -lmnl -lseccomp)
endif

ifeq ($(NATIVE),0)
# The native-only front-ends (bwrap, the session commands, `cloister seccomp`)
# and capability names (libcap).
NATIVE_CLI := src/cli/bwrap/%.c src/cli/session_%.c src/cli/seccomp.c src/policy/caps.c
LIB_SRC := $(filter-out src/cli/main.c $(NATIVE_CLI),$(wildcard src/*/*.c src/cli/bwrap/*.c))
LIB_SRC := $(filter-out src/session/%.c,$(LIB_SRC))
else
LIB_SRC := $(filter-out src/cli/main.c,$(wildcard src/*/*.c src/cli/bwrap/*.c ns/*.c seccomp/*.c cgroups/*.c))
endif
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
# The default seccomp profile is compiled at build time (no compile and no
# cache at launch): the generator links the profile code and libseccomp,
# writes the programs as C arrays, and fails the build if they fail the
# profile's self-check.
GEN_BIN := $(B)/gen/default_bpf_gen
GEN_SRC := $(B)/gen/seccomp_default_bpf.c
GEN_OBJ := $(B)/gen/seccomp_default_bpf.o
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
HELPER_SRC := $(wildcard tests/helpers/*.c)
HELPER_BIN := $(HELPER_SRC:tests/helpers/%.c=$(B)/tests/%)
# The escape probes (tests/security/escape_suite.sh): one static binary,
# one named attack per argv, run inside sandboxes and on the bare host.
PROBE_SRC := $(wildcard tests/security/probes/*.c)
HELPER_BIN += $(B)/tests/escprobe
PRELOAD_SRC := $(wildcard tests/preload/*.c)
PRELOAD_BIN := $(PRELOAD_SRC:tests/preload/%.c=$(B)/tests/%.so)
BENCH_BIN := $(B)/bench/floor $(B)/bench/par $(B)/bench/tstamp $(B)/bench/getppid $(B)/bench/blast

.PHONY: all asan check-build check-asan soak fuzz fuzz-build lint layers check-valgrind mutate deps demo check check-unit check-vm bench bench-quick bench-record install clean
all: $(B)/cloister

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC  $<"; $(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(B)/libcore.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(GEN_BIN): seccomp/gen/default_bpf_gen.c $(B)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $< $(B)/libcore.a $(LIBS) -o $@

$(GEN_SRC): $(GEN_BIN)
	$(GEN_BIN) $@

$(GEN_OBJ): $(GEN_SRC) seccomp/default_bpf.h
	@echo "  CC  $<"; $(CC) $(ALL_CFLAGS) -c $< -o $@

# NATIVE=0 has no seccomp compiler and so no built-in programs.
$(B)/libcloister.a: $(LIB_OBJ) $(if $(filter 0,$(NATIVE)),,$(GEN_OBJ))
	@rm -f $@
	ar rcs $@ $^

$(B)/cloister: $(B)/src/cli/main.o $(B)/libcloister.a
	$(CC) $(ALL_LDFLAGS) $^ $(LIBS) -o $@

$(B)/tests/test_%: tests/unit/test_%.c tests/unit/unit.h $(B)/libcloister.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $< $(B)/libcloister.a $(LIBS) -o $@

# Helpers run inside sandboxes by the tests; static so they need nothing bound.
$(B)/tests/%: tests/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu17 -O2 -Wall $(WERROR) -I. -static $< -o $@

$(B)/tests/escprobe: $(PROBE_SRC) tests/security/probes/probe.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu17 -O2 -Wall -Wextra -Wno-unused-parameter $(WERROR) -static $(PROBE_SRC) -o $@

# LD_PRELOAD probes the tests put in front of cloister (tests/preload/).
$(B)/tests/%.so: tests/preload/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu17 -O2 -Wall $(WERROR) -fPIC -shared $< -o $@ -ldl

# `make asan`: build-asan/cloister with AddressSanitizer and UBSan, for the
# relay stress in tests/integration/asan.sh. Its own object tree (B); all
# libraries shared (STATIC_LIBS=0): ASan's runtime must come first and the
# static archives are not instrumented anyway. No leak check: the test
# looks for memory errors, and the supervisor exits without freeing.
# -Wno-format-truncation: with the sanitizers' instrumentation gcc 12
# reports arguments it cannot prove non-NULL as NULL (false positives in
# code that is warning-free in the normal build).
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
ASAN_MAKE = $(SUBMAKE) B=build-asan STATIC_LIBS=0 CFLAGS="-O2 -g $(ASAN_FLAGS) -Wno-format-truncation" \
		LDFLAGS="$(ASAN_FLAGS)"
asan:
	+@$(ASAN_MAKE) build-asan/cloister

# `make check-asan`: the whole suite (tests/run.sh, root and unprivileged
# passes) against build-asan/cloister and unit tests built with ASan and
# UBSan (CLOISTER_BUILD=build-asan; the helpers stay uninstrumented).
# A sanitizer report ends the process with exit code 86, which no test
# expects; leaks are not checked (the supervisor exits without freeing;
# make check-valgrind covers leaks in the unit tests). CHECK_ASAN=REGEX
# runs the suites whose path matches REGEX (tests/run.sh).
ASAN_RUN_OPTIONS := detect_leaks=0:halt_on_error=1:exitcode=86:detect_stack_use_after_return=0
check-asan: deps check-build
	@CLOISTER_BUILD=build-asan ASAN_OPTIONS=$(ASAN_RUN_OPTIONS) \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86 ./tests/run.sh $(if $(CHECK_ASAN)$(SUITES),'$(or $(SUITES),$(CHECK_ASAN))')

# `make fuzz`: one libFuzzer target per parser (tests/fuzz/fuzz_*.c), built
# with Debian's clang, ASan and UBSan into build-fuzz/ (its own object tree:
# every object carries the fuzzer's coverage instrumentation). UBSan does
# not recover: undefined behaviour is a crash the fuzzer reports.
# tests/fuzz/run.sh replays the committed corpus and regression inputs,
# then fuzzes each target for FUZZ_SECONDS (default 60).
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 60
build-fuzz/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h build-fuzz/libcloister.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $(ALL_LDFLAGS) $< build-fuzz/libcloister.a $(LIBS) -o $@
fuzz-build:
	+@$(SUBMAKE) B=build-fuzz CC=$(FUZZ_CC) STATIC_LIBS=0 \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN)" LDFLAGS="$(FUZZ_SAN)" \
		$(FUZZ_TARGETS:%=build-fuzz/fuzz/%)
fuzz: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) ./tests/fuzz/run.sh $(FUZZ)

# `make lint`: cppcheck and clang-tidy over the product's sources, clean
# with the committed configuration (.clang-tidy, tests/lint/).
lint:
	@./tests/lint/lint.sh

# `make layers`: every #include points down a layer or sideways within its
# folder, no folder cycle (tests/lint/layers.py; docs/architecture.md);
# the self-test first shows it catches a planted upward include. Part of lint.
layers:
	@./tests/lint/layers_selftest.sh
	@./tests/lint/layers.py && echo "layers: clean"

# `make check-valgrind`: every unit test under valgrind's memcheck: no
# invalid access, no uninitialised use, no leak (definite, indirect or
# possible); any finding fails (tests/lint/valgrind.sh).
check-valgrind: $(UNIT_BIN)
	@./tests/lint/valgrind.sh $(UNIT_BIN)

# `make soak`: SOAK_RUNS (default 500) launches broken on purpose: SIGKILL
# at random points, strace-injected SIGKILLs and syscall errors; nothing
# may be left behind (tests/soak/soak.sh). Then as many sandbox-mode runs
# broken the same way, after which the state database must be whole and
# every row final (tests/soak/soak_sandbox.sh). make check runs short ones
# (tests/integration/soak.sh).
SOAK_RUNS ?= 500
soak: all
	@SOAK_RUNS=$(SOAK_RUNS) ./tests/soak/soak.sh
	@SOAK_RUNS=$(SOAK_RUNS) ./tests/soak/soak_sandbox.sh

# Bench programs: floor and par are linked like cloister (PIE, dynamic) so
# the floor pays the same loader cost; getppid and blast run inside
# sandboxes: static.
$(B)/bench/getppid $(B)/bench/blast: $(B)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu17 -O2 -Wall $(WERROR) -I. -static $< -o $@
$(B)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $< -o $@

# Packages come first and the build runs in a sub-make: on a fresh machine
# the compiler flags and libraries above can only be found once the -dev
# packages are installed. As non-root, deps.sh names what is missing.
SUBMAKE := $(MAKE) --no-print-directory

# Build and test packages, including the cgroup v2 guest's (make check
# boots it).
deps:
	@./tests/deps.sh install --vm

demo:
	@./tests/deps.sh install
	@$(SUBMAKE) all
	./tests/demo.sh

# `make check-build`: everything make check and check-asan run, built
# once (.ci/run times it as its own stage; both checks then find it current).
# The bench programs are in it: tests/integration/bench_harness.sh runs
# bench/run.sh, as root and as the test user, on a copy of build/.
check-build: deps
	+@$(SUBMAKE) all $(UNIT_BIN) $(HELPER_BIN) $(PRELOAD_BIN) $(BENCH_BIN)
	+@$(ASAN_MAKE) build-asan/cloister $(UNIT_SRC:tests/unit/%.c=build-asan/tests/%)

# `make check SUITES=REGEX`: only the suites (and unit tests) whose path
# matches, root and user passes; packages and builds are only checked, and
# rebuilt when out of date (docs/testing.md).
check: deps check-build
	@./tests/run.sh $(if $(SUITES),'$(SUITES)')

check-unit: all $(UNIT_BIN)
	@./tests/run.sh --unit-only

check-vm: all $(UNIT_BIN) $(HELPER_BIN)
	@./tests/vm/check-v2.sh

# Not part of check: breaks each security-critical line of
# tests/mutate/mutations.tsv in turn and shows which test catches it.
mutate: deps
	@$(SUBMAKE) all $(UNIT_BIN) $(HELPER_BIN)
	@./tests/mutate/mutate.py $(MUTATE)

bench:
	@./tests/deps.sh install --bench
	@$(SUBMAKE) all $(BENCH_BIN)
	@./bench/run.sh

bench-quick:
	@./tests/deps.sh install --bench
	@$(SUBMAKE) all $(BENCH_BIN)
	@./bench/run.sh --quick

# Writes the last full report into the committed files, on purpose.
bench-record:
	@./bench/record.sh

install: $(B)/cloister
	install -D -m 0755 $(B)/cloister $(DESTDIR)$(PREFIX)/bin/cloister
	install -D -m 0644 docs/cloister.1 $(DESTDIR)$(PREFIX)/share/man/man1/cloister.1
	@# The bwrap entry is a hard link, not a symlink: clients that resolve
	@# `bwrap` to its real path (Codex) must still find a program named
	@# bwrap. Put $(PREFIX)/libexec/cloister first in PATH to use it.
	install -d $(DESTDIR)$(PREFIX)/libexec/cloister
	ln -f $(DESTDIR)$(PREFIX)/bin/cloister $(DESTDIR)$(PREFIX)/libexec/cloister/bwrap 2>/dev/null || \
		install -m 0755 $(B)/cloister $(DESTDIR)$(PREFIX)/libexec/cloister/bwrap

clean:
	rm -rf $(B) build-asan build-fuzz

-include $(shell find $(B) -path $(B)/matrix -prune -o -name '*.d' -print 2>/dev/null)
