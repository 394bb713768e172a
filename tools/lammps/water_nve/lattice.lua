-- SPDX-License-Identifier: GPL-3.0-or-later
-- The starting lattice of the rigid SPC/E NVE comparison (issue 32, item 6b), as bench/water.lua writes it:
-- n^3 water molecules (default 8^3 = 512), O on a cubic lattice filling a box of 1 g/cm^3, random attitudes
-- (Shoemake's uniform quaternions, math.randomseed(32)), O-H 1 A, H-O-H 109.47 deg, q_O = -0.8476 e,
-- q_H = +0.4238 e; a LAMMPS data file of atom style full (no velocities: LAMMPS's warm-up creates them).
-- Usage: lieflow lattice.lua OUT [n]   (any Lua 5.4 runs it: it does not need lieflow)
local path, n = arg[1], tonumber(arg[2] or 8)
assert(path, "usage: lattice.lua OUT [n]")
local N = n ^ 3
local L = (N * 18.01528 / 0.602214076) ^ (1 / 3) -- A^3 per molecule at 1 g/cm^3: 18.01528 / 0.602214076
local a = L / n
local th = math.rad(109.47 / 2)
local body = {{0, 0, 0}, {math.sin(th), math.cos(th), 0}, {-math.sin(th), math.cos(th), 0}}
math.randomseed(32)
local f = assert(io.open(path, "w"))
f:write(("SPC/E water on a lattice (tools/lammps/water_nve/lattice.lua)\n\n%d atoms\n2 atom types\n\n"):format(3 * N))
for _, ax in ipairs{"x", "y", "z"} do f:write(("0 %.17g %slo %shi\n"):format(L, ax, ax)) end
f:write("\nMasses\n\n1 15.9994\n2 1.008\n\nAtoms # full\n\n")
local id, mol = 0, 0
for i = 0, n - 1 do
  for j = 0, n - 1 do
    for k = 0, n - 1 do
      mol = mol + 1
      local u1, u2, u3 = math.random(), math.random(), math.random()
      local w, x, y, z = math.sqrt(1 - u1) * math.sin(2 * math.pi * u2), math.sqrt(1 - u1) * math.cos(2 * math.pi * u2),
                         math.sqrt(u1) * math.sin(2 * math.pi * u3), math.sqrt(u1) * math.cos(2 * math.pi * u3)
      local R = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                 {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                 {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}
      local c = {(i + 0.5) * a, (j + 0.5) * a, (k + 0.5) * a}
      for s = 1, 3 do
        id = id + 1
        local p, img = {}, {}
        for d = 1, 3 do
          local v = c[d] + R[d][1] * body[s][1] + R[d][2] * body[s][2] + R[d][3] * body[s][3]
          img[d] = math.floor(v / L)
          p[d] = v - img[d] * L
        end
        f:write(("%d %d %d %.4f %.17g %.17g %.17g %d %d %d\n"):format(id, mol, s == 1 and 1 or 2,
          s == 1 and -0.8476 or 0.4238, p[1], p[2], p[3], img[1], img[2], img[3]))
      end
    end
  end
end
f:close()
