# lieflow — build, test, demo, bench, install.
# `make demo` and `make test` first install the Debian packages lieflow needs (as root: apt-get;
# otherwise they print the apt-get command to run).

PREFIX   ?= /usr/local
CC       ?= cc
VERSION  := 0.1.0
PKGS     := liblua5.4-dev lua5.4 libreadline-dev libgsl-dev gnuplot-nox lua-busted lua-dkjson libcmocka-dev pkg-config tmux

B        := build
LUA_INC  := -I/usr/include/lua5.4
WARN     := -Wall -Wextra -Wshadow
CFLAGS   ?= -O2 -g
CORE_DIRS := $(sort $(dir $(wildcard core/*/*.c core/*/*.h)))
CORE_INC := -Icore $(patsubst %/,-I%,$(CORE_DIRS))
ALLCFLAGS = -std=c11 -D_DEFAULT_SOURCE $(WARN) $(CFLAGS) -fPIC $(CORE_INC)
GSL_LIBS := -lgsl -lgslcblas -lm -pthread
LUA_LIBS := -llua5.4

CORE_SRC := $(sort $(wildcard core/*/*.c))
CORE_OBJ := $(CORE_SRC:core/%.c=$(B)/core/%.o)
BIND_SRC := $(sort $(filter-out lua/main.c,$(wildcard lua/*.c)))
BIND_OBJ := $(BIND_SRC:lua/%.c=$(B)/lua/%.o)
CTEST_SRC := $(sort $(wildcard tests/c/test_*.c))
CTEST_BIN := $(CTEST_SRC:tests/c/%.c=$(B)/tests/%)
HEADERS  := $(wildcard core/*.h core/*/*.h core/*/*.def lua/*.h)
# headers for method authors and internals (*_internal.h) are not installed
PUBLIC_HEADERS := $(filter-out %_internal.h,$(wildcard core/*.h core/*/*.h)) lua/lieflow_lua.h

LIB_A    := $(B)/liblieflow.a
LIB_SO   := $(B)/liblieflow.so
MOD_SO   := $(B)/lua/lieflow/core.so
EXE      := $(B)/lieflow
EMBED    := $(B)/embed_host

.PHONY: all deps test test-c test-lua test-repl test-embed test-examples test-install demo bench install clean asan valgrind
.DEFAULT_GOAL := all

all: $(LIB_A) $(LIB_SO) $(MOD_SO) $(EXE) $(EMBED)

# ---------------------------------------------------------------- system packages
deps: $(B)/.deps-ok
$(B)/.deps-ok:
	@missing=""; for p in $(PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
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
	@mkdir -p $(B) && touch $@

# ---------------------------------------------------------------- objects
$(B)/core/%.o: core/%.c $(HEADERS) | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -c $< -o $@

$(B)/lua/%.o: lua/%.c $(HEADERS) | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(LUA_INC) -Ilua -c $< -o $@

$(LIB_A): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SO): $(CORE_OBJ)
	$(CC) -shared -o $@ $^ $(GSL_LIBS)

# The Lua C module: resolves Lua symbols from the host (lua5.4 or lieflow, which exports them).
$(MOD_SO): $(BIND_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(BIND_OBJ) $(LIB_A) $(GSL_LIBS)

# The executable links the binding statically and exports the Lua API for other C modules.
$(EXE): $(B)/lua/main.o $(BIND_OBJ) $(LIB_A)
	$(CC) -o $@ $^ -Wl,-E $(LUA_LIBS) -lreadline $(GSL_LIBS) -ldl

$(EMBED): examples/embed/host.c $(BIND_OBJ) $(LIB_A) $(HEADERS)
	$(CC) $(ALLCFLAGS) $(LUA_INC) -Ilua -o $@ $< $(BIND_OBJ) $(LIB_A) $(LUA_LIBS) $(GSL_LIBS) -ldl

$(B)/tests/%: tests/c/%.c tests/c/problems.h tests/c/testutil.h tests/c/orderfit.h $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -Itests/c -o $@ $< $(LIB_A) -lcmocka $(GSL_LIBS) $(TEST_LDFLAGS)

# count heap allocations during steps
$(B)/tests/test_noalloc: TEST_LDFLAGS = -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc

# ---------------------------------------------------------------- tests
LUA_ENV := LUA_PATH="$(CURDIR)/scripts/?.lua;$(CURDIR)/scripts/?/init.lua;$(CURDIR)/tests/lua/?.lua;/usr/share/lua/5.4/?.lua;/usr/share/lua/5.4/?/init.lua" \
           LUA_CPATH="$(CURDIR)/$(B)/lua/?.so;/usr/lib/x86_64-linux-gnu/lua/5.4/?.so"

test: all $(CTEST_BIN)
	@$(MAKE) --no-print-directory test-c test-lua test-repl test-embed test-examples test-install

test-c: $(CTEST_BIN)
	@set -e; for t in $(CTEST_BIN); do echo "== $$t"; $$t; done

test-lua: $(MOD_SO)
	$(LUA_ENV) lua5.4 /usr/bin/busted --lua=lua5.4 -o utfTerminal tests/lua

test-repl: $(EXE)
	bash tests/repl_test.sh $(EXE)

test-embed: $(EMBED)
	$(EMBED)

test-examples: $(EXE)
	@set -e; for f in $(wildcard examples/*.lua); do echo "== $$f --quick"; $(EXE) $$f --quick; done

test-install: all
	bash tests/install_test.sh

demo: all
	$(EXE) examples/stress_test.lua

bench: all
	$(EXE) bench/methods.lua

# Sanitized build of the C tests and the Lua specs (not part of `make test`).
asan:
	$(MAKE) B=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" test-c

valgrind: $(CTEST_BIN)
	@set -e; for t in $(CTEST_BIN); do valgrind -q --error-exitcode=1 --leak-check=full $$t; done

# ---------------------------------------------------------------- install
LUA_LMOD := $(PREFIX)/share/lua/5.4
LUA_CMOD := $(PREFIX)/lib/lua/5.4
install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/lieflow $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(LUA_CMOD)/lieflow $(DESTDIR)$(LUA_LMOD)/lieflow
	install -m 644 $(LIB_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(PREFIX)/include/lieflow/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' lieflow.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/lieflow.pc
	install -m 755 $(MOD_SO) $(DESTDIR)$(LUA_CMOD)/lieflow/
	install -m 644 scripts/lieflow/*.lua $(DESTDIR)$(LUA_LMOD)/lieflow/
	install -m 755 $(EXE) $(DESTDIR)$(PREFIX)/bin/
	@echo "lieflow installed in $(PREFIX). For a stock lua5.4, set:"
	@echo "  export LUA_PATH=\"$(LUA_LMOD)/?.lua;$(LUA_LMOD)/?/init.lua;;\""
	@echo "  export LUA_CPATH=\"$(LUA_CMOD)/?.so;;\""

clean:
	rm -rf build build-asan out
