# SPDX-License-Identifier: GPL-3.0-or-later
# lieflow — `make test` and its suites, `make demo`. Each suite is a target; tests/run_suites.sh
# runs them all (also after a failure) and sums up what passed.

# the C tests: cmocka programs linked with the static library (internal functions included)
$(B)/tests/%: tests/c/%.c $(LIB_A) | $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -Itests/c -o $@ $< $(LIB_A) $(TEST_LIBS) -lcmocka $(GSL_LIBS) $(LDFLAGS) $(TEST_LDFLAGS)
# quad-precision references (libquadmath, part of gcc)
$(B)/tests/test_stumpff: TEST_LIBS = -lquadmath
# count heap allocations during steps
$(B)/tests/test_noalloc: TEST_LDFLAGS = -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
# make every allocation fail, GSL's own included (GSL linked statically, so that --wrap reaches it)
$(B)/tests/test_gsl_nomem: TEST_LIBS = -Wl,-Bstatic -lgsl -lgslcblas -Wl,-Bdynamic
$(B)/tests/test_gsl_nomem: TEST_LDFLAGS = -Wl,--wrap=malloc -Wl,--wrap=calloc

# (';;' is Lua's default path: the system's modules, busted's included; LIEFLOW_EXE: the executable
# of this build, for the specs that run it, unless already set)
LUA_ENV := LUA_PATH="$(CURDIR)/scripts/?.lua;$(CURDIR)/scripts/?/init.lua;$(CURDIR)/tests/lua/?.lua;;" \
           LUA_CPATH="$(CURDIR)/$(B)/lua/?.so;;" LIEFLOW_EXE="$${LIEFLOW_EXE:-$(CURDIR)/$(EXE)}" \
           LIEFLOW_BUILD="$(CURDIR)/$(B)"

# Every suite runs (also after a failure); the last line sums up what passed (tests/run_suites.sh).
SUITES := test-c test-lua test-tape test-repl test-compat test-standalone test-embed test-examples test-mpi test-fuzz \
          test-install test-structure test-format test-view test-license test-version test-abi test-rock
.PHONY: test test-run test-minimal $(SUITES) demo demo-run

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

# The house's rules (tests/structure_check.sh): includes that name their folder, the order of the
# folders of core/ (docs/architecture.md), the binding's layers, no include, call or require cycle,
# no function over 120 lines; then the same checks on planted violations, each of which must fail.
test-structure:
	bash tests/structure_check.sh
	bash tests/structure_selftest.sh

# The C sources as .clang-format lays them out (tests/format_check.sh: the files changed since main's
# merge base, or all with FORMAT_ALL=1)
test-format:
	bash tests/format_check.sh

# LICENSE is the GPL-3 and every source file has its SPDX line (tests/license_check.sh)
test-license:
	bash tests/license_check.sh

# one source of the version (tests/version_check.sh); SONAMEs, exported symbols = the documented
# API, every public function called by a test, C++ (tests/abi_check.sh); the rockspec with luarocks
# into a temporary tree (tests/rock_test.sh)
test-version: all
	bash tests/version_check.sh $(B)
test-abi: all
	bash tests/abi_check.sh $(B)
test-rock: all
	bash tests/rock_test.sh

# the Lua API fuzzer, a short deterministic run (fixed seeds and call counts): tests/fuzz/fuzz.lua
# and the C API fuzzer's target built by gcc (no clang needed): its corpus replayed, then 20000
# reproducible pseudo-random inputs
FUZZ_REPLAY := $(B)/fuzz_capi_replay
$(FUZZ_REPLAY): tests/fuzz/fuzz_capi.c $(LIB_A) | $(VERSION_H)
	$(CC) $(ALLCFLAGS) -DLF_FUZZ_REPLAY -o $@ $< $(LIB_A) $(GSL_LIBS)
test-fuzz: $(EXE) $(FUZZ_REPLAY)
	bash tests/fuzz/run.sh $(EXE) smoke
	$(FUZZ_REPLAY) tests/fuzz/corpus_c/*
	$(FUZZ_REPLAY) --random 20000 1

demo: deps-build deps-run
	@$(MAKE) --no-print-directory demo-run
demo-run: all
	$(EXE) examples/stress_test.lua
