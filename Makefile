# SPDX-License-Identifier: GPL-3.0-or-later
# lieflow — build, test, demo, bench, install. Plain `make` builds and installs nothing on the
# system. `make deps` installs the missing Debian packages (as root: apt-get; otherwise it prints
# the apt-get command); `make demo` and `make test` do that first for what they need.
#
#   make              the libraries, the Lua module, the executable (build/)
#   make demo         the stress test of Bou-Rabee, Ortolan & Saccon (examples/stress_test.lua)
#   make test         every suite (mk/test.mk); make test-minimal: as without OpenMPI, HDF5, gnuplot
#   make bench        steps/s and ratios (mk/bench.mk)
#   make asan | valgrind | valgrind-examples | fuzz | fuzz-c     the slow checks (mk/check.mk)
#   make install PREFIX=...   (mk/install.mk)                    make clean
#
# The recipes live in mk/, one file per concern: config.mk (version, packages, flags, sources),
# deps.mk, build.mk, test.mk, bench.mk, check.mk, install.mk.

.DEFAULT_GOAL := all
include mk/config.mk
include mk/deps.mk
include mk/build.mk
include mk/test.mk
include mk/bench.mk
include mk/check.mk
include mk/install.mk

.PHONY: all clean FORCE
all: $(LIB_A) $(LIB_SO) $(BIND_A) $(BIND_SO) $(MOD_SO) $(EXE) $(EMBED) $(MPI_SO) $(MAN)
	@$(if $(HDF5),true,echo "lieflow: HDF5 (libhdf5-dev) not found$(if $(NO_HDF5), or switched off): built without HDF5 output")

clean:
	rm -rf build build-asan build-fuzz build-minimal out

# the header dependencies of every object and program compiled (-MMD -MP)
-include $(shell find $(B) -name '*.d' 2>/dev/null)
