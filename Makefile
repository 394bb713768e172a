# SPDX-License-Identifier: GPL-3.0-or-later
# lieflow — build, test, demo, bench, install.
# Plain `make` builds and installs nothing on the system. `make deps` installs the missing Debian
# packages (as root: apt-get; otherwise it prints the apt-get command); `make demo` and `make test`
# do that first for what they need.

PREFIX   ?= /usr/local
CC       ?= cc
CXX      ?= g++
# The one source of the version: the headers (lieflow_version.h), lf_version(), `lieflow -v`,
# lf.version / lf._VERSION, the man page, the .pc files and the rockspec are made from VERSION.
VERSION  := $(shell cat VERSION)
VERSION_MAJOR := $(word 1,$(subst ., ,$(VERSION)))
VERSION_MINOR := $(word 2,$(subst ., ,$(VERSION)))
VERSION_PATCH := $(word 3,$(subst ., ,$(VERSION)))

# Debian packages, by use. build: to compile lieflow; run: at run time (gnuplot: plots; libjs-three:
# the 3-D pages of traj:animate; both optional);
# test: to run `make test`; optional: features built when their library is there (lieflow.mpi:
# OpenMPI; HDF5 output: libhdf5), each skipped with one line otherwise.
DEPS_BUILD := liblua5.4-dev libreadline-dev libgsl-dev pkg-config
DEPS_RUN   := gnuplot-nox libjs-three
DEPS_TEST  := lua5.4 lua-busted libcmocka-dev tmux groff-base g++ luarocks hdf5-tools
DEPS_OPT   := libopenmpi-dev openmpi-bin libhdf5-dev

B        := build
# WITHOUT_OPTIONAL=1: build and test as if OpenMPI, HDF5 and gnuplot were not installed (make
# test-minimal): the optional modules are not built and their tests say they are skipped.
NO_MPI   ?= $(WITHOUT_OPTIONAL)
NO_HDF5  ?= $(WITHOUT_OPTIONAL)
ifneq ($(WITHOUT_OPTIONAL),)
export LIEFLOW_GNUPLOT := /nonexistent/gnuplot
endif
LUA_INC  := $(shell pkg-config --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
LUA_LIBS := $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)
HDF5     := $(if $(NO_HDF5),,$(shell pkg-config --exists hdf5 2>/dev/null && echo yes))
HDF5_CFLAGS := $(if $(HDF5),-DLF_HAVE_HDF5 $(shell pkg-config --cflags hdf5))
HDF5_LIBS := $(if $(HDF5),$(shell pkg-config --libs hdf5))
WARN     := -Wall -Wextra -Wshadow
CFLAGS   ?= -O3 -g

CORE_INC := -Icore -I$(B)/gen
# -fvisibility=hidden: the libraries export only what the public headers declare (core/base/export.h)
ALLCFLAGS = -std=c11 -D_DEFAULT_SOURCE -fno-math-errno -fno-trapping-math $(WARN) $(CFLAGS) -fPIC -fvisibility=hidden $(CORE_INC)
GSL_LIBS := -lgsl -lgslcblas -lm -pthread -ldl

CORE_SRC := $(sort $(wildcard core/*/*.c))
# the text of core/graph/stumpff.h as a C string: generated model code carries it (graph_codegen.c)
STUMPFF_GEN := $(B)/gen/stumpff_source.c
CORE_OBJ := $(CORE_SRC:core/%.c=$(B)/core/%.o) $(B)/gen/stumpff_source.o
# the executable's own files (lua.c's structure, the REPL, module search): not in the binding
EXE_SRC  := lua/main.c lua/repl.c lua/complete.c lua/modules.c
BIND_SRC := $(sort $(filter-out $(EXE_SRC) lua/lmpi.c,$(wildcard lua/*.c)))
BIND_OBJ := $(BIND_SRC:lua/%.c=$(B)/lua/%.o)
CTEST_SRC := $(sort $(wildcard tests/c/test_*.c))
CTEST_BIN := $(CTEST_SRC:tests/c/%.c=$(B)/tests/%)
VERSION_H := $(B)/gen/base/lieflow_version.h
HEADERS  := $(wildcard core/*.h core/*/*.h core/*/*.def lua/*.h) $(VERSION_H)
# headers for method authors and internals (*_internal.h) are not installed
PUBLIC_HEADERS := $(filter-out %_internal.h,$(wildcard core/*.h core/*/*.h)) lua/lieflow_lua.h $(VERSION_H)

