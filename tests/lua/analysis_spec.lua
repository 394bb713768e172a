-- SPDX-License-Identifier: GPL-3.0-or-later
-- Experiment API (issue 4, item 2): lf.run and trajectories, lf.order, lf.drift, lf.stress_test,
-- lf.fit_linear, lf.json / lf.write_json / lf.mkdir_p — on real runs of the [BOS] stress problem.
local lf = require "lieflow"
local trajectory = require "lieflow.run.trajectory"

local function stress_body()
  return lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                      potential = lf.potential.stress{}}
end

-- first-order explicit Lie–Euler in Lua: R+ = R exp(h w), J w+ = J w + h (J w x w + tau(R))
local lie_euler = lf.method{name = "lua_lie_euler", order = 1, step = function(s, h, sys)
  local J, w = sys.inertia, s.omega
  local Jw = lf.vec3{J[1] * w[1], J[2] * w[2], J[3] * w[3]}
  local Jw1 = Jw + h * (Jw:cross(w) + sys:torque(s.R))
  return {R = s.R * lf.so3.exp(h * w), omega = lf.vec3{Jw1[1] / J[1], Jw1[2] / J[2], Jw1[3] / J[3]}}
end}

local function errmsg(f, ...)
  local ok, msg = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(msg)
end
local function has(msg, s) assert.is_truthy(msg:find(s, 1, true), ("%q not in %q"):format(s, msg)) end

local tmpdir = require("testlib").make_tmpdir

describe("lf.fit_linear", function()
  it("fits a line by least squares (GSL)", function()
    local s, c, se, rs = lf.fit_linear({1, 2, 3, 4, 5}, {2, 4.1, 5.9, 8.2, 9.8})
    assert.is_true(math.abs(s - 1.97) < 1e-14 and math.abs(c - 0.09) < 1e-13)
    assert.is_true(math.abs(se - math.sqrt(0.091 / 30)) < 1e-14)
    assert.is_true(math.abs(rs - math.sqrt(0.091 / 3)) < 1e-14)
  end)
  it("rejects bad input clearly", function()
    has(errmsg(lf.fit_linear, {1, 2, 3}, {1, 2}), "xs and ys differ in length (3 and 2)")
    has(errmsg(lf.fit_linear, {1}, {1}), "at least 2 points needed, got 1")
    has(errmsg(lf.fit_linear, {1, 1, 1}, {1, 2, 3}), "all 3 x values are equal")
    has(errmsg(lf.fit_linear, {1, "a", 3}, {1, 2, 3}), "xs[2] must be a number, got string")
    has(errmsg(lf.fit_linear, {1, 2, 3}, {1, 0 / 0, 3}), "ys[2] is not finite")
    has(errmsg(lf.fit_linear, 3, {1}), "two arrays of numbers expected")
  end)
end)

