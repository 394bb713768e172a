-- SPDX-License-Identifier: GPL-3.0-or-later
-- busted spec for forcings of rigid bodies from Lua (lua/shared/forcing.c, lua/lib/forcing.c;
-- core/model/forcing.c, lf_forcing_graph in core/model/model_graph.c): forcing = function(t, state
-- [, p]) compiled against the same function interpreted (compile = false); what a compiled forcing
-- depends on and its Jacobian, seen through the integrators' counts; damping = {...} and the
-- lf.forcing built-ins against the same forcings written in Lua; the exact decay of a damped free
-- body; methods that refuse a forcing; objects' lifetimes; every bad input, by its message.
local lf = require "lieflow"
local T = require "testlib"
local has, errmsg = T.has, T.errmsg

local NO_CC = os.getenv("LIEFLOW_CC") == "/nonexistent"
local function compiled(sys) return sys.forcing_info.compiled:find("^native") or sys.forcing_info.compiled:find("^tape") end

-- the largest difference of the fields of two states, relative to the size of the first
local function diff(a, b)
  local w = 0
  local function d(x, y)
    if type(x) == "table" then
      for i = 1, #x do d(x[i], y[i]) end
    else
      w = math.max(w, (x - y):norm() / math.max(1, x:norm()))
    end
  end
  for _, k in ipairs{"R", "omega", "x", "v"} do
    if a[k] then d(a[k], b[k]) end
  end
  return w
end

local function run(method, sys, h, n)
  local it = lf.integrator(method, sys, {h = h or 0.01})
  it:step(n or 100)
  return it:state(), it
end

local J = {1, 2, 3}
local function body(spec)
  local t = {inertia = J, R = lf.so3.exp{0.3, -0.2, 0.5}, omega = {1, 0.5, -0.7}}
  for k, v in pairs(spec) do t[k] = v end
  return lf.rigidbody(t)
end

-- a forcing of t, R and omega: a drive of the spatial z axis, modulated, and a damping
local function mixed(t, s) return {torque = s.R:T() * lf.vec3(0, 0, 0.3 * math.cos(2 * t)) - 0.2 * s.omega} end
local methods = {"vlv", "lgvi", "no_squish", "dlm", "split_exact", "rkmk4"}