# The pure-Lua modules, compiled into the executable as source (build/gen/lieflow_scripts.c).
GEN      := $(B)/gen
# the Lua modules compiled into the executable: the scripts, and the reference (docs/api.md) as
# the module lieflow.apidoc for help()
APIDOC   := $(GEN)/apidoc.lua
SCRIPTS  := $(sort $(wildcard scripts/lieflow/*.lua)) $(APIDOC)
SCRIPTS_OBJ := $(GEN)/lieflow_scripts.o

LIB_A    := $(B)/liblieflow.a
# shared libraries: liblieflow.so.MAJOR.MINOR.PATCH with the SONAME liblieflow.so.MAJOR, and the
# links liblieflow.so.MAJOR and liblieflow.so (the same for liblieflow_lua)
SONAME   := liblieflow.so.$(VERSION_MAJOR)
LIB_SO   := $(B)/liblieflow.so
LIB_SO_REAL := $(B)/liblieflow.so.$(VERSION)
# the Lua binding as a library, for C programs that host Lua (luaopen_lieflow: the whole module with
# its pure-Lua layer built in, luaopen_lieflow_core; pkg-config lieflow-lua)
BIND_A   := $(B)/liblieflow_lua.a
BIND_SONAME := liblieflow_lua.so.$(VERSION_MAJOR)
BIND_SO  := $(B)/liblieflow_lua.so
BIND_SO_REAL := $(B)/liblieflow_lua.so.$(VERSION)
MAN      := $(B)/lieflow.1
MOD_SO   := $(B)/lua/lieflow/core.so
MPI_SO   := $(B)/lua/lieflow/mpi.so
EXE      := $(B)/lieflow
EMBED    := $(B)/embed_host

.PHONY: FORCE all rockspec rock rock-install test-abi test-version test-rock deps deps-build deps-run deps-test deps-opt test test-run test-minimal demo-run test-c test-lua test-repl test-compat test-standalone test-embed test-examples test-mpi \
        test-install test-license test-view test-fuzz demo bench install clean asan asan-build valgrind valgrind-deps valgrind-examples fuzz \
        fuzz-c fuzz-c-build \
        fuzz-c-corpus fuzz-c-deps
.DEFAULT_GOAL := all

all: $(LIB_A) $(LIB_SO) $(BIND_A) $(BIND_SO) $(MOD_SO) $(EXE) $(EMBED) $(MPI_SO) $(MAN)
	@$(if $(HDF5),true,echo "lieflow: HDF5 (libhdf5-dev) not found$(if $(NO_HDF5), or switched off): built without HDF5 output")

# ---------------------------------------------------------------- system packages
# `make deps` installs every set; deps-build, deps-run, deps-test, deps-opt one set each. As root
# with apt-get; otherwise the command to run is printed. (A machine without dpkg: nothing checked.)
define install_missing
@command -v dpkg >/dev/null || { echo "lieflow: no dpkg: install these (or your system's equivalents) yourself: $(1)"; exit 0; }; \
missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
if [ -n "$$missing" ]; then \
  if [ "$$(id -u)" = 0 ]; then \
    echo "lieflow: installing missing Debian packages:$$missing"; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing || exit 1; \
  else \
    echo "lieflow: missing Debian packages. Run:"; \
    echo "  sudo apt-get update && sudo apt-get install -y$$missing"; exit 1; \
  fi; \
fi
endef
deps: deps-build deps-run deps-test deps-opt
deps-build:
	$(call install_missing,$(DEPS_BUILD))
deps-run:
	$(call install_missing,$(DEPS_RUN))
deps-test:
	$(call install_missing,$(DEPS_TEST))
deps-opt:
	$(call install_missing,$(DEPS_OPT))

# ---------------------------------------------------------------- objects
$(B)/core/%.o: core/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -c $< -o $@

$(B)/lua/%.o: lua/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(LUA_INC) -Ilua -c $< -o $@

$(LIB_A): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SO_REAL): $(CORE_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -o $@ $^ $(GSL_LIBS) $(LDFLAGS)
$(LIB_SO): $(LIB_SO_REAL)
	@ln -sf $(notdir $<) $(B)/$(SONAME) && ln -sf $(SONAME) $@

# the binding carries the pure-Lua layer (build/gen/lieflow_scripts.o: luaopen_lieflow, lua/lembed.c)
$(BIND_A): $(BIND_OBJ) $(SCRIPTS_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Lua symbols come from the host program (-llua5.4), the core from liblieflow.so, found beside
# liblieflow_lua.so (RUNPATH $ORIGIN): a host that calls only luaopen_lieflow does not list
# liblieflow.so itself when the linker drops unused libraries (--as-needed), and a program's own
# RUNPATH does not apply to the dependencies of its libraries.
$(BIND_SO_REAL): $(BIND_OBJ) $(SCRIPTS_OBJ) $(LIB_SO)
	$(CC) -shared -Wl,-soname,$(BIND_SONAME) -Wl,-rpath,'$$ORIGIN' -o $@ $(BIND_OBJ) $(SCRIPTS_OBJ) -L$(B) -llieflow $(HDF5_LIBS) $(GSL_LIBS) $(LDFLAGS)
$(BIND_SO): $(BIND_SO_REAL)
	@ln -sf $(notdir $<) $(B)/$(BIND_SONAME) && ln -sf $(BIND_SONAME) $@

# The Lua C module: resolves Lua symbols from the host (lua5.4 or lieflow, which exports them);
# the core is linked in and hidden (--exclude-libs): it exports the luaopen_ functions only.
$(MOD_SO): $(BIND_OBJ) $(SCRIPTS_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,--exclude-libs,ALL -o $@ $(BIND_OBJ) $(SCRIPTS_OBJ) $(LIB_A) $(HDF5_LIBS) $(GSL_LIBS) $(LDFLAGS)

# The executable links the binding statically and exports the Lua API for other C modules.
$(EXE): $(EXE_SRC:lua/%.c=$(B)/lua/%.o) $(SCRIPTS_OBJ) $(BIND_OBJ) $(LIB_A)
	$(CC) -o $@ $^ -Wl,-E $(LUA_LIBS) -lreadline $(HDF5_LIBS) $(GSL_LIBS) -ldl $(LDFLAGS)

# lieflow.mpi (lf.ensemble under mpirun): built when OpenMPI's development files are installed
# (decided when the rule runs, so that a `make` that has just installed them builds it).
$(MPI_SO): lua/lmpi.c
	@mkdir -p $(dir $@)
	@if [ -z "$(NO_MPI)" ] && pkg-config --exists ompi-c 2>/dev/null; then \
	  echo "$(CC) ... -shared -o $@ lua/lmpi.c $$(pkg-config --libs ompi-c)"; \
	  $(CC) -std=c11 -D_DEFAULT_SOURCE $(WARN) $(CFLAGS) -fPIC $(LUA_INC) $$(pkg-config --cflags ompi-c) \
	    -shared -o $@ lua/lmpi.c $$(pkg-config --libs ompi-c) -ldl; \
	else rm -f $@; echo "lieflow: OpenMPI (libopenmpi-dev) not found$(if $(NO_MPI), or switched off): lieflow.mpi not built"; fi

# scripts/lieflow/NAME.lua becomes the module lieflow.NAME (init.lua: lieflow), chunk name
# "=lieflow/NAME.lua". Regenerated when a script changes, or is added or removed (scripts.list).
$(GEN)/scripts.list: FORCE
	@mkdir -p $(GEN); echo '$(SCRIPTS)' | cmp -s - $@ || echo '$(SCRIPTS)' > $@
$(GEN)/lieflow_scripts.c: $(SCRIPTS) $(GEN)/scripts.list
	@mkdir -p $(GEN)
	@echo "embedding $(words $(SCRIPTS)) Lua modules into $@"
	@set -e; { \
	  echo '/* Generated by the Makefile from scripts/lieflow/NAME.lua: do not edit. */'; \
	  echo '#include <stddef.h>'; \
	  i=0; for f in $(SCRIPTS); do \
	    echo "static const unsigned char s$$i[] = {"; \
	    od -An -v -tx1 "$$f" | sed -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	    echo '0};'; i=$$((i + 1)); \
	  done; \
	  echo 'const int lf_script_count = $(words $(SCRIPTS));'; \
	  echo 'const char *const lf_script_module[] = {'; \
	  for f in $(SCRIPTS); do b=$$(basename "$$f" .lua); \
	    if [ "$$b" = init ]; then echo '"lieflow",'; else echo "\"lieflow.$$b\","; fi; done; \
	  echo '};'; \
	  echo 'const char *const lf_script_chunk[] = {'; \
	  for f in $(SCRIPTS); do echo "\"=lieflow/$$(basename "$$f")\","; done; \
	  echo '};'; \
	  echo 'const unsigned char *const lf_script_source[] = {'; \
	  i=0; for f in $(SCRIPTS); do echo "s$$i,"; i=$$((i + 1)); done; \
	  echo '};'; \
	  echo 'const size_t lf_script_size[] = {'; \
	  i=0; for f in $(SCRIPTS); do echo "sizeof s$$i - 1,"; i=$$((i + 1)); done; \
	  echo '};'; \
	} > $@.tmp && mv $@.tmp $@
$(STUMPFF_GEN): core/graph/stumpff.h
	@mkdir -p $(dir $@)
	@{ echo '/* Generated by the Makefile from core/graph/stumpff.h: do not edit. */'; \
	   echo 'const char lf_stumpff_source[] = {'; od -An -v -tx1 $< | sed -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	   echo '0};'; } > $@.tmp && mv $@.tmp $@
$(B)/gen/stumpff_source.o: $(STUMPFF_GEN)
	$(CC) $(ALLCFLAGS) -c $< -o $@
$(APIDOC): docs/api.md
	@mkdir -p $(GEN)
	@{ echo '-- Generated by the Makefile from docs/api.md: the text help() shows.'; \
	   echo 'return [=====['; cat docs/api.md; echo ']=====]'; } > $@.tmp && mv $@.tmp $@
$(SCRIPTS_OBJ): $(GEN)/lieflow_scripts.c
	$(CC) $(ALLCFLAGS) -c $< -o $@

# The version, from VERSION: the header every public header's LIEFLOW_VERSION comes from, the man page.
$(VERSION_H): VERSION
	@mkdir -p $(dir $@)
	@{ echo '/* SPDX-License-Identifier: GPL-3.0-or-later */'; \
	   echo '/* lieflow — the version of these headers. Generated by the Makefile from VERSION: do not edit. */'; \
	   echo '#ifndef LIEFLOW_VERSION_H'; echo '#define LIEFLOW_VERSION_H'; \
	   echo '#define LIEFLOW_VERSION "$(VERSION)"'; echo '#define LIEFLOW_VERSION_MAJOR $(VERSION_MAJOR)'; \
	   echo '#define LIEFLOW_VERSION_MINOR $(VERSION_MINOR)'; echo '#define LIEFLOW_VERSION_PATCH $(VERSION_PATCH)'; \
	   echo '#endif'; } > $@.tmp && mv $@.tmp $@
$(MAN): docs/lieflow.1 VERSION
	@sed -e 's/@VERSION@/$(VERSION)/g' $< > $@.tmp && mv $@.tmp $@
# HDF5 on or off: lhdf5.o is rebuilt when that changes (as scripts.list does for the scripts)
$(GEN)/config.txt: FORCE
	@mkdir -p $(GEN); echo 'HDF5=$(HDF5)' | cmp -s - $@ || echo 'HDF5=$(HDF5)' > $@
$(B)/lua/lhdf5.o: ALLCFLAGS += $(HDF5_CFLAGS)
$(B)/lua/lhdf5.o: $(GEN)/config.txt

# the public headers as `make install` puts them (PREFIX/include/lieflow/): host.c includes
# <lieflow/lieflow.h> as a client does, without the source tree's include paths
STAGED_INC := $(B)/include
$(STAGED_INC)/lieflow/.stamp: $(PUBLIC_HEADERS)
	@rm -rf $(STAGED_INC)/lieflow && mkdir -p $(STAGED_INC)/lieflow
	@for h in $(PUBLIC_HEADERS); do sed -e 's|^\(#include "\)[a-z]*/\([a-z_0-9]*\.h"\)|\1\2|' $$h > $(STAGED_INC)/lieflow/$${h##*/}; done
	@touch $@
$(EMBED): examples/embed/host.c $(BIND_OBJ) $(SCRIPTS_OBJ) $(LIB_A) $(HEADERS) $(STAGED_INC)/lieflow/.stamp
	$(CC) $(filter-out $(CORE_INC),$(ALLCFLAGS)) $(LUA_INC) -I$(STAGED_INC) -o $@ $< $(BIND_OBJ) $(SCRIPTS_OBJ) $(LIB_A) $(LUA_LIBS) $(HDF5_LIBS) $(GSL_LIBS) -ldl $(LDFLAGS)

$(B)/tests/%: tests/c/%.c tests/c/problems.h tests/c/testutil.h tests/c/orderfit.h $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -Itests/c -o $@ $< $(LIB_A) $(TEST_LIBS) -lcmocka $(GSL_LIBS) $(LDFLAGS) $(TEST_LDFLAGS)

# the compiler generated model code is compiled with by default (core/graph/jit.c; LIEFLOW_CC overrides)
$(B)/core/native/jit.o: ALLCFLAGS += -DLF_BUILD_CC='"$(CC)"'
# quad-precision references (libquadmath, part of gcc)
$(B)/tests/test_stumpff: TEST_LIBS = -lquadmath

# count heap allocations during steps
$(B)/tests/test_noalloc: TEST_LDFLAGS = -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
# make every allocation fail, GSL's own included (GSL linked statically, so that --wrap reaches it)
$(B)/tests/test_gsl_nomem: TEST_LIBS = -Wl,-Bstatic -lgsl -lgslcblas -Wl,-Bdynamic
$(B)/tests/test_gsl_nomem: TEST_LDFLAGS = -Wl,--wrap=malloc -Wl,--wrap=calloc

# ---------------------------------------------------------------- tests
# (';;' is Lua's default path: the system's modules, busted's included; LIEFLOW_EXE: the executable
# of this build, for the specs that run it, unless already set)
LUA_ENV := LUA_PATH="$(CURDIR)/scripts/?.lua;$(CURDIR)/scripts/?/init.lua;$(CURDIR)/tests/lua/?.lua;;" \
           LUA_CPATH="$(CURDIR)/$(B)/lua/?.so;;" LIEFLOW_EXE="$${LIEFLOW_EXE:-$(CURDIR)/$(EXE)}" \
           LIEFLOW_BUILD="$(CURDIR)/$(B)"

# Every suite runs (also after a failure); the last line sums up what passed (tests/run_suites.sh).
SUITES := test-c test-lua test-tape test-repl test-compat test-standalone test-embed test-examples test-mpi test-fuzz \
          test-install test-structure test-view test-license test-version test-abi test-rock
# `make test` installs what the tests need (make deps), then builds and runs every suite in a new
# make (so that what was just installed is seen: pkg-config, HDF5); `make test-minimal` does the
# same in build-minimal/ as if OpenMPI, HDF5 and gnuplot were absent (WITHOUT_OPTIONAL=1).
test: deps
	@$(MAKE) --no-print-directory test-run
test-minimal: deps-build deps-test
	@$(MAKE) --no-print-directory B=build-minimal WITHOUT_OPTIONAL=1 test-run
test-run: all $(CTEST_BIN)
	@bash tests/run_suites.sh $(B)/test-logs "$(MAKE)" $(SUITES)

test-c: $(CTEST_BIN)
	@set -e; for t in $(CTEST_BIN); do echo "== $$t"; $$t; done

test-lua: $(MOD_SO)
	$(LUA_ENV) lua5.4 /usr/bin/busted --lua=lua5.4 -o utfTerminal tests/lua

# As on a machine without a C compiler at run time: the Lua specs and every example with
# LIEFLOW_CC=/nonexistent and an empty code cache, so that every compiled model runs on the tape.
test-tape: $(MOD_SO) $(EXE)
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; export LIEFLOW_CC=/nonexistent XDG_CACHE_HOME="$$d"; \
	$(LUA_ENV) lua5.4 /usr/bin/busted --lua=lua5.4 -o utfTerminal tests/lua; \
	for f in $(wildcard examples/*.lua); do echo "== $$f --quick (tape)"; $(EXE) $$f --quick; done; \
	if ls "$$d"/lieflow/*.so >/dev/null 2>&1; then echo "test-tape: a shared object was compiled"; exit 1; fi; \
	echo "test-tape: every compiled model ran on the tape"

test-repl: $(EXE)
	bash tests/repl_test.sh $(EXE)

test-compat: $(EXE)
	bash tests/lua_compat_test.sh $(EXE)

test-standalone: $(EXE)
	bash tests/standalone_test.sh $(EXE)

# the host of examples/embed/host.c, from an empty directory with LUA_PATH and LUA_CPATH empty: the
# whole module (lf.run, JSON) comes from the library
test-embed: $(EMBED)
	@d=$$(mktemp -d) && cp $(EMBED) "$$d/" && cd "$$d" && env LUA_PATH= LUA_CPATH= LUA_INIT= ./$(notdir $(EMBED)); \
	  st=$$?; rm -rf "$$d"; exit $$st

test-examples: $(EXE)
	@set -e; for f in $(wildcard examples/*.lua); do echo "== $$f --quick"; $(EXE) $$f --quick; done

# lf.ensemble under mpirun (skipped when mpirun or lieflow.mpi is missing)
test-mpi: $(EXE)
	bash tests/mpi_test.sh $(EXE)

test-install: all
	bash tests/install_test.sh

# the views (traj:animate, write_gltf) in headless Chromium and the glTF validator (tests/view/run.sh)
test-view: $(EXE)
	bash tests/view/run.sh $(EXE)

# no function over 120 lines in core/, lua/ and scripts/lieflow/ but those of tests/structure_allow.txt;
# the Lua binding's libraries call no other library, and lua/ has no cycle (tests/binding_layers.lua)
test-structure:
	bash tests/structure_check.sh
	lua5.4 tests/binding_layers.lua lua

# one source of the version (tests/version_check.sh); SONAMEs, exported symbols, C++ (tests/abi_check.sh);
# the rockspec with luarocks into a temporary tree (tests/rock_test.sh)
test-version: all
	bash tests/version_check.sh $(B)
test-abi: all
	bash tests/abi_check.sh $(B)
test-rock: all
	bash tests/rock_test.sh

# LICENSE is the GPL-3 and every source file has its SPDX line (tests/license_check.sh)
test-license:
	bash tests/license_check.sh

# the Lua API fuzzer, a short deterministic run (fixed seeds and call counts): tests/fuzz/fuzz.lua
# and the C API fuzzer's target built by gcc (no clang needed): its corpus replayed, then 20000
# reproducible pseudo-random inputs
FUZZ_REPLAY := $(B)/fuzz_capi_replay
$(FUZZ_REPLAY): tests/fuzz/fuzz_capi.c $(LIB_A) $(HEADERS)
	$(CC) $(ALLCFLAGS) -DLF_FUZZ_REPLAY -o $@ $< $(LIB_A) $(GSL_LIBS)
test-fuzz: $(EXE) $(FUZZ_REPLAY)
	bash tests/fuzz/run.sh $(EXE) smoke
	$(FUZZ_REPLAY) tests/fuzz/corpus_c/*
	$(FUZZ_REPLAY) --random 20000 1

demo: deps-build deps-run
	@$(MAKE) --no-print-directory demo-run
demo-run: all
	$(EXE) examples/stress_test.lua

BENCH_STEPPERS := $(B)/bench_steppers
$(BENCH_STEPPERS): bench/steppers.c $(LIB_A) $(HEADERS)
	$(CC) $(ALLCFLAGS) -o $@ $< $(LIB_A) $(GSL_LIBS)

BENCH_LANES := $(B)/bench_lanes
$(BENCH_LANES): bench/lanes.c $(LIB_A) $(HEADERS)
	$(CC) $(ALLCFLAGS) -o $@ $< $(LIB_A) $(GSL_LIBS)

bench: all $(BENCH_STEPPERS) $(BENCH_LANES)
	$(BENCH_STEPPERS)
	$(BENCH_LANES)
	$(EXE) bench/methods.lua
	$(EXE) bench/spheres.lua
	$(EXE) bench/ensemble.lua
	$(EXE) bench/compile.lua

# ---------------------------------------------------------------- sanitizers and fuzzing
# `make asan`: library, binding and executable built with AddressSanitizer + UBSan (every UB report
# is fatal) in build-asan/, then the C tests, the Lua specs (run by the sanitized executable, which
# links the binding statically), the examples --quick and the fuzz smoke run. Part of .ci/run.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ASAN_B    := build-asan
ASAN_ENV  := ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
asan-build:
	@$(MAKE) --no-print-directory B=$(ASAN_B) CFLAGS="-O1 -g $(SAN_FLAGS)" LDFLAGS="$(SAN_FLAGS)" \
	  $(ASAN_B)/lieflow $(ASAN_B)/lua/lieflow/core.so $(CTEST_SRC:tests/c/%.c=$(ASAN_B)/tests/%)

asan: asan-build
	@set -e; for t in $(CTEST_SRC:tests/c/%.c=$(ASAN_B)/tests/%); do echo "== $$t"; $(ASAN_ENV) $$t >/dev/null; done
	$(LUA_ENV) LIEFLOW_EXE=$(CURDIR)/$(ASAN_B)/lieflow $(ASAN_ENV) $(ASAN_B)/lieflow /usr/bin/busted -o utfTerminal tests/lua
	@set -e; for f in $(wildcard examples/*.lua); do echo "== asan $$f --quick"; $(ASAN_ENV) $(ASAN_B)/lieflow $$f --quick >/dev/null; done
	bash tests/fuzz/run.sh $(ASAN_B)/lieflow smoke

# `make fuzz SECONDS=n [SEED=s] [ONLY=api|graph|files|cache]`: the Lua-level fuzzers for n seconds
# (default 60), seed after seed (tests/fuzz/run.sh: half to the API fuzzer, a sixth to each other one).
FUZZ_SECONDS = $(if $(SECONDS),$(SECONDS),60)
fuzz: $(EXE)
	FUZZ_ONLY=$(ONLY) bash tests/fuzz/run.sh $(EXE) $(FUZZ_SECONDS) $(if $(SEED),$(SEED),1)

# `make fuzz-c SECONDS=n`: libFuzzer over the C API (tests/fuzz/fuzz_capi.c) with ASan + UBSan,
# clang from Debian (package clang); the corpus in tests/fuzz/corpus_c grows in build-fuzz/corpus.
FUZZ_B     := build-fuzz
FUZZ_CC    := clang
FUZZ_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -Wno-pass-failed
# clang for libFuzzer: installed like the other packages (as root), else the command is printed
fuzz-c-deps:
	@command -v $(FUZZ_CC) >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang; \
	else echo "make fuzz-c needs clang: sudo apt-get install -y clang"; exit 1; fi
fuzz-c-build: $(FUZZ_B)/fuzz_capi
$(FUZZ_B)/fuzz_capi: tests/fuzz/fuzz_capi.c $(CORE_SRC) $(STUMPFF_GEN) $(HEADERS)
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz-c needs clang (apt-get install clang)"; exit 1; }
	@mkdir -p $(FUZZ_B)
	$(FUZZ_CC) -std=c11 -D_DEFAULT_SOURCE $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer $(CORE_INC) -o $@ \
	  tests/fuzz/fuzz_capi.c $(CORE_SRC) $(STUMPFF_GEN) $(GSL_LIBS)
fuzz-c: $(FUZZ_B)/fuzz_capi
	@mkdir -p $(FUZZ_B)/corpus
	$(FUZZ_B)/fuzz_capi -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_B)/ \
	  $(FUZZ_B)/corpus tests/fuzz/corpus_c
# replay the checked-in corpus only (a regression test, seconds)
fuzz-c-corpus: $(FUZZ_B)/fuzz_capi
	$(FUZZ_B)/fuzz_capi -runs=0 tests/fuzz/corpus_c

valgrind: $(CTEST_BIN) valgrind-deps
	@set -e; for t in $(CTEST_BIN); do valgrind -q --error-exitcode=1 --leak-check=full $$t; done

# valgrind from Debian, installed like the other packages (as root), else the command is printed
valgrind-deps:
	@command -v valgrind >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind; \
	else echo "make valgrind needs valgrind: sudo apt-get install -y valgrind"; exit 1; fi

# the examples with compiled models (native and tape) under valgrind, with a fresh code cache
valgrind-examples: $(EXE) valgrind-deps
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; for f in examples/lua_models.lua examples/tour.lua; do \
	  echo "== valgrind $$f --quick"; XDG_CACHE_HOME="$$d" valgrind -q --error-exitcode=1 $(EXE) $$f --quick > /dev/null; done; \
	echo "valgrind-examples: clean"

# ---------------------------------------------------------------- the rockspec (luarocks)
# lieflow-VERSION-1.rockspec is made from lieflow.rockspec.in (kept in the tree: `luarocks make` in a
# checkout reads it; tests/version_check.sh fails when it is stale). luarocks runs `make rock` and
# `make rock-install LUADIR=... LIBDIR=...` (the rocks tree's share/lua/5.4 and lib/lua/5.4).
ROCKSPEC := lieflow-$(VERSION)-1.rockspec
rockspec: $(ROCKSPEC)
$(ROCKSPEC): lieflow.rockspec.in VERSION
	rm -f lieflow-*.rockspec
	sed -e 's/@VERSION@/$(VERSION)/g' $< > $@
rock: $(MOD_SO) $(MPI_SO) $(APIDOC)
rock-install: rock
	install -d $(LIBDIR)/lieflow $(LUADIR)/lieflow
	install -m 755 $(MOD_SO) $(LIBDIR)/lieflow/
	if [ -f $(MPI_SO) ]; then install -m 755 $(MPI_SO) $(LIBDIR)/lieflow/; fi
	install -m 644 scripts/lieflow/*.lua $(APIDOC) $(LUADIR)/lieflow/

# ---------------------------------------------------------------- install
LUA_LMOD := $(PREFIX)/share/lua/5.4
LUA_CMOD := $(PREFIX)/lib/lua/5.4
install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/lieflow $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(LUA_CMOD)/lieflow $(DESTDIR)$(LUA_LMOD)/lieflow
	install -m 644 $(LIB_A) $(BIND_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO_REAL) $(BIND_SO_REAL) $(DESTDIR)$(PREFIX)/lib/
	cd $(DESTDIR)$(PREFIX)/lib && ln -sf $(notdir $(LIB_SO_REAL)) $(SONAME) && ln -sf $(SONAME) liblieflow.so \
	  && ln -sf $(notdir $(BIND_SO_REAL)) $(BIND_SONAME) && ln -sf $(BIND_SONAME) liblieflow_lua.so
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(PREFIX)/include/lieflow/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' lieflow.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/lieflow.pc
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@LUA_LIBS@|$(LUA_LIBS)|g' -e 's|@HDF5_LIBS@|$(HDF5_LIBS)|g' \
	  lieflow-lua.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/lieflow-lua.pc
	install -m 755 $(MOD_SO) $(DESTDIR)$(LUA_CMOD)/lieflow/
	if [ -f $(MPI_SO) ]; then install -m 755 $(MPI_SO) $(DESTDIR)$(LUA_CMOD)/lieflow/; fi
	install -m 644 scripts/lieflow/*.lua $(APIDOC) $(DESTDIR)$(LUA_LMOD)/lieflow/
	install -d $(DESTDIR)$(PREFIX)/share/doc/lieflow
	install -m 644 docs/api.md docs/references.md $(DESTDIR)$(PREFIX)/share/doc/lieflow/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 $(MAN) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 755 $(EXE) $(DESTDIR)$(PREFIX)/bin/
	@echo "lieflow installed in $(PREFIX)."
	@echo "Lua: $(PREFIX)/bin/lieflow needs nothing more (its Lua modules are built in). For a stock lua5.4, set:"
	@echo "  export LUA_PATH=\"$(LUA_LMOD)/?.lua;$(LUA_LMOD)/?/init.lua;;\""
	@echo "  export LUA_CPATH=\"$(LUA_CMOD)/?.so;;\""
	@echo "C: pkg-config lieflow (C API) and lieflow-lua (a program hosting Lua) find the library with"
	@echo "  export PKG_CONFIG_PATH=\"$(PREFIX)/lib/pkgconfig\""
	@echo "  cc prog.c -o prog \$$(pkg-config --cflags --libs lieflow) -Wl,-rpath,\$$(pkg-config --variable=libdir lieflow)"
	@echo "The rpath is how the program finds liblieflow.so at run time; without it, export"
	@echo "LD_LIBRARY_PATH=$(PREFIX)/lib (or, for /usr/local, run ldconfig as root). To link liblieflow.a"
	@echo "instead: cc prog.c -o prog \$$(pkg-config --cflags lieflow) \$$(pkg-config --variable=static_libs lieflow)"

clean:
	rm -rf build build-asan build-fuzz build-minimal out
