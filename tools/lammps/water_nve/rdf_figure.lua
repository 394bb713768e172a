-- SPDX-License-Identifier: GPL-3.0-or-later
-- The figure of the O-O g(r) of rigid SPC/E water (docs/figures/water_rdf_oo.png): lieflow's no_squish at
-- 1 fs (the table examples/water_nve.lua --out=DIR writes, DIR/no_squish_1fs.rdf.txt) against LAMMPS's
-- (fixtures/rdf.1fs.txt, the mean of its 5 blocks).
-- usage: lieflow tools/lammps/water_nve/rdf_figure.lua DIR/no_squish_1fs.rdf.txt [out.png]
local lf = require "lieflow"
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local src = assert(arg[1], "usage: lieflow rdf_figure.lua DIR/no_squish_1fs.rdf.txt [out.png]")
local out = arg[2] or here .. "/../../../docs/figures/water_rdf_oo.png"
local r, g, lam = {}, {}, {}
for l in io.lines(src) do
  local a, b = l:match("^(%S+)%s+(%S+)")
  if a and tonumber(a) then r[#r + 1], g[#g + 1] = tonumber(a), tonumber(b) end
end
local sum, cnt = {}, {}
for l in io.lines(here .. "/fixtures/rdf.1fs.txt") do
  local row, rr, gg = l:match("^%s*(%d+)%s+(%S+)%s+(%S+)")
  if row and rr:find("%.") then
    local i = tonumber(row)
    sum[i], cnt[i] = (sum[i] or 0) + tonumber(gg), (cnt[i] or 0) + 1
  end
end
for i = 1, #r do lam[i] = sum[i] / cnt[i] end
print(lf.plot{x = r, y = {{label = "LAMMPS rigid/nve/small, 1 fs", data = lam},
                         {label = "lieflow no_squish, 1 fs", data = g, style = "points"}},
              title = "O-O radial distribution of rigid SPC/E water, 512 molecules, NVE 10 ps",
              xlabel = "r / A", ylabel = "g(r)", file = out, key = "top right"})