describe("a Lua forcing", function()
  it("compiled equals the same function interpreted, to round-off, on every method that takes it", function()
    local c, i = body{forcing = mixed}, body{forcing = mixed, compile = false}
    assert.truthy(compiled(c))
    assert.equal("interpreted: compile = false", i.forcing_info.compiled)
    for _, m in ipairs(methods) do
      local a, b = run(m, c), run(m, i)
      assert(diff(a, b) < 1e-12, ("%s: compiled and interpreted differ by %g"):format(m, diff(a, b)))
      assert(diff(a, run(m, body{})) > 1e-3, m .. ": the forcing did nothing")
    end
  end)

  it("of bodies that translate and of several bodies: compiled equals interpreted", function()
    local function f(t, s, p)
      return {torque = {-p.c * s.omega[1], lf.vec3(0, 0, math.sin(t))},
              force = {-p.c * s.v[1] + lf.vec3(0, 0, -1), s.R[2] * lf.vec3(1, 0, 0) - p.c * s.x[2]}}
    end
    local function two(compile)
      return lf.bodies{{mass = 2, inertia = {1, 2, 2.5}, omega = {1, 0, 0.3}, v = {1, 0, 0}},
                       {mass = 1, inertia = {1, 1, 1.5}, x = {1, 0, 0}, omega = {0, 1, 0}},
                       forcing = f, params = {c = 0.3}, compile = compile}
    end
    local c, i = two(), two(false)
    assert.truthy(compiled(c))
    assert.is_true(c.forcing_info.velocity and c.forcing_info.time and c.forcing_info.jacobian)
    for _, m in ipairs{"vlv", "split_exact", "rkmk4"} do
      local a, b = run(m, c), run(m, i)
      assert(diff(a, b) < 1e-12, ("%s: compiled and interpreted differ by %g"):format(m, diff(a, b)))
    end
    -- its parameters change without compiling again, for both paths alike
    c:set_params{c = 0}
    i:set_params{c = 0}
    local a, b = run("vlv", c), run("vlv", i)
    assert(diff(a, b) < 1e-12)
    assert(diff(a, run("vlv", two())) > 1e-3)
  end)

  it("says what it depends on, read from its graph, and has its Jacobian in the velocities", function()
    local cases = { -- forcing, velocity, time, affine
      {function(t, s) return {torque = {0.1 * math.sin(t), 0, 0.05}} end, false, true, false},
      {function(t, s) return {torque = s.R:T() * lf.vec3(0, 0, 0.1)} end, false, false, false},
      {function(t, s) return {torque = -0.1 * s.omega} end, true, false, true},
      {function(t, s) return {torque = -0.1 * s.omega:norm() * s.omega} end, true, false, false}, -- quadratic drag
      {function(t, s) return {torque = s.R:T() * lf.vec3(0, 0, math.cos(t)) - 0.1 * s.omega} end, true, true, true},
      {function(t, s) return {} end, false, false, false},
    }
    for k, case in ipairs(cases) do
      local sys = body{forcing = case[1]}
      local fi = sys.forcing_info
      assert(compiled(sys), k)
      assert(fi.velocity == case[2] and fi.time == case[3] and fi.affine == case[4],
        ("case %d: velocity %s, time %s, affine %s"):format(k, tostring(fi.velocity), tostring(fi.time), tostring(fi.affine)))
      assert.equal(case[2], fi.jacobian)
      -- the kicks of the splittings: explicit for a forcing free of the velocities (no Jacobian, no
      -- Newton iteration), one linear solve for an affine one, Newton iterations otherwise
      for _, m in ipairs{"no_squish", "split_exact", "dlm"} do
        local _, it = run(m, sys)
        local what = ("case %d, %s: %d Newton iterations, %d Jacobians"):format(k, m, it.newton_iters, it.jac_evals)
        if not case[2] then assert(it.newton_iters == 0 and it.jac_evals == 0, what)
        elseif case[4] then assert(it.newton_iters == 0 and it.jac_evals > 0, what)
        else assert(it.newton_iters > 0 and it.jac_evals > 0, what) end
      end
    end
    -- the compiled Jacobian replaces differences: fewer evaluations than the interpreted forcing's
    local f = cases[3][1]
    local i = body{forcing = f, compile = false}
    assert.is_true(i.forcing_info.velocity and i.forcing_info.time) -- interpreted: assumed
    assert.is_false(i.forcing_info.jacobian or i.forcing_info.affine)
    for _, m in ipairs{"vlv", "no_squish"} do
      local _, a = run(m, body{forcing = f})
      local _, b = run(m, i)
      assert(a.f_evals < b.f_evals, ("%s: %d evaluations compiled, %d interpreted"):format(m, a.f_evals, b.f_evals))
    end
  end)

  it("that cannot be traced is called (compile = auto), or refused (an explicit backend)", function()
    local function branchy(t, s) if t > 1 then return {torque = {0, 0, 1}} end return {torque = -0.1 * s.omega} end
    local sys = body{forcing = branchy}
    has(sys.forcing_info.compiled, "interpreted: ")
    has(sys.compiled, "forcing: interpreted: ")
    local a = run("vlv", sys)
    local b = run("vlv", body{forcing = branchy, compile = false})
    assert.equal(0, diff(a, b))
    has(errmsg(body, {forcing = branchy, compile = "tape"}), "the forcing cannot be compiled")
  end)

  it("of zero runs bit for bit as no forcing", function()
    for _, m in ipairs{"vlv", "no_squish", "split_exact"} do
      assert.equal(0, diff(run(m, body{forcing = function() return {} end}), run(m, body{})), m)
    end
  end)
end)

