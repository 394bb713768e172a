# SPDX-License-Identifier: GPL-3.0-or-later
# lieflow — `make bench`: steps/s and ratios against fully inlined hand loops (bench/steppers.c,
# bench/lanes.c), the weak order of the Langevin thermostat (bench/langevin.c), the methods, spheres,
# ensembles, compiled models, dense output and events (bench/*.lua), the site-site pair kernel (bench/dsf_pairs.c), lieflow
# against LAMMPS on its rigid example and on rigid SPC/E water (bench/md.lua, bench/water.lua; Debian's
# lammps installed when missing).
.PHONY: bench
BENCH_STEPPERS := $(B)/bench_steppers
BENCH_LANES := $(B)/bench_lanes
BENCH_LANGEVIN := $(B)/bench_langevin
$(B)/bench_%: bench/%.c $(LIB_A) | $(VERSION_H)
	$(CC) $(ALLCFLAGS) -o $@ $< $(LIB_A) $(GSL_LIBS)

bench: all $(BENCH_STEPPERS) $(BENCH_LANES) $(BENCH_LANGEVIN) $(B)/bench_dsf_pairs
	$(BENCH_STEPPERS)
	$(BENCH_LANES)
	$(BENCH_LANGEVIN)
	$(EXE) bench/methods.lua
	$(EXE) bench/spheres.lua
	$(EXE) bench/ensemble.lua
	$(EXE) bench/compile.lua
	$(EXE) bench/events.lua
	command -v lmp >/dev/null || apt-get install -y lammps >/dev/null || echo "bench: lammps not installed"
	$(EXE) bench/md.lua
	$(B)/bench_dsf_pairs
	$(EXE) bench/water.lua
