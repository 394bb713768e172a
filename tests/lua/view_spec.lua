-- SPDX-License-Identifier: GPL-3.0-or-later
-- Recorded states (lf.run{states = true}), the page of traj:animate / lf.animate, traj:write_gltf and
-- lf.view, without a browser (tests/view/ checks the pages in Chromium).
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has = T.errmsg, T.has
local animate = require "lieflow.view.animate"
local frames = require "lieflow.view.frames"

local THREE = "/usr/share/javascript/three/three.min.js"
local have_three = io.open(THREE) ~= nil

local function stress_body()
  return lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                      potential = lf.potential.stress{alpha = 0.3}}
end
-- bitwise equality of state values (numbers, vec3, mat3, arrays and records of them)
local function same(a, b)
  if type(a) == "userdata" then a = a:totable() end
  if type(b) == "userdata" then b = b:totable() end
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end
local function tmp(name) return os.tmpname() .. "-" .. name end
local function read(p) local f = assert(io.open(p, "rb")); local s = f:read("a"); f:close(); return s end

describe("lf.run{states = true}", function()
  it("keeps every sample's state bit for bit (rigid body, two bodies, spheres, Lie ODE)", function()
    local systems = {
      {stress_body(), "vlv", 0.125},
      {lf.bodies{{inertia = {1, 2, 3}, omega = {1, 0.2, 0}}, {inertia = {2, 2, 3}, omega = {0, 0.1, 1}}}, "vlv", 0.1},
      {lf.spheres.double_pendulum{q = {{1, 0, 0}, {0, 0, -1}}, qdot = {{0, 1, 0}, {1, 0, 0}}}, "rattle", 0.01},
      {lf.lie_ode{factors = {"so3", "s2", "s3", "ts2", "r2"}, y0 = {lf.so3.I, {0, 0, 1}, {1, 0, 0, 0}, {q = {0, 0, 1}, omega = {1, 0, 0}}, {1, 2}},
                  f = function(_, y) return {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {{0, 1, 0}, {0, 0, 0}}, {0.5, 0}} end}, "rkmk4", 0.1},
    }
    for _, c in ipairs(systems) do
      local sys, m, h = c[1], c[2], c[3]
      local tr = lf.run(sys, {method = m, h = h, T = 20 * h, states = true})
      local it = lf.integrator(m, sys, {h = h}):step(7)
      local st, ref = tr:state(8), it:state()
      assert.are.equal(tr.t[8], st.t)
      for _, f in ipairs(sys.fields) do assert.is_true(same(ref[f], st[f]), f) end
      assert.are.equal(tr.samples, #tr[sys.fields[1]])
      assert.is_true(same(st[sys.fields[1]], tr[sys.fields[1]][8]))
    end
  end)

  it("takes 8 bytes per number of the state: 96 per sample for a rigid body (measured)", function()
    local body = stress_body()
    local function used(states)
      collectgarbage(); collectgarbage()
      local before = collectgarbage("count")
      local tr = lf.run(body, {method = "vlv", h = 0.125, T = 2500, states = states})
      collectgarbage(); collectgarbage()
      return (collectgarbage("count") - before) * 1024, tr
    end
    local without = used(false)
    local with, tr = used(true)
    local per = (with - without) / tr.samples
    print(("\nstates of a rigid body: %.2f bytes per sample (%d samples)"):format(per, tr.samples))
    assert.is_true(per >= 96 and per < 100, per)
  end)

  it("streams the state as CSV columns that traj:load() reads back, and lf.ensemble sends it", function()
    local body = stress_body()
    local path = tmp("states.csv")
    local s = lf.run(body, {method = "vlv", h = 0.125, T = 2, states = true, stream = path})
    local m = lf.run(body, {method = "vlv", h = 0.125, T = 2, states = true})
    has(errmsg(s.state, s, 2), "traj:load() reads them back")
    local l = s:load()
    assert.are.equal(lf.core.proc.encode(m:state(9).R), lf.core.proc.encode(l:state(9).R))
    os.remove(path)
    local res = lf.ensemble{n = 2, make = function() return body end, method = "vlv", h = 0.125, T = 2, states = true, workers = 2}
    assert.are.equal(lf.core.proc.encode(m:state(9).R), lf.core.proc.encode(res[2].trajectory:state(9).R))
  end)

  it("refuses what it cannot do, by name", function()
    local tr = lf.run(stress_body(), {method = "vlv", h = 0.125, T = 1})
    has(errmsg(tr.state, tr, 1), "no recorded states")
    has(errmsg(lf.run, stress_body(), {method = "vlv", h = 0.1, T = 1, states = 1}), "'states' must be true or false")
    local ts = lf.run(stress_body(), {method = "vlv", h = 0.125, T = 1, states = true})
    has(errmsg(ts.state, ts, 0), "integer in 1..9")
    has(errmsg(ts.animate, ts, tmp("x.html"), {frames = 1}), "'frames' must be an integer >= 2")
    has(errmsg(ts.animate, ts, tmp("x.html"), {colour = 1}), "unknown option 'colour'")
    has(errmsg(tr.animate, tr, tmp("x.html")), "run it with lf.run{..., states = true}")
    has(errmsg(lf.animate, {tr, path = tmp("x.html")}), "no recorded states")
    has(errmsg(tr.write_gltf, tr, tmp("x.gltf")), "no recorded states")
    has(errmsg(ts.animate, ts, tmp("x.html"), {t0 = 5, t1 = 6}), "no sample in the window")
    has(errmsg(ts.animate, ts, tmp("x.html"), {three = "/nonexistent/three.min.js"}), "libjs-three")
  end)
end)

describe("the view's frames", function()
  it("thin a long run to the budget, first and last sample included, and keep the plot's extremes", function()
    local tr = lf.run(lf.rigidbody{inertia = {1, 2, 3}, omega = {1, 0.1, 0}}, {method = "vlv", h = 0.01, T = 100, states = true})
    local idx = frames.select(tr, {frames = 300})
    assert.are.equal(300, #idx)
    assert.are.equal(1, idx[1]); assert.are.equal(tr.samples, idx[300])
    local w = frames.select(tr, {t0 = 50, t1 = 51})
    assert.are.equal(101, #w); assert.are.equal(50, tr.t[w[1]]); assert.are.equal(51, tr.t[w[101]])
    local env = frames.envelope(tr, "energy_error", 100)
    local lo, hi = math.huge, -math.huge
    for _, v in ipairs(tr.energy_error) do lo, hi = math.min(lo, v), math.max(hi, v) end
    local elo, ehi = math.huge, -math.huge
    for i = 1, #env.t do elo, ehi = math.min(elo, env.lo[i]), math.max(ehi, env.hi[i]) end
    assert.are.equal(lo, elo); assert.are.equal(hi, ehi)
    assert.is_true(#env.t <= 100)
  end)

  it("give each rod the rotation of z onto its q, and each box its attitude", function()
    local tr = lf.run(lf.spheres.double_pendulum{q = {{1, 0, 0}, {0, 0, -1}}, qdot = {{0, 1, 0}, {1, 0, 0}}},
                      {method = "rattle", h = 0.01, T = 5, states = true})
    local idx = frames.select(tr, {frames = 50})
    local fr, rec = frames.compute(tr, tr.scene, idx), frames.recorded(tr, tr.scene, idx)
    local worst = 0
    for o = 1, 2 do
      for f = 1, #idx do
        local q = fr.q[o]
        local R = lf.quat.to_matrix{q[4 * f - 3], q[4 * f - 2], q[4 * f - 1], q[4 * f]}
        for i = 1, 3 do worst = math.max(worst, math.abs(R[i][3] - rec[o][f][i])) end
      end
    end
    assert.is_true(worst < 1e-14, worst)
    -- the second link hangs from the tip of the first
    local p, l1 = fr.p[2], tr.scene.objects[1].length
    for i = 1, 3 do assert.is_true(math.abs(p[3 * 9 + i] - l1 * rec[1][10][i]) < 1e-14) end
  end)
end)

describe("traj:animate and lf.animate", function()
  if not have_three then pending("Debian's libjs-three is not installed (" .. THREE .. ")") return end

  it("write one self-contained page: three.js inlined, no network, bounded in size", function()
    local tr = lf.run(stress_body(), {method = "vlv", h = 0.125, T = 500, states = true})
    local path = tmp("view.html")
    assert.are.equal(path, tr:animate(path, {frames = 1000, trace = true}))
    local page = read(path)
    assert.is_truthy(page:find("/*lf:three*/", 1, true))
    assert.is_falsy(page:find("<script src", 1, true))
    assert.is_falsy(page:find("<link", 1, true))
    assert.is_falsy(page:find("https?://[%w%.]+/[%w/]*%.js"))
    local three, orbit = animate.assets()
    local bound = #three + #orbit + animate.size_bound(1000, 1, 0)
    assert.is_true(#page <= bound, ("%d > %d"):format(#page, bound))
    os.remove(path)
  end)

  it("puts several trajectories side by side in one page", function()
    local body = stress_body()
    local a = lf.run(body, {method = "eln", h = 0.125, T = 50, states = true})
    local b = lf.run(body, {method = "vlv", h = 0.125, T = 50, states = true})
    local path = tmp("two.html")
    lf.animate{a, b, path = path, titles = {"eln </script>", "vlv"}, t0 = 40}
    local page = read(path)
    local data = page:match('<script id="lf%-data" type="application/json">(.-)</script>')
    local d = lf.json.decode(data)
    assert.are.equal(2, #d.panels)
    assert.are.equal("eln </script>", d.panels[1].title) -- escaped in the page, the same text in the data
    assert.are.equal(81, d.panels[2].nframes)
    os.remove(path)
  end)
end)

describe("traj:write_gltf", function()
  it("writes glTF 2.0: a node per object, unit rotation keyframes at increasing times", function()
    local tr = lf.run(lf.spheres.dipoles{rows = 2, cols = 2, q = {{1, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0, 1, 0}}},
                      {method = "eln_spatial", h = 0.01, T = 2, states = true})
    local path = tmp("view.gltf")
    tr:write_gltf(path, {frames = 100})
    local d = lf.json.decode(read(path))
    assert.are.equal("2.0", d.asset.version)
    assert.are.equal(4, #d.scenes[1].nodes)
    assert.are.equal(4, #d.animations[1].channels)
    local times = d.accessors[d.animations[1].samplers[1].input + 1]
    assert.are.equal(100, times.count)
    assert.are.equal(0, times.min[1])
    os.remove(path)
  end)
end)

describe("lf.view", function()
  if not have_three then pending("Debian's libjs-three is not installed") return end
  local tr = lf.run(stress_body(), {method = "vlv", h = 0.125, T = 5, states = true})
  local view = require "lieflow.view"

  it("writes the page in a private directory and prints its path without a display", function()
    local path = view.view(tr, {open = false})
    local dir = path:match("^(.*)/[^/]*$")
    local info = lf.core.file_info(dir)
    assert.are.equal(lf.core.uid(), info.uid)
    assert.are.equal(0x1c0, info.mode) -- 0700
    assert.is_truthy(read(path):find("lf-data", 1, true))
    os.remove(path)
  end)

  it("starts a trusted $BROWSER with the page, detached (setsid -f, no shell), when there is a display", function()
    local exe = os.getenv("LIEFLOW_EXE") or "build/lieflow"
    local home = os.getenv("HOME")
    if not home or not io.open(exe) then pending("no HOME or no " .. exe) return end
    local d = ("%s/.cache/lieflow-view-spec-%d"):format(home, math.random(1 << 30))
    lf.core.mkdir_p(d)
    local b, log = d .. "/browser", d .. "/called"
    local f = assert(io.open(b, "w"))
    f:write("#!/bin/sh\necho \"$@\" > " .. log .. "\n")
    f:close()
    lf.core.spawn({"chmod", "755", b})
    local code = "local tr = lf.run(lf.rigidbody{inertia = {1, 2, 3}, omega = {1, 0, 0}}, {method = 'vlv', h = 0.1, T = 1, states = true}) print(lf.view(tr))"
    local status, rc, out, err = lf.core.spawn({"env", "DISPLAY=:99", "BROWSER=" .. b, exe, "-e", code}, nil, 60)
    assert.are.equal("exited", status, err)
    assert.are.equal(0, rc, err)
    local page = out:match("(/%S+%.html)")
    local got
    for _ = 1, 100 do
      local g = io.open(log)
      if g then got = g:read("a"); g:close(); if got ~= "" then break end end
      lf.core.spawn({"sleep", "0.05"})
    end
    assert.are.equal(page .. "\n", got)
    os.remove(page); os.remove(log); os.remove(b); os.remove(d)
  end)

  it("refuses a directory or an executable that another user could have planted", function()
    local d = os.tmpname()
    os.remove(d)
    lf.core.mkdir_p(d)
    has(errmsg(lf.core.private_dir, "/tmp"), "others may enter it")
    assert.is_truthy(view.distrust(d)) -- under /tmp (mode 1777): writable by others
    has(view.distrust(d), "writable by others")
    local ok, why = view.find(d .. "/browser")
    assert.is_nil(ok)
    assert.is_truthy(why)
    has(select(2, view.find("relative/browser")), "relative path")
    os.remove(d)
  end)
end)