describe("lf.run", function()
  it("records the contract's columns plus observers", function()
    local tr = lf.run(stress_body(), {method = "vlv", h = 0.125, T = 10, every = 4,
                                      observe = {R33 = function(it) return it.R[3][3] end, "energy"}})
    assert.are.same({"t", "energy", "energy_error", "pi1", "pi2", "pi3", "Pi1", "Pi2", "Pi3", "casimir",
                     "orthogonality", "R33"}, tr.columns)
    assert.are.equal(80, tr.steps); assert.are.equal(21, tr.samples)
    assert.are.equal("vlv", tr.method); assert.are.equal(0.125, tr.h); assert.are.equal(10, tr.T)
    assert.is_number(tr.cpu_time)
    for _, c in ipairs(tr.columns) do assert.are.equal(21, #tr[c], c) end
    assert.are.equal(0, tr.t[1]); assert.is_true(math.abs(tr.t[21] - 10) < 1e-12)
    assert.is_true(math.abs(tr.t[2] - 0.5) < 1e-15)
    assert.are.equal(0, tr.energy_error[1])
    -- the columns agree with an integrator stepped by hand
    local it = lf.integrator("vlv", stress_body(), {h = 0.125}):step(40)
    local i = 11
    assert.is_true(math.abs(tr.energy[i] - it:energy()) < 1e-15)
    assert.are.equal(it.spatial_momentum[2], tr.pi2[i])
    assert.are.equal(it.momentum[3], tr.Pi3[i])
    assert.is_true(math.abs(tr.casimir[i] - it.momentum:norm()) < 1e-15)
    assert.are.equal(it.R[3][3], tr.R33[i])
    assert.is_true(tr.orthogonality[i] < 1e-14)
    -- vlv keeps the energy error small on this problem ([BOS]: ~1e-3 at h = 0.125)
    for k = 1, 21 do assert.is_true(math.abs(tr.energy_error[k]) < 2e-3) end
  end)
  it("lands on T with a shorter last step when T/h is not an integer", function()
    local tr = lf.run(stress_body(), {method = "eln", h = 0.3, T = 1, every = 2})
    assert.are.same({0, 0.6, 0.9, 1}, (function() local r = {} for k, t in ipairs(tr.t) do r[k] = math.floor(t * 1e9 + 0.5) / 1e9 end return r end)())
    assert.are.equal(4, tr.steps)
  end)
  it("runs a method written in Lua", function()
    local tr = lf.run(stress_body(), {method = lie_euler, h = 0.01, T = 1, every = 10})
    assert.are.equal("lua_lie_euler", tr.method)
    assert.are.equal(11, #tr.t); assert.are.equal(100, tr.steps)
    assert.is_true(math.abs(tr.energy_error[11]) > 0 and math.abs(tr.energy_error[11]) < 0.05)
  end)
  it("writes CSV with full precision and reads it back", function()
    local tr = lf.run(stress_body(), {method = "eln", h = 0.25, T = 50, every = 5,
                                      observe = {R11 = function(it) return it.R[1][1] end}})
    local path = os.tmpname()
    assert.are.equal(path, tr:write_csv(path))
    local f = io.open(path); local header = f:read("l"); f:close()
    assert.are.equal(table.concat(tr.columns, ","), header)
    local back = trajectory.read_csv(path)
    os.remove(path)
    assert.are.same(tr.columns, back.columns)
    for _, c in ipairs(tr.columns) do
      assert.are.equal(#tr[c], #back[c])
      for k = 1, #tr[c] do assert.are.equal(tr[c][k], back[c][k], c .. "[" .. k .. "]") end
    end
    has(errmsg(tr.write_csv, tr, "/nonexistent-dir/x.csv"), "write_csv: cannot open '/nonexistent-dir/x.csv'")
  end)
  it("serialises to JSON exactly", function()
    local tr = lf.run(stress_body(), {method = "vlv", h = 0.25, T = 5})
    local v = lf.json.decode(tr:to_json())
    assert.are.equal("vlv", v.method); assert.are.equal(20, v.steps)
    assert.are.same(tr.columns, v.columns)
    for k = 1, #tr.t do assert.are.equal(tr.energy[k], v.data.energy[k]) end
  end)
  it("rejects bad arguments with clear errors", function()
    local b = stress_body()
    has(errmsg(lf.run, b, {h = 0.1, T = 1}), "option 'method' (a method name or an lf.method) is required")
    has(errmsg(lf.run, b, {method = 3, h = 0.1, T = 1}), "option 'method' must be a method name or an lf.method, got number")
    has(errmsg(lf.run, b, {method = "nope", h = 0.1, T = 1}), "unknown method 'nope'")
    has(errmsg(lf.run, b, {method = "vlv", T = 1}), "option 'h' (step size) must be a finite positive number, got nil")
    has(errmsg(lf.run, b, {method = "vlv", h = -1, T = 1}), "option 'h' (step size) must be a finite positive number")
    has(errmsg(lf.run, b, {method = "vlv", h = 0.1, T = 0 / 0}), "option 'T' (final time) must be a finite positive number")
    has(errmsg(lf.run, b, {method = "vlv", h = 0.1, T = 1, every = 0}), "option 'every' must be an integer >= 1, got 0")
    has(errmsg(lf.run, b, {method = "vlv", h = 0.1, T = 1, every = 1.5}), "option 'every' must be an integer >= 1, got 1.5")
    has(errmsg(lf.run, b, {method = "vlv", h = 0.1, T = 1, progress = "yes"}), "option 'progress' must be true, false or nil")
    has(errmsg(lf.run, b, {method = "vlv", h = 0.1, T = 1, observe = {energy = function() return 1 end}}),
        "observer 'energy' clashes with a built-in column")
    has(errmsg(lf.run, b, {method = "vlv", h = 0.1, T = 1, observe = {"nonsense"}}), "array entries must name built-in columns")
    has(errmsg(lf.run, b, {method = "vlv", h = 0.1, T = 1, observe = {plot = function() return 1 end}}), "observer name 'plot' is reserved")
    has(errmsg(lf.run, b, {method = "vlv", h = 0.1, T = 1, observe = {x = 3}}), "observer 'x' must be a function(it) returning a number, got number")
    has(errmsg(lf.run, b, {method = "vlv", h = 0.1, T = 1, observe = {x = function() return "a" end}}),
        "observer 'x' returned string at t=0, expected a number")
    has(errmsg(lf.run, b, {method = "vlv", h = 0.1, T = 1, observe = {x = function(it) if it.t > 0.5 then error("boom") end return 0 end}}),
        "observer 'x' failed at t=0.6")
    has(errmsg(lf.run, b, {method = "vlv", h = 0.1, T = 1, observe = {x = function(it) if it.t > 0.5 then error("boom") end return 0 end}}), "boom")
    has(errmsg(lf.run, nil, {method = "vlv", h = 0.1, T = 1}), "argument #1 must be a system")
    has(errmsg(lf.run, b), "argument #2 must be an options table")
    -- a failing step names the method, the step size and the time
    has(errmsg(lf.run, b, {method = "liemid", h = 0.1, T = 1}), "lf.run: liemid is the torque-free LIEMID")
  end)
end)

describe("lf.order", function()
  local steps = {0.1, 0.05, 0.025, 0.0125}
  it("measures order 2 for vlv on the stress problem", function()
    local o = lf.order{system = stress_body(), method = "vlv", T = 5, steps = steps}
    assert.are.equal("vlv", o.method); assert.are.equal(5, o.T)
    assert.is_true(math.abs(o.order - 2) < 0.15, o.order)
    assert.are.equal(o.order, o.order_R)
    assert.is_true(math.abs(o.order_omega - 2) < 0.15, o.order_omega)
    assert.are.equal(4, #o.table)
    for i, row in ipairs(o.table) do
      assert.are.equal(steps[i], row.h)
      assert.are.equal(math.floor(5 / steps[i] + 0.5), row.steps)
      assert.is_true(row.err_R > 0 and row.err_omega > 0)
      if i > 1 then assert.is_true(row.err_R < o.table[i - 1].err_R) end
    end
  end)
  it("measures order 1 for a Lie–Euler method written in Lua", function()
    local o = lf.order{system = stress_body(), method = lie_euler, T = 2, steps = {0.02, 0.01, 0.005}}
    assert.are.equal("lua_lie_euler", o.method)
    assert.is_true(math.abs(o.order - 1) < 0.15, o.order)
    assert.is_true(math.abs(o.order_omega - 1) < 0.15, o.order_omega)
  end)
  it("accepts a given reference state", function()
    local sys = stress_body()
    local ref = lf.reference(sys, 2, {rtol = 1e-13})
    local a = lf.order{system = sys, method = "eln", T = 2, steps = {0.1, 0.05}, reference = ref}
    local b = lf.order{system = sys, method = "eln", T = 2, steps = {0.1, 0.05}}
    assert.is_true(math.abs(a.table[1].err_R - b.table[1].err_R) < 1e-12)
  end)
  it("rejects bad arguments", function()
    has(errmsg(lf.order, {system = stress_body(), method = "vlv", T = 1, steps = {0.1}}), "option 'steps' must list at least 2 step sizes")
    has(errmsg(lf.order, {system = stress_body(), method = "vlv", T = 1, steps = {0.1, 0.1}}), "step size 0.1 listed twice")
    has(errmsg(lf.order, {system = stress_body(), method = "vlv", T = 1, steps = {0.1, -1}}), "steps[2] must be a finite positive number")
    has(errmsg(lf.order, {method = "vlv", T = 1, steps = {0.1, 0.05}}), "option 'system' is required")
    has(errmsg(lf.order, {system = stress_body(), T = 1, steps = {0.1, 0.05}}), "option 'method'")
    has(errmsg(lf.order, {system = stress_body(), method = "vlv", steps = {0.1, 0.05}}), "option 'T' (final time)")
    has(errmsg(lf.order, {system = stress_body(), method = "vlv", T = 1, steps = {0.1, 0.05}, reference = {}}),
        "option 'reference' must be a table {R=, omega=}")
    has(errmsg(lf.order, "vlv"), "options table")
  end)
end)

describe("lf.drift", function()
  it("tells the bounded vlv from the drifting eln (stress problem, T = 2000)", function()
    -- T = 2000 is enough: the statistic grows linearly with T for a drift (eln: ~5 here, ~24 at
    -- T = 10000) and stays ~0.01-0.06 for vlv; the threshold is 0.5
    local v = lf.drift(lf.run(stress_body(), {method = "vlv", h = 0.25, T = 2000, every = 10}))
    local e = lf.drift(lf.run(stress_body(), {method = "eln", h = 0.25, T = 2000, every = 10}))
    assert.are.equal("bounded", v.verdict); assert.are.equal("drift", e.verdict)
    assert.is_true(v.statistic < 0.2, v.statistic)
    assert.is_true(e.statistic > 3, e.statistic)
    assert.are.equal(0.5, e.threshold); assert.is_string(e.rule)
    -- eln's energy decreases: slope ~ -4e-6 per time unit at h = 0.25 ([BOS], figure 1(b))
    assert.is_true(e.slope < -2e-6 and e.slope > -8e-6, e.slope)
    assert.is_true(math.abs(v.slope) < 1e-7, v.slope)
    assert.is_true(v.reliable and e.reliable)
    -- a run shorter than a few oscillations is flagged
    local short = lf.drift(lf.run(lf.rigidbody{inertia = {1, 2, 3}, omega = {1, 0.5, 0.2}},
                                  {method = "vlv", h = 0.01, T = 10, every = 100}))
    assert.is_false(short.reliable); assert.is_true(short.crossings < 20)
  end)
  it("applies its statistic to synthetic data", function()
    local t, osc, trend = {}, {}, {}
    for i = 1, 2001 do
      t[i] = (i - 1) * 5
      osc[i] = 1e-3 * math.sin(0.37 * t[i]) + 4e-4 * math.cos(1.3 * t[i])
      trend[i] = osc[i] + 2e-7 * t[i]
    end
    local a = lf.drift{t = t, energy_error = osc}
    local b = lf.drift{t = t, energy_error = trend}
    assert.are.equal("bounded", a.verdict); assert.are.equal("drift", b.verdict)
    -- statistic = |slope| T / std(residuals): 2e-7 * 1e4 / (sqrt((1e-6 + 1.6e-7) / 2) = 7.6e-4) ~ 2.6
    assert.is_true(math.abs(b.statistic - 2e-3 / math.sqrt(1.16e-6 / 2)) < 0.05, b.statistic)
    assert.are.equal("bounded", lf.drift({t = t, energy_error = trend}, {threshold = 5}).verdict)
    -- round-off level errors are "bounded" whatever their trend
    local tiny = {}
    for i = 1, #t do tiny[i] = 1e-16 * i end
    local r = lf.drift{t = t, energy_error = tiny}
    assert.are.equal("bounded", r.verdict); assert.is_true(r.statistic > 1)
  end)
  it("rejects bad arguments", function()
    has(errmsg(lf.drift, 3), "argument #1 must be a trajectory")
    has(errmsg(lf.drift, {t = {0, 1}, energy_error = {0, 1}}), "at least 3 samples needed, the trajectory has 2")
    has(errmsg(lf.drift, {t = {0, 1, 2}, energy_error = {0, 1}}), "differ in length")
    has(errmsg(lf.drift, {t = {0, 1, 2}, energy_error = {0, 1, 2}}, {threshold = -1}), "option 'threshold' must be a finite positive number")
  end)
end)

describe("lf.stress_test", function()
  it("shows eln's O(T h^2) drift: slope ratio ~4 between h = 0.25 and 0.125", function()
    local r = lf.stress_test("eln", {h = {0.125, 0.25}, T = 1000})
    assert.are.equal("eln", r.method); assert.are.equal(1000, r.T)
    assert.are.equal(2, #r.runs)
    assert.are.equal("drift", r.verdict)
    assert.are.equal(r.runs[1].slope, r.slope)
    assert.is_true(math.abs(r.ratio - 4) < 0.4, r.ratio)
    assert.is_true(math.abs(r.exponent - 2) < 0.15, r.exponent)
    for _, run in ipairs(r.runs) do
      assert.are.equal("drift", run.verdict)
      assert.are.equal(run.traj.steps, math.floor(1000 / run.h + 0.5))
      assert.is_number(run.cpu_time)
    end
  end)
  it("finds vlv bounded and accepts a single h", function()
    local r = lf.stress_test("vlv", {h = 0.25, T = 2000})
    assert.are.equal("bounded", r.verdict); assert.are.equal(1, #r.runs)
    assert.is_nil(r.ratio)
  end)
  it("runs a method written in Lua", function()
    local r = lf.stress_test(lie_euler, {h = {0.01, 0.02}, T = 2, every = 10})
    assert.are.equal("lua_lie_euler", r.method)
    assert.are.equal(200, r.runs[1].steps)
    assert.is_number(r.ratio)
  end)
  it("rejects bad arguments", function()
    has(errmsg(lf.stress_test, nil), "option 'method'")
    has(errmsg(lf.stress_test, "vlv", {h = {}}), "option 'h' must be a step size or a list of them")
    has(errmsg(lf.stress_test, "vlv", {h = 0}), "h[1] must be a finite positive number")
    has(errmsg(lf.stress_test, "vlv", {T = -5}), "option 'T' must be a finite positive number")
  end)
end)

describe("lf.json, lf.write_json, lf.mkdir_p", function()
  it("encodes deterministically and exactly", function()
    assert.are.equal('{"a":[1,2.5,0.1],"b":{"x":null,"y":true},"c":"q\\"\\n"}',
                     lf.json.encode{c = 'q"\n', b = {x = 0 / 0, y = true}, a = {1, 2.5, 0.1}})
    assert.are.equal("[1.0,2.0,3.0]", lf.json.encode(lf.vec3{1, 2, 3}))
    assert.are.equal("0.1", lf.json.encode(0.1))
    assert.are.equal(1 / 3, lf.json.decode(lf.json.encode(1 / 3)))
    assert.are.equal("{}", lf.json.encode{})
    assert.are.equal("[]", lf.json.encode(setmetatable({}, lf.json.array_mt)))
    has(errmsg(lf.json.encode, {f = print}), "unsupported value of type function at $.f")
    local cyc = {}; cyc.self = cyc
    has(errmsg(lf.json.encode, cyc), "reference cycle at $.self")
    has(errmsg(lf.json.decode, "{bad"), "json.decode")
  end)
  it("writes JSON files, creating the directories", function()
    local dir = tmpdir()
    local path = dir .. "/a/b/summary.json"
    assert.are.equal(path, lf.write_json(path, {slope = -1.0546e-6, runs = {{h = 0.125}, {h = 0.25}}}))
    local f = io.open(path); local s = f:read("a"); f:close()
    local v = lf.json.decode(s)
    assert.are.equal(-1.0546e-6, v.slope); assert.are.equal(0.25, v.runs[2].h)
    assert.is_true(lf.mkdir_p(dir .. "/a/b")) -- existing: fine
    has(errmsg(lf.mkdir_p, path .. "/x"), "mkdir_p: ")
    os.remove(path); os.remove(dir .. "/a/b"); os.remove(dir .. "/a"); os.remove(dir)
  end)
end)

describe("lf.run streaming and its memory bound", function()
  local body = lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                            potential = lf.potential.stress{}}
  it("streams samples to a CSV file that reads back to the same trajectory", function()
    local path = os.tmpname()
    local mem = lf.run(body, {method = "vlv", h = 0.125, T = 10, every = 2})
    local tr = lf.run(body, {method = "vlv", h = 0.125, T = 10, every = 2, stream = path})
    assert.are.equal(path, tr.file)
    assert.is_nil(tr.energy)
    assert.are.equal(mem.samples, tr.samples)
    assert.are.equal(mem.energy[#mem.energy], tr.last.energy)
    local back = tr:load()
    for _, c in ipairs(mem.columns) do
      for k = 1, mem.samples do assert.are.equal(mem[c][k], back[c][k]) end
    end
    os.remove(path)
  end)
  it("refuses a run that would not fit in memory, and says what to do", function()
    has(errmsg(lf.run, body, {method = "vlv", h = 0.125, T = 1e6, memory_limit = 1e6}),
        "sample less often (every = ")
    has(errmsg(lf.run, body, {method = "vlv", h = 0.125, T = 1, stream = 3}), "option 'stream' must be a file path")
    has(errmsg(lf.run, body, {method = "vlv", h = 0.125, T = 1, stream = "/dev/null/x.csv"}), "cannot open the stream")
  end)
  it("keeps the samples taken before a failure in the stream", function()
    local bad = lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.05, 0}, omega = {0, 0.5, 0.625},
      potential = function(R) return R[3][3] > 0.99 and R[3][3] or 0 / 0 end}
    local path = os.tmpname()
    local msg = errmsg(lf.run, bad, {method = "vlv", h = 0.125, T = 100, stream = path})
    has(msg, "samples up to there are in '" .. path .. "'")
    os.remove(path)
  end)
end)
