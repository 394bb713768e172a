# SPDX-License-Identifier: GPL-3.0-or-later
# lieflow — what the build is made of: the version, the Debian packages by use, the compiler's
# flags, the source lists and the names of what is built. Included first by the Makefile.

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
DEPS_TEST  := lua5.4 lua-busted libcmocka-dev tmux groff-base g++ luarocks hdf5-tools clang-format python3-ase
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
GSL_LIBS := -lgsl -lgslcblas -lm -pthread -ldl

# One include root for the library (every include names its folder: "model/system.h") and its
# generated twin (build/gen/base/lieflow_version.h); the binding adds its own root, lua/.
GEN      := $(B)/gen
CORE_INC := -Icore -I$(GEN)
BIND_INC := -Ilua $(LUA_INC)
# -fvisibility=hidden: the libraries export only what the public headers declare (core/base/export.h);
# -MMD -MP: each object's header dependencies, written beside it (build/**/*.d) and read back below
ALLCFLAGS = -std=c11 -D_DEFAULT_SOURCE -fno-math-errno -fno-trapping-math $(WARN) $(CFLAGS) -fPIC -fvisibility=hidden \
            -MMD -MP $(CORE_INC)

# ---------------------------------------------------------------- sources
CORE_SRC := $(sort $(wildcard core/*/*.c))
# the text of core/graph/stumpff.h as a C string: generated model code carries it (graph_codegen.c)
STUMPFF_GEN := $(GEN)/stumpff_source.c
CORE_OBJ := $(CORE_SRC:core/%.c=$(B)/core/%.o) $(GEN)/stumpff_source.o
# the binding (lua/shared: the layer the libraries share; lua/lib: one library per file; lua/module:
# the module's entry points) and the executable's own files (lua/exe: lua.c's structure, the REPL,
# module search), linked into the executable only
BIND_SRC := $(sort $(wildcard lua/shared/*.c lua/lib/*.c lua/module/*.c))
BIND_OBJ := $(BIND_SRC:lua/%.c=$(B)/lua/%.o)
EXE_SRC  := $(sort $(wildcard lua/exe/*.c))
EXE_OBJ  := $(EXE_SRC:lua/%.c=$(B)/lua/%.o)
CTEST_SRC := $(sort $(wildcard tests/c/test_*.c))
CTEST_BIN := $(CTEST_SRC:tests/c/%.c=$(B)/tests/%)
VERSION_H := $(GEN)/base/lieflow_version.h
# The public API is what core/lieflow.h includes (and lieflow_lua.h): those headers are installed,
# flat, under PREFIX/include/lieflow/; every other header is internal.
PUBLIC_HEADERS := core/lieflow.h $(addprefix core/,$(shell sed -n 's/^\#include "\([a-z_0-9/]*\.h\)".*/\1/p' core/lieflow.h | grep -v lieflow_version)) \
                  lua/module/lieflow_lua.h $(VERSION_H)

# The pure-Lua modules, compiled into the library as source (build/gen/lieflow_scripts.c): the
# scripts (scripts/lieflow/**.lua) and the reference (docs/api.md) as the module lieflow.apidoc for help()
APIDOC   := $(GEN)/apidoc.lua
SCRIPTS  := $(sort $(wildcard scripts/lieflow/*.lua scripts/lieflow/*/*.lua)) $(APIDOC)
SCRIPTS_OBJ := $(GEN)/lieflow_scripts.o

# ---------------------------------------------------------------- what is built
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
# the public headers as `make install` puts them (PREFIX/include/lieflow/), for the programs built
# here as clients (examples/embed/host.c, tests/cxx/client.cpp)
STAGED_INC := $(B)/include