describe("damping and the built-in forcings", function()
  it("damping = {...} equals the same damping written in Lua, to round-off", function()
    local a = {0.3, 0.1, 0.2}
    local builtin = body{damping = {angular = a}}
    local lua = body{forcing = function(t, s) return {torque = {-a[1] * s.omega.x, -a[2] * s.omega.y, -a[3] * s.omega.z}} end}
    assert.is_true(builtin.forcing_info.velocity and builtin.forcing_info.jacobian)
    assert.is_false(builtin.forcing_info.time)
    for _, m in ipairs(methods) do
      local x, y = run(m, builtin), run(m, lua)
      assert(diff(x, y) < 1e-13, ("%s: %g"):format(m, diff(x, y)))
    end
    -- bodies that translate: the linear damping too
    local function ball(spec)
      local t = {mass = 2, inertia = {1, 1, 1.5}, v = {1, -2, 0.5}, omega = {0, 1, 0.2}}
      for k, v in pairs(spec) do t[k] = v end
      return lf.rigidbody(t)
    end
    local x = run("vlv", ball{damping = {linear = 0.5, angular = 0.1}})
    local y = run("vlv", ball{forcing = function(t, s) return {torque = -0.1 * s.omega, force = -0.5 * s.v} end})
    assert(diff(x, y) < 1e-13)
  end)

  it("a free body damped by angular = gamma J has |Pi| = |Pi_0| exp(-gamma t)", function()
    local gamma = 0.7
    local sys = body{damping = {angular = {gamma * J[1], gamma * J[2], gamma * J[3]}}}
    local Pi0 = sys.momentum:norm()
    for _, m in ipairs{"vlv", "lgvi", "no_squish", "split_exact", "rkmk4"} do
      local _, it = run(m, sys, 1e-3, 1000)
      local err = math.abs(it.momentum:norm() / Pi0 - math.exp(-gamma * 1))
      assert(err < 1e-7, ("%s: |Pi| off exp(-gamma t) by %g"):format(m, err)) -- measured: 1.4e-8 (vlv, lgvi), 3.5e-9, 1e-15 (rkmk4)
    end
  end)

  it("lf.forcing.torque and .torque_table equal the same torques written in Lua", function()
    local tau = lf.vec3(0.1, -0.2, 0.3)
    local pairs_ = {
      {lf.forcing.torque{torque = tau}, function(t, s) return {torque = tau} end},
      {lf.forcing.torque{torque = tau, frame = "space"}, function(t, s) return {torque = s.R:T() * tau} end},
    }
    for k, p in ipairs(pairs_) do
      for _, m in ipairs{"vlv", "split_exact", "rkmk4"} do
        local x, y = run(m, body{forcing = p[1]}), run(m, body{forcing = p[2]})
        assert(diff(x, y) < 1e-13, ("case %d, %s: %g"):format(k, m, diff(x, y)))
      end
    end
    -- a table of times: linear between them, constant outside (its Lua twin branches: interpreted)
    local ts, taus = {0.2, 0.5, 0.9}, {{0, 0, 1}, {1, 0, 0}, {0, -1, 0}}
    local tab = lf.forcing.torque_table{t = ts, torque = taus}
    assert.is_true(tab.time)
    assert.is_false(tab.velocity)
    local function lua(t)
      if t <= ts[1] then return lf.vec3(taus[1]) end
      if t >= ts[3] then return lf.vec3(taus[3]) end
      local i = t < ts[2] and 1 or 2
      local u = (t - ts[i]) / (ts[i + 1] - ts[i])
      return lf.vec3(taus[i]) + u * (lf.vec3(taus[i + 1]) - lf.vec3(taus[i]))
    end
    for _, m in ipairs{"vlv", "split_exact", "rkmk4"} do
      local x = run(m, body{forcing = tab})
      local y = run(m, body{forcing = function(t) return {torque = lua(t)} end, compile = false})
      assert(diff(x, y) < 1e-13, ("%s: %g"):format(m, diff(x, y)))
    end
  end)

  it("sums an array of forcings with the damping, and shows what acts", function()
    local f = lf.forcing.torque{torque = {0, 0, 0.5}}
    local sys = body{forcing = {function(t, s) return {torque = -0.1 * s.omega} end, f}, damping = {angular = 0.2}}
    assert.equal("lua + torque(torque = (0, 0, 0.5), frame = body) + damping(linear = 0, angular = (0.2, 0.2, 0.2))",
                 sys.forcing_name)
    has(tostring(sys), "forcing = lua + torque(")
    assert.is_true(sys.forcing_info.velocity)
    local ref = body{forcing = function(t, s) return {torque = -0.3 * s.omega + lf.vec3(0, 0, 0.5)} end}
    for _, m in ipairs{"vlv", "split_exact"} do
      local x, y = run(m, sys), run(m, ref)
      assert(diff(x, y) < 1e-12, ("%s: %g"):format(m, diff(x, y)))
    end
    assert.is_nil(body{}.forcing_name)
    assert.is_nil(body{}.forcing_info)
    assert.equal("lf.forcing.torque(torque = (0, 0, 0.5), frame = body)", tostring(f))
    assert.equal("lf.forcing.damping(linear = 0, angular = (1, 2, 3))", tostring(lf.forcing.damping{angular = {1, 2, 3}}))
    assert.is_nil(body{}:lane_model() ~= nil and body{forcing = f}:lane_model() or nil) -- forced systems share no lanes
  end)

  it("keeps an lf.forcing object alive while a system uses it", function()
    local f = lf.forcing.damping{angular = 0.5}
    local sys = body{forcing = f}
    getmetatable(f).__gc(f) -- finalized by hand: refused from now on, alive for sys
    has(errmsg(body, {forcing = f}), "the forcing has been finalized")
    f = nil
    collectgarbage()
    collectgarbage()
    local x, y = run("vlv", sys), run("vlv", body{damping = {angular = 0.5}})
    assert.equal(0, diff(x, y))
  end)
end)

