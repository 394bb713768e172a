-- SPDX-License-Identifier: GPL-3.0-or-later
-- The pages the browser test (tests/view/browser_test.js) opens besides the examples': a page of a
-- 10^6-sample run (its size checked here against the documented bound), a box of 27 rigid waters (bodies
-- of sites), and a page whose three.js
-- is broken (it must show a message). Writes <dir>/manifest.json listing every page to check.
-- usage: lieflow tests/view/pages.lua DIR EXAMPLE_OUT_DIR...
local animate = require "lieflow.view.animate"
local experiment = require "lieflow.experiment"
local dir = assert(arg[1], "usage: lieflow tests/view/pages.lua DIR EXAMPLE_OUT_DIR...")
lf.mkdir_p(dir)
local passed, failed = 0, 0
local function check(ok, msg)
  print((ok and "ok   - " or "FAIL - ") .. msg)
  if ok then passed = passed + 1 else failed = failed + 1 end
end
local function size(p)
  local f = assert(io.open(p, "rb"))
  local n = f:seek("end")
  f:close()
  return n
end

-- a free body near its middle axis, 10^6 samples (vlv, h = 0.01, T = 10^4, every step recorded)
local body = lf.rigidbody{inertia = {1, 2, 3}, omega = {0.02, 1, 0.02}}
local c0 = os.clock()
local big = lf.run(body, {method = "vlv", h = 0.01, T = 1e4, states = true})
local run_s = os.clock() - c0
check(big.samples == 1000001, ("the run has %d samples"):format(big.samples))
c0 = os.clock()
local page = big:animate(dir .. "/big.html", {trace = true})
local page_s = os.clock() - c0
local three, orbit = animate.assets()
local bound = #three + #orbit + animate.size_bound(2000, 1, 0)
local bytes = size(page)
check(bytes <= bound, ("page of 10^6 samples: %d bytes <= bound %d (three.js %d + OrbitControls %d + data)"):format(
  bytes, bound, #three, #orbit))
check(bytes - #three - #orbit < 200000, ("its data and viewer: %d bytes < 200 kB"):format(bytes - #three - #orbit))
print(("big run: %.1f s, page written in %.2f s"):format(run_s, page_s))
experiment.view_check(dir .. "/big.check.json", {big}, {})
big:write_gltf(dir .. "/big.gltf")

-- a box of 27 rigid SPC/E waters (sites coloured by type, O-H bonds, the periodic box, the centres wrapped
-- into it): a LAMMPS data file on a lattice with random attitudes (tests/lua/water_box.lua), 0.2 ps
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. package.path
local water_box = require "water_box"
water_box.write(dir .. "/water.data", 3, 3.1, 7)
local wsys = lf.read_lammps_data(dir .. "/water.data", water_box.options(4.5, 1))
local water = lf.run(wsys, {method = "no_squish", h = 1 / water_box.TAU, T = 200 / water_box.TAU, every = 2, states = true})
lf.mkdir_p(dir .. "/water")
water:animate(dir .. "/water/view.html", {title = "27 rigid SPC/E waters (no_squish, 1 fs)"})
experiment.view_check(dir .. "/water/view.check.json", {water}, {})
water:write_gltf(dir .. "/water/view.gltf")
local wscene = water.scene
check(wscene.box and #wscene.objects == 27 and #wscene.objects[1].sites == 3 and #wscene.objects[1].bonds == 2,
      "the water's scene: 27 bodies of 3 sites and 2 bonds (O-H) each, and the box")

-- the Dzhanibekov flips of a free body as events, marked on the plot
lf.mkdir_p(dir .. "/flips")
local flips = lf.run(lf.rigidbody{inertia = {1, 2, 3}, omega = {0.01, 1, 0.01}}, {method = "rkmk_gl6", h = 0.05, T = 60,
  states = true, events = {{g = function(t, s) return s.omega[2] end, name = "flip"}}})
check(#flips.events == 3, ("the flips: %d events"):format(#flips.events))
flips:animate(dir .. "/flips/view.html", {title = "Dzhanibekov flips (events)", column = "Pi2"})
experiment.view_check(dir .. "/flips/view.check.json", {flips}, {})
local ftext = assert(io.open(dir .. "/flips/view.html", "rb")):read("a")
check(ftext:find('"name":"flip"', 1, true) ~= nil, "the page carries the events")

-- a page whose inlined three.js is corrupt (cut after 2000 bytes)
local small = lf.run(body, {method = "vlv", h = 0.1, T = 10, states = true})
local text = assert(io.open(small:animate(dir .. "/ok.html"), "rb")):read("a")
local a, b = text:find("/*lf:three*/", 1, true), text:find("/*lf:three-end*/", 1, true)
check(a and b, "the page marks its three.js")
local broken = text:sub(1, b and b - 1 or #text):sub(1, a + 2000) .. "\n" .. text:sub(b or #text)
local f = assert(io.open(dir .. "/broken.html", "wb"))
f:write(broken)
f:close()

-- the manifest: the examples' pages (with their view.check.json), the big page, the broken page
local pages = {}
for i = 2, #arg do
  local out = arg[i]
  local name = out:match("([^/]+)/*$")
  pages[#pages + 1] = {name = name, page = out .. "/view.html", check = out .. "/view.check.json", png = out .. "/view.png",
                       gltf = out .. "/view.gltf"}
end
pages[#pages + 1] = {name = "big", page = dir .. "/big.html", check = dir .. "/big.check.json", gltf = dir .. "/big.gltf"}
pages[#pages + 1] = {name = "flips", page = dir .. "/flips/view.html", check = dir .. "/flips/view.check.json",
                     png = dir .. "/flips/view.png"}
pages[#pages + 1] = {name = "water", page = dir .. "/water/view.html", check = dir .. "/water/view.check.json",
                     png = dir .. "/water/view.png", gltf = dir .. "/water/view.gltf"}
lf.write_json(dir .. "/manifest.json", {pages = pages, broken = dir .. "/broken.html"})
print(("pages: %d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and 0 or 1)
