#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs LAMMPS's rigid example (in.rigid.nve.lieflow: examples/rigid/in.rigid.nve with its state and energies
# written out) and keeps what lieflow compares against as test fixtures in tests/fixtures/lammps/rigid_nve:
# data.rigid.start (atoms and velocities after `velocity create` and the rigid fix's setup), thermo.txt
# (step, PotEng, KinEng, TotEng every 50 steps of the 10,000-step run), data.rigid.end and the LAMMPS
# version. Needs Debian's lammps (installed when missing: apt-get, as root). `make test` does not run this.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-$root/tests/fixtures/lammps/rigid_nve}
command -v lmp >/dev/null || { echo "installing lammps (Debian)"; apt-get install -y lammps >/dev/null; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/in.rigid.nve.lieflow" "$here/data.rigid" "$work/"
(cd "$work" && lmp -in in.rigid.nve.lieflow -log log.lammps >/dev/null)
mkdir -p "$out"
cp "$work/data.rigid.start" "$work/data.rigid.end" "$out/"
# the thermo lines of the second run (the first is `run 0`)
awk '/^Step PotEng KinEng TotEng/ {n++; next} n == 2 && /^ *[0-9]+ / {print $1, $2, $3, $4} /^Loop time/ && n == 2 {exit}' \
  "$work/log.lammps" > "$out/thermo.txt"
head -1 "$work/log.lammps" > "$out/lammps_version.txt"
echo "wrote $(wc -l < "$out/thermo.txt") thermo lines and the states to $out"