describe("refusals and bad input", function()
  it("a method that cannot take a forcing refuses it by name", function()
    local sys = body{damping = {angular = 0.1}}
    local msg = errmsg(lf.integrator, "eln", sys, {h = 0.01})
    has(msg, "method eln does not take a forcing")
    has(msg, "damping")
    has(msg, "vlv")
  end)

  it("a forcing that returns the wrong shape, NaN or an unknown field: the constructor says so", function()
    for _, compile in ipairs{"auto", false} do
      local function e(f, spec)
        local t = spec or {}
        t.forcing, t.compile = f, compile
        return errmsg(body, t)
      end
      has(e(function() return {torque = 1} end), "lf.rigidbody: forcing: torque is a number, expected a vec3")
      has(e(function() return {torque = {1, 2}} end), "forcing: torque is a table of length 2, expected a vec3")
      has(e(function() return {torq = {1, 2, 3}} end), "forcing: unknown field 'torq' in the returned table (fields: torque)")
      has(e(function() return {force = {1, 2, 3}} end), "forcing: field 'force' is for bodies that translate")
      has(e(function() return 3 end), "forcing returned a number, expected a table {torque = ...}")
      has(e(function() return nil end), "forcing returned nil")
      has(e(function(t, s) return {torque = {math.log(-1 - s.omega.x ^ 2), 0, 0}} end), "nan")
      has(e(function() return {torque = {0 / 0, 0, 0}} end), "nan")
      has(e(function(t, s) return {torque = s.omgea} end), "forcing: state has no field 'omgea' (fields: R, omega")
      has(e(function(t, s) return {torque = s.v} end), "forcing: state.v is of bodies that translate")
    end
    has(errmsg(body, {forcing = function() return {torque = {0 / 0, 0, 0}} end, compile = false}),
        "forcing: torque has component 1 = ")
    has(errmsg(body, {forcing = function(t, s) error("boom") end, compile = false}), "forcing(t, state) raised an error")
    -- several bodies: the body is named
    local function two(f, compile)
      return lf.bodies{{inertia = {1, 2, 2}}, {inertia = {1, 2, 2}}, forcing = f, compile = compile}
    end
    for _, compile in ipairs{"auto", false} do
      has(errmsg(two, function(t, s) return {torque = {s.omega[1], 1}} end, compile),
          "lf.bodies: forcing: torque of body 2 is a number, expected a vec3")
      has(errmsg(two, function(t, s) return {torque = s.omega[1]} end, compile),
          "forcing: torque is a")
      has(errmsg(two, function(t, s) return {torque = s.omega[1]} end, compile),
          ", expected an array of 2 vec3 (one per body)")
      has(errmsg(two, function(t, s) return {torque = {s.omega[1]}} end, compile),
          "forcing: torque is a table of length 1, expected an array of 2 vec3 (one per body)")
    end
    -- a forcing that turns NaN during a run stops the step, naming the forcing and the body
    for _, compile in ipairs{"auto", false} do
      local late = body{forcing = function(t, s) return {torque = {0, 0, math.log(0.5 - t)}} end, compile = compile}
      local msg = errmsg(function() run("vlv", late, 0.1, 10) end)
      has(msg, "vlv: step from t=0.4")
      has(msg, "t=0.5")
      assert(msg:find("the torque on body 1 is not finite") or msg:find("forcing: torque has component 3 = %-inf"), msg)
    end
  end)

  it("bad forcing and damping specs name the field", function()
    has(errmsg(body, {forcing = 3}),
        "lf.rigidbody: field 'forcing' must be a function(t, state [, p]) returning {torque = ..., force = ...} or an lf.forcing object")
    has(errmsg(body, {forcing = {torque = {1, 2, 3}}}), "field 'forcing' must be a function, an lf.forcing object or an array of them; the table has the key 'torque'")
    has(errmsg(body, {forcing = {}}), "field 'forcing' is an empty table")
    has(errmsg(body, {forcing = {lf.forcing.torque{torque = {1, 0, 0}}, "x"}}), "field 'forcing': element 2 must be")
    has(errmsg(body, {forcing = {function() return {} end, function() return {} end}}), "element 2 is a second Lua function")
    has(errmsg(body, {damping = {linear = -1}}), "lf.rigidbody: field 'damping': field 'linear' = -1.0, expected a number >= 0")
    has(errmsg(body, {damping = {linear = 1}}), "field 'linear' damps bodies that translate")
    has(errmsg(body, {damping = {angular = {1, -2, 0}}}), "field 'damping': field 'angular': component 2 = -2.0, expected a number >= 0")
    has(errmsg(body, {damping = {angulr = 1}}), "field 'damping': unknown field 'angulr' (did you mean 'angular'?)")
    has(errmsg(body, {damping = {angular = 0 / 0}}), "field 'damping': field 'angular'")
    has(errmsg(body, {damping = 3}), "field 'damping' must be a table {linear = c, angular = {a1, a2, a3} | a}, got number")
    has(errmsg(lf.bodies, {{inertia = {1, 1, 1}}, dampin = {}}), "unknown field 'dampin'")
    has(errmsg(body, {params = {c = 1}}), "'params' are the last argument of a Lua potential or forcing")
    has(errmsg(lf.forcing.damping, {linear = -1}), "lf.forcing.damping: field 'linear' = -1.0, expected a number >= 0")
    has(errmsg(lf.forcing.damping, {angular = 1, x = 1}), "lf.forcing.damping: unknown field 'x'")
    has(errmsg(lf.forcing.torque, {torque = {1, 2, 3}, frame = "world"}),
        "lf.forcing.torque: field 'frame' must be \"body\" or \"space\", got \"world\"")
    has(errmsg(lf.forcing.torque, {torque = {1, 2, 3}, frame = 1}), "field 'frame' must be \"body\" or \"space\", got number")
    has(errmsg(lf.forcing.torque, {}), "lf.forcing.torque: field 'torque' (a vec3) is required")
    has(errmsg(lf.forcing.torque, {torque = {1, 2, 3}, tau = 1}), "lf.forcing.torque: unknown field 'tau'")
    has(errmsg(lf.forcing.torque_table, {t = {0, 2, 1}, torque = {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}}}),
        "lf.forcing.torque_table: field 't': time 3 = 1.0 is not after time 2 = 2.0, expected increasing times")
    has(errmsg(lf.forcing.torque_table, {t = {0, 0}, torque = {{1, 2, 3}, {1, 2, 3}}}), "time 2 = 0.0 is not after time 1")
    has(errmsg(lf.forcing.torque_table, {t = {0, 1}, torque = {{1, 2, 3}}}),
        "lf.forcing.torque_table: field 'torque' must be an array of 2 vec3 (one per time), got a table of length 1")
    has(errmsg(lf.forcing.torque_table, {t = {0, 1}, torque = {{1, 2, 3}, {1, 2}}}), "field 'torque': element 2")
    has(errmsg(lf.forcing.torque_table, {t = {0, 1 / 0}, torque = {{1, 2, 3}, {1, 2, 3}}}), "field 't': time 2 is not finite")
    has(errmsg(lf.forcing.torque_table, {torque = {{1, 2, 3}}}), "field 't' (an array of increasing times) is required")
  end)
