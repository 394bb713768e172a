#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# LAMMPS's side of the rigid SPC/E NVE comparison (issue 32, item 6b; examples/water_nve.lua is lieflow's):
#  1. lattice.lua writes 512 molecules on a cubic lattice at 1 g/cm^3 (random attitudes, seed 32);
#  2. in.water_nve_prep.lieflow equilibrates them at 300 K (rigid/nvt/small: 1,000 steps of 0.5 fs, then
#     10,000 of 2 fs = 20 ps) and writes data.equil (positions, image flags, velocities in A/fs);
#  3. in.water_nve.lieflow runs NVE (rigid/nve/small) from data.equil for 10 ps at 1 fs and at 2 fs:
#     thermo every 100 fs, the O-O g(r) (0.05 A bins to 8 A) from frames every 0.1 ps in 5 blocks of 2 ps.
# Usage: run.sh WORKDIR [--keep]. Everything goes to WORKDIR (data.equil, the logs, thermo.1fs.txt,
# thermo.2fs.txt, rdf.1fs.txt, rdf.2fs.txt, lammps_version.txt); --keep also copies the small outputs (not
# data.equil: 0.3 MB) to fixtures/ beside this script. About 6 minutes of CPU (LAMMPS serial, ~100 steps/s).
# LAMMPS is deterministic here (serial, fixed seeds): the same version rewrites the same files.
# Needs Debian's lammps (apt-get install lammps) and a Lua 5.4 (lua5.4, or lieflow itself) for lattice.lua.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${1:?usage: run.sh WORKDIR [--keep]}
keep=${2:-}
command -v lmp >/dev/null || { echo "run.sh: LAMMPS (lmp) is not installed: apt-get install lammps" >&2; exit 1; }
lua=$(command -v lua5.4 || true)
[ -n "$lua" ] || lua=$root/build/lieflow
mkdir -p "$work"
cd "$work"
"$lua" "$here/lattice.lua" lattice.512 8
if [ ! -s data.equil ]; then
  lmp -in "$here/in.water_nve_prep.lieflow" -var lattice lattice.512 -var nwarm 1000 -var neq 10000 \
      -var out data.equil -log log.prep -nocite >/dev/null
fi
for dt in 1 2; do
  n=$((10000 / dt)); th=$((100 / dt))
  lmp -in "$here/in.water_nve.lieflow" -var data data.equil -var dt $dt -var nsteps $n -var nthermo $th \
      -var nevery $th -var nrepeat 20 -var nfreq $((20 * th)) -var rdf rdf.${dt}fs.txt -log log.${dt}fs -nocite >/dev/null
  {
    echo "# LAMMPS $(head -1 log.${dt}fs | sed 's/^LAMMPS (//; s/)$//'), fix rigid/nve/small, dt $dt fs, $n steps from data.equil"
    grep -m1 "^Loop time" log.${dt}fs | sed 's/^/# /'
    grep -m1 "% CPU use" log.${dt}fs | sed 's/^/# /'
    awk '/^ *Step Time Temp PotEng KinEng TotEng/ {on = 1; print "#", $0; next} on && /^Loop time/ {exit}
         on && /^ *[0-9]+ / {print $1, $2, $3, $4, $5, $6}' log.${dt}fs
  } > thermo.${dt}fs.txt
done
head -1 log.1fs > lammps_version.txt
if [ "$keep" = "--keep" ]; then
  mkdir -p "$here/fixtures"
  cp thermo.1fs.txt thermo.2fs.txt rdf.1fs.txt rdf.2fs.txt lammps_version.txt "$here/fixtures/"
  echo "run.sh: kept the thermo tables and g(r) in $here/fixtures"
fi
echo "run.sh: LAMMPS's outputs in $work"
