# SPDX-License-Identifier: GPL-3.0-or-later
# lieflow — the slow checks .ci/run adds to `make test`: sanitizers, fuzzing, valgrind.
.PHONY: asan asan-build fuzz fuzz-c fuzz-c-build fuzz-c-corpus fuzz-c-deps valgrind valgrind-deps valgrind-examples

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
fuzz-c-deps:
	$(call install_missing,clang)
fuzz-c-build: $(FUZZ_B)/fuzz_capi
$(FUZZ_B)/fuzz_capi: tests/fuzz/fuzz_capi.c $(CORE_SRC) $(STUMPFF_GEN) | $(VERSION_H)
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz-c needs clang (make fuzz-c-deps)"; exit 1; }
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

# valgrind from Debian, installed like the other packages
valgrind-deps:
	$(call install_missing,valgrind)
valgrind: $(CTEST_BIN) valgrind-deps
	@set -e; for t in $(CTEST_BIN); do valgrind -q --error-exitcode=1 --leak-check=full $$t; done

# the examples with compiled models (native and tape) under valgrind, with a fresh code cache
valgrind-examples: $(EXE) valgrind-deps
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; for f in examples/lua_models.lua examples/tour.lua; do \
	  echo "== valgrind $$f --quick"; XDG_CACHE_HOME="$$d" valgrind -q --error-exitcode=1 $(EXE) $$f --quick > /dev/null; done; \
	echo "valgrind-examples: clean"