end)

describe("work", function()
  it("lf.run records the work of the forcing: E - E(0) - work is the method's energy error", function()
    local sys = lf.rigidbody{inertia = {1, 2, 3}, R = lf.so3.I, omega = {1, 0.3, 0.2}, damping = {angular = 0.1},
                             potential = lf.potential.top{mgl = 1, chi = {0, 0, 1}},
                             forcing = function(t) return {torque = lf.vec3(0.1 * math.sin(t), 0, 0)} end}
    for _, h in ipairs{0.02, 0.01} do
      local tr = lf.run(sys, {method = "dlm", h = h, T = 10, every = 50})
      local n, worst = #tr.t, 0
      for k = 1, n do worst = math.max(worst, math.abs(tr.energy_error[k] - tr.work[k])) end
      assert.is_true(math.abs(tr.work[n]) > 0.1, "the forcing did work")
      assert.is_true(worst < 60 * h ^ 2, ("h = %g: |E - E0 - W| = %g"):format(h, worst))
      assert.are.equal(0, tr.heat[n])
    end
  end)
end)

describe("controller", function()
  local function controlled(log)
    return lf.rigidbody{inertia = {1, 2, 3}, R = lf.so3.I, omega = {0.5, 0.2, 0},
                        controller = {every = 7, fn = function(t, s)
                          if log then log[#log + 1] = t end
                          return {torque = -2 * s.omega + lf.vec3(0, 0, 0.1 * t)}
                        end}}
  end

  it("is called every k steps, its output held in between (a zero-order hold), and recorded by lf.run", function()
    local log = {}
    local sys = controlled(log)
    local it = lf.integrator("vlv", sys, {h = 0.01})
    it:step(20)
    assert.are.same({0, 0.07, 0.14}, {log[1], tonumber(("%.12g"):format(log[2])), tonumber(("%.12g"):format(log[3]))})
    it:advance_to(0.5)
    assert.are.equal(8, #log) -- t = 0, 0.07, ..., 0.49
    -- the held torque is what fn returned at the last call
    local s = it:state()
    assert.is_true(sys.control.torque[3] ~= 0)
    -- every step recorded: the held columns change only where a call was due (steps 7, 14, ...)
    local tr = lf.run(controlled(), {method = "split_exact", h = 0.01, T = 0.7, every = 1})
    for k = 3, #tr.t do
      local changed = tr.control1[k] ~= tr.control1[k - 1] or tr.control3[k] ~= tr.control3[k - 1]
      assert.are.equal((k - 2) % 7 == 0, changed, "sample " .. k)
    end
    assert.is_true(math.abs(tr.work[#tr.t]) > 0)
    assert.is_not_nil(s)
  end)

  it("checkpoints carry the held output and the phase: it:restore and lf.load resume bit for bit", function()
    local a = lf.integrator("vlv", controlled(), {h = 0.01})
    a:step(30)
    local c = a:checkpoint()
    assert.are.equal(2, c.control_phase)
    local path = os.tmpname()
    a:save(path)
    a:step(40)
    local b = lf.integrator("vlv", controlled(), {h = 0.01})
    b:restore(c)
    b:step(40)
    local d = lf.load(path, controlled())
    os.remove(path)
    d:step(40)
    for k = 1, 3 do
      assert.are.equal(a:state().omega[k], b:state().omega[k])
      assert.are.equal(a:state().omega[k], d:state().omega[k])
    end
  end)

  it("a controller that errors stops the run at that step with the state kept, naming the controller", function()
    local sys = lf.rigidbody{inertia = {1, 2, 3}, controller = {every = 2, fn = function(t)
      if t > 0.05 then error("sensor lost") end
      return {torque = {0, 0, 0.1}}
    end}}
    local it = lf.integrator("dlm", sys, {h = 0.01})
    has(errmsg(it.step, it, 20), "controller")
    assert.are.equal(0.06, tonumber(("%.12g"):format(it.t)))
    local wrong = lf.rigidbody{inertia = {1, 2, 3}, controller = {every = 1, fn = function() return {torque = 3} end}}
    local w = lf.integrator("dlm", wrong, {h = 0.01})
    has(errmsg(w.step, w, 1), "the controller: torque is a number, expected a vec3")
    assert.are.equal(0, w.t)
  end)

  it("bad controller specs name the field", function()
    local function bad(c, text) has(errmsg(lf.rigidbody, {inertia = {1, 2, 3}, controller = c}), text) end
    bad({every = 0, fn = print}, "controller.every must be a positive integer")
    bad({every = 1.5, fn = print}, "controller.every must be a positive integer")
    bad({every = 2}, "controller.fn must be a function")
    bad({every = 2, fn = print, gain = 1}, "unknown controller field 'gain'")
    bad(5, "field 'controller' must be a table")
  end)
end)
