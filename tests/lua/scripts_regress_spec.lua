-- SPDX-License-Identifier: GPL-3.0-or-later
-- Regressions of the pure-Lua part of the module (scripts/lieflow/run/init.lua, run/analysis.lua,
-- view/plot.lua, files/json.lua, run/autodiff.lua, run/luamethod.lua): each test failed before its fix.
local lf = require "lieflow"
local plot = require "lieflow.view.plot"

local T = require "testlib"
local errmsg, has, read, shq, make_tmpdir = T.errmsg, T.has, T.read, T.shq, T.make_tmpdir
local function finite(x) return x == x and x ~= math.huge and x ~= -math.huge end

local TMP
setup(function() TMP = make_tmpdir() end)
teardown(function()
  if TMP and TMP:match("^/tmp/") then os.execute("rm -rf -- " .. shq(TMP)) end
end)

-- a step of the free rigid body's attitude, written in Lua (omega constant: no dynamics needed)
local drift_free = lf.method{name = "lua_rot", step = function(s, h) s.R = s.R * lf.so3.exp(s.omega * h) end}

describe("lf.run", function()
  it("ends in finite time with an error when T/h cannot be counted (it looped forever)", function()
    local S = lf.stress_system()
    has(errmsg(lf.run, S, {method = "vlv", h = 1e-300, T = 1e300, progress = false}), "steps is too many")
    has(errmsg(lf.run, S, {method = "vlv", h = 1e-300, T = 1, progress = false}), "steps is too many")
  end)

  it("records the final time when T is far below h (only t = 0 was recorded)", function()
    local tr = lf.run(lf.stress_system(), {method = "vlv", h = 1, T = 1e-10})
    assert.are.equal(2, tr.samples)
    assert.are.equal(0, tr.t[1])
    assert.are.equal(1e-10, tr.t[2])
  end)

  it("ends a Lua method's run at T exactly: its time no longer accumulates rounding errors", function()
    local S = lf.stress_system()
    local tr = lf.run(S, {method = drift_free, h = 0.1, T = 100, every = 100})
    assert.are.equal(100, tr.t[#tr.t]) -- was 99.999999999998593
    assert.are.equal(1000, tr.steps)
    tr = lf.run(S, {method = drift_free, h = 0.1, T = 1})
    assert.are.equal(11, tr.samples)
    assert.are.equal(1, tr.t[11]) -- was 0.99999999999999989
    local it = lf.integrator(drift_free, S, {h = 0.1})
    it:step(1000)
    assert.are.equal(100, it.t)
    -- set_state and advance_to restart the compensated sum
    it:set_state{t = 5}
    it:step(10)
    assert.are.equal(6, it.t)
    it:advance_to(7.05)
    assert.are.equal(7.05, it.t)
  end)

  it("rejects observer names that would break the CSV header (the file could not be read back)", function()
    local S = lf.stress_system()
    local f = function() return 1 end
    for _, name in ipairs{"a,b", "", "a\nb", 'a"b'} do
      has(errmsg(lf.run, S, {method = "vlv", h = 0.5, T = 1, observe = {[name] = f}}), "free of commas")
    end
    local tr = lf.run(S, {method = "vlv", h = 0.5, T = 1, observe = {["x y.z"] = f}})
    local path = TMP .. "/obs.csv"
    tr:write_csv(path)
    local back = lf.read_csv(path)
    assert.are.equal(12, #back.columns)
    assert.are.same({1, 1, 1}, back["x y.z"])
  end)
end)

describe("lf.order", function()
  local S = lf.stress_system()
  local ref = lf.reference(S, 1, {rtol = 1e-13})

  it("takes a reference given as plain tables (it counted the rows of R as bodies)", function()
    local o1 = lf.order{system = S, method = "vlv", T = 1, steps = {0.1, 0.05}, reference = ref}
    local w = {ref.omega[1], ref.omega[2], ref.omega[3]}
    for _, R in ipairs{ref.R:totable(), {ref.R[1][1], ref.R[1][2], ref.R[1][3], ref.R[2][1], ref.R[2][2],
                                           ref.R[2][3], ref.R[3][1], ref.R[3][2], ref.R[3][3]}} do
      local o2 = lf.order{system = S, method = "vlv", T = 1, steps = {0.1, 0.05}, reference = {R = R, omega = w}}
      assert.are.equal(o1.order_R, o2.order_R)
      assert.are.equal(o1.order_omega, o2.order_omega)
      assert.are.equal(o1.table[2].err_R, o2.table[2].err_R)
    end
  end)

  it("still takes several bodies' references as arrays of plain tables", function()
    local B = lf.bodies{{inertia = {1, 2, 3}, R = lf.so3.I, omega = {1, 0, 0}},
                        {inertia = {2, 2, 3}, R = lf.so3.exp{0, 0.3, 0}, omega = {0, 1, 0}},
                        potential = function(Rs) return (Rs[1] - Rs[2]):norm() ^ 2 end}
    local r = lf.reference(B, 1, {rtol = 1e-13})
    local o1 = lf.order{system = B, method = "vlv", T = 1, steps = {0.1, 0.05}, reference = r}
    local Rs, ws = {}, {}
    for i = 1, 2 do
      Rs[i] = r.R[i]:totable()
      ws[i] = {r.omega[i][1], r.omega[i][2], r.omega[i][3]}
    end
    local o2 = lf.order{system = B, method = "vlv", T = 1, steps = {0.1, 0.05}, reference = {R = Rs, omega = ws}}
    assert.are.equal(o1.order_R, o2.order_R)
    assert.are.equal(o1.order_omega, o2.order_omega)
    has(errmsg(lf.order, {system = B, method = "vlv", T = 1, steps = {0.1, 0.05},
                          reference = {R = r.R[1], omega = r.omega[1]}}), "field 'R': array of 2 values expected")
  end)

  it("rejects step sizes too small for T before integrating", function()
    has(errmsg(lf.order, {system = S, method = "vlv", T = 1e300, steps = {1e-300, 1}, reference = ref}),
      "steps is too many")
  end)
end)

describe("lf.stress_test", function()
  it("rejects a step size listed twice (ratio 1 and exponent NaN)", function()
    has(errmsg(lf.stress_test, "vlv", {h = {0.25, 0.25}, T = 20, every = 1}), "listed twice")
  end)
end)

describe("lf.json.encode", function()
  local J = lf.json

  it("rejects strings that are not UTF-8 (the file was not valid JSON)", function()
    has(errmsg(J.encode, {s = "\xff\xfe"}), "not valid UTF-8 at $.s")
    has(errmsg(J.encode, {["\xff"] = 1}), "not valid UTF-8")
    assert.are.equal('"é\\u0000\\u001f\\u007f\\"\\\\"', J.encode("é\0\31\127\"\\"))
  end)

  it("rejects keys that give the same member name (a value was lost, the name repeated)", function()
    has(errmsg(J.encode, {[1] = "a", ["1"] = "b", x = 1}), 'both become the member name "1"')
    has(errmsg(J.encode, {[math.huge] = 1}), "has no JSON form")
    assert.are.equal('{"1.5":"a","2":"b"}', J.encode{[1.5] = "a", [2] = "b"})
  end)

  it("reports a __tojson that returns its argument as a cycle (it looped forever)", function()
    local t = setmetatable({}, {__tojson = function(s) return s end})
    has(errmsg(J.encode, {a = t}), "reference cycle at $.a")
    local a, b = {}, {}
    setmetatable(a, {__tojson = function() return {b} end})
    setmetatable(b, {__tojson = function() return {a} end})
    has(errmsg(J.encode, a), "reference cycle")
    -- the same value twice (no cycle) is fine
    assert.are.equal("[null,null]", J.encode{J.null, J.null})
    local tr = lf.run(lf.stress_system(), {method = "vlv", h = 0.5, T = 1})
    assert.are.equal(3, #J.decode(J.encode{tr, tr})[2].data.t)
  end)
end)

describe("lf.plot", function()
  local HAVE = plot.gnuplot_available()
  local it_gp = HAVE and it or pending

  it_gp("draws constant data on a log axis (gnuplot failed: empty range)", function()
    local old = plot.warn
    plot.warn = function() end
    local ok, res = pcall(plot.plot, {x = {1, 2, 3}, y = {3, 3, 3}, logy = true, file = TMP .. "/c.png"})
    local ok2, res2 = pcall(plot.plot, {x = {1, 2, 3}, y = {3, 3, 3 * (1 + 1e-13)}, logy = true,
                                        file = TMP .. "/c2.svg"})
    plot.warn = old
    assert(ok, res)
    assert(ok2, res2)
    assert.truthy(read(TMP .. "/c.png"))
    assert.truthy(read(TMP .. "/c2.svg"))
  end)

  local okl, lfs = pcall(require, "lfs")
  local it_lfs = (HAVE and okl and type(lfs) == "table" and lfs.chdir) and it or pending
  it_lfs("renders a file whose name starts with '-' (gnuplot took the script for an option)", function()
    local cwd = assert(lfs.currentdir())
    assert(lfs.chdir(TMP))
    local ok, res = pcall(plot.plot, {x = {1, 2, 3}, y = {1, 2, 3}, file = "-dash.png"})
    lfs.chdir(cwd)
    assert(ok, res)
    assert.truthy(read(TMP .. "/-dash.png"))
  end)
end)

describe("autodiff", function()
  local ad = lf.autodiff
  local function same(d, v, g1, g2, g3)
    assert.are.equal(v, ad.value(d))
    assert.are.same({g1, g2, g3}, {ad.grad(d)})
  end

  it("gives x^0 the derivative 0, also at x = 0 (was NaN)", function()
    same(ad.dual(0, {1, 0, 0}) ^ 0, 1, 0, 0, 0)
    same(ad.dual(2, {1, 0, 0}) ^ 0, 1, 0, 0, 0)
  end)

  it("differentiates sqrt at 0 along directions in which the argument is constant (was NaN)", function()
    local x = ad.dual(0, {1, 0, 0})
    same(lf.math.sqrt(x * x), 0, 0, 0, 0)
    same(lf.math.sqrt(x * x) ^ 2, 0, 0, 0, 0)
    same(lf.math.sqrt(ad.dual(0)), 0, 0, 0, 0)
    same(lf.math.sqrt(ad.dual(4, {1, 0, 0})), 2, 0.25, 0, 0)
    local s = lf.math.sqrt(ad.dual(0, {1, 0, 0}))  -- genuinely infinite where the argument moves: an error
    assert.has_error(function() ad.grad(s) end, "ad.grad: the derivative is not finite (the value went through a singular point of a function, e.g. sqrt or |v| at 0)")
    same(lf.math.asin(ad.dual(1, {0, 0, 0})), math.asin(1), 0, 0, 0)
    same(lf.math.acos(ad.dual(1, {0, 0, 0})), 0, 0, 0, 0)
  end)

  it("d/db 0^b = 0 for b > 0 (was NaN)", function()
    same(0 ^ ad.dual(2, {1, 0, 0}), 0, 0, 0, 0)
    same(ad.dual(0, {1, 0, 0}) ^ ad.dual(2, {0, 1, 0}), 0, 0, 0, 0)
    same(ad.dual(2, {1, 0, 0}) ^ ad.dual(3, {0, 1, 0}), 8, 12, 8 * math.log(2), 0)
  end)

  it("gives the torque of dist^2, angle^2 and ||R - Rm||^2 at their minimum R = Rm (an error before)", function()
    local Rm = lf.so3.exp{0.1, 0.2, 0.3}
    for _, U in ipairs{function(R) return lf.so3.dist(R, Rm) ^ 2 end,
                       function(R) return lf.so3.angle(R, Rm) ^ 2 end,
                       function(R) return (R - Rm):norm() ^ 2 end} do
      local tau = ad.torque(U, Rm)
      assert.are.same({0, 0, 0}, {tau[1], tau[2], tau[3]})
      -- and next to it the torque is finite and small
      local t2 = ad.torque(U, Rm * lf.so3.exp{1e-6, 0, 0})
      assert.is_true(finite(t2:norm()) and t2:norm() < 1e-5)
    end
    local body = lf.rigidbody{inertia = {1, 2, 3}, R = Rm, omega = {0.1, 0, 0},
                              potential = function(R) return lf.so3.dist(R, Rm) ^ 2 end}
    local tr = lf.run(body, {method = "vlv", h = 0.1, T = 1})
    assert.are.equal(11, tr.samples)
    assert.is_true(math.abs(tr.energy_error[11]) < 1e-3)
  end)

  it("names a non-finite derivative of U instead of failing in lf.vec3", function()
    local msg = errmsg(ad.torque, function(R) return lf.math.atan2(R[1][2] - R[1][2], R[1][3] - R[1][3]) end,
      lf.so3.I)
    has(msg, "the derivative is not finite")
    has(msg, "potential U(R)")
  end)
end)
