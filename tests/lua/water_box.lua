-- SPDX-License-Identifier: GPL-3.0-or-later
-- Test fixtures: a LAMMPS data file (atom style full, real units) of n^3 rigid SPC/E waters (Berendsen,
-- Grigera & Straatsma 1987: O-H 1 A, H-O-H 109.47 deg, q_O = -0.8476 e, q_H = +0.4238 e) on a cubic
-- lattice of spacing a (A) with random attitudes, and the options of lf.read_lammps_data for SPC/E (LJ on
-- O-O, damped shifted force Coulomb). Used by tests/lua/thermostat_spec.lua and tests/view/pages.lua.
local lf = require "lieflow"
local M = {}

M.TAU = 48.88821291 -- fs per time unit of (kcal/mol, g/mol, A)
M.KB = 0.0019872041 -- kcal/mol/K

--- M.write(path, n, a, seed): the data file
function M.write(path, n, a, seed)
  local L, th = a * n, math.rad(109.47 / 2)
  local body = {{0, 0, 0}, {math.sin(th), math.cos(th), 0}, {-math.sin(th), math.cos(th), 0}}
  local out = {("%d SPC/E waters\n\n%d atoms\n2 atom types\n\n0 %.17g xlo xhi\n0 %.17g ylo yhi\n0 %.17g zlo zhi\n\n")
                 :format(n ^ 3, 3 * n ^ 3, L, L, L), "Masses\n\n1 15.9994\n2 1.008\n\nAtoms # full\n\n"}
  math.randomseed(seed or 7)
  local id, mol = 0, 0
  for i = 0, n - 1 do for j = 0, n - 1 do for k = 0, n - 1 do
    mol = mol + 1
    local R = lf.so3.exp{math.random() * 3, math.random() * 3, math.random() * 3}
    for s = 1, 3 do
      id = id + 1
      local r = R * lf.vec3(body[s])
      out[#out + 1] = ("%d %d %d %g %.17g %.17g %.17g\n"):format(id, mol, s == 1 and 1 or 2, s == 1 and -0.8476 or 0.4238,
        (i + 0.5) * a + r[1], (j + 0.5) * a + r[2], (k + 0.5) * a + r[3])
    end
  end end end
  local f = assert(io.open(path, "w"))
  f:write(table.concat(out))
  f:close()
  return path
end

--- M.options(cutoff, skin) -> the options of lf.read_lammps_data for SPC/E (LJ shifted at the cutoff)
function M.options(cutoff, skin)
  return {bodies = "molecule", cutoff = cutoff, skin = skin, shift = true, lj_pairs = {[1] = {[1] = {0.1553, 3.166}}},
          coulomb = {alpha = 0.2, k = 332.06371}, kB = M.KB}
end

return M
