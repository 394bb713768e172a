-- SPDX-License-Identifier: GPL-3.0-or-later
-- Trajectories that carry the state (record), checkpoints that resume bit for bit, round trips
-- through CSV and JSON, and strict constructors.
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has = T.errmsg, T.has

local function stress_body()
  return lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                      potential = lf.potential.stress{}}
end

describe("lf.run record", function()
  it("records the attitude as R, quaternion and Euler angles, and omega, without observers", function()
    local body = stress_body()
    local tr = lf.run(body, {method = "vlv", h = 0.125, T = 2, record = {"R", "omega", "quaternion", "euler_zxz"}})
    assert.are.equal(tr.samples, #tr)
    local cols = tr:columns()
    for _, c in ipairs{"R11", "R23", "R33", "omega1", "omega3", "q_w", "q_z", "euler_a1", "euler_a3"} do
      assert.is_truthy(tr[c], c)
    end
    assert.are.equal(#tr.columns, #cols)
    local it = lf.integrator("vlv", body, {h = 0.125}):step(16)
    local R = it.R
    assert.are.equal(R[2][3], tr.R23[#tr])
    assert.are.equal(it.omega[3], tr.omega3[#tr])
    -- the quaternion and the Euler angles give R back
    local q = {tr.q_w[#tr], tr.q_x[#tr], tr.q_y[#tr], tr.q_z[#tr]}
    assert.is_true((lf.quat.to_matrix(q) - R):norm() < 1e-14)
    local function rot(axis, a) local v = {0, 0, 0}; v[axis] = a; return lf.so3.exp(v) end
    -- zyx: R = Rz(a1) Ry(a2) Rx(a3), in a run of its own (one Euler sequence per run)
    local a1, a2, a3 = lf.run(body, {method = "vlv", h = 0.125, T = 2, record = {"euler_zyx"}}), nil, nil
    local n = #a1
    local Rzyx = rot(3, a1.euler_a1[n]) * rot(2, a1.euler_a2[n]) * rot(1, a1.euler_a3[n])
    assert.is_true((Rzyx - R):norm() < 1e-13)
    local b = lf.run(body, {method = "vlv", h = 0.125, T = 2, record = {"euler_zxz"}})
    local Rzxz = rot(3, b.euler_a1[n]) * rot(1, b.euler_a2[n]) * rot(3, b.euler_a3[n])
    assert.is_true((Rzxz - R):norm() < 1e-13)
    has(errmsg(lf.run, body, {method = "vlv", h = 0.1, T = 1, record = {"Q"}}), "names 'Q', which is not a field")
    has(errmsg(lf.run, body, {method = "vlv", h = 0.1, T = 1, record = {"euler_zzx"}}), "consecutive axes")
    has(errmsg(lf.run, body, {method = "vlv", h = 0.1, T = 1, record = {"euler_zyx", "euler_zxz"}}),
        "option 'record' lists 'euler_zyx' and 'euler_zxz': both give the columns euler_a1..a3")
    has(errmsg(lf.run, body, {method = "vlv", h = 0.1, T = 1, record = {"R", "omega", "R"}}),
        "option 'record' lists 'R' twice")
  end)
  it("records the fields of any system (a Lie-group ODE's y)", function()
    local ode = lf.lie_ode{factors = {"s3", "r2"}, y0 = {{1, 0, 0, 0}, {0, 1}},
                           f = function(t, y) return {{0, 0, 1}, {-y[2][2], y[2][1]}} end}
    local tr = lf.run(ode, {method = "rkmk4", h = 0.1, T = 1, record = {"y"}})
    for _, c in ipairs{"1_y_w", "1_y_z", "2_y1", "2_y2"} do assert.is_truthy(tr[c], c) end
    assert.is_true(math.abs(tr["2_y2"][#tr] - math.cos(1)) < 1e-6) -- y' = (-y2, y1) from (0, 1)
  end)
end)

describe("trajectories round trip", function()
  it("through CSV: read_csv gives back a trajectory with the same numbers", function()
    local tr = lf.run(stress_body(), {method = "vlv", h = 0.25, T = 3, record = {"omega"}})
    local path = os.tmpname()
    tr:write_csv(path)
    local back = lf.read_csv(path)
    os.remove(path)
    assert.are.equal(#tr, #back)
    assert.are.same(tr:columns(), back:columns())
    for _, c in ipairs(tr.columns) do
      for k = 1, #tr do assert.are.equal(tr[c][k], back[c][k]) end
    end
    assert.is_truthy(tostring(back):find("samples", 1, true))
  end)
  it("through JSON: set_state(json.decode(json.encode(it:state()))) is bit for bit", function()
    local it = lf.integrator("vlv", stress_body(), {h = 0.125}):step(7)
    local s = lf.json.decode(lf.json.encode(it:state()))
    local it2 = lf.integrator("vlv", stress_body(), {h = 0.125})
    it2:set_state(s)
    assert.is_true(it2.R == it.R and it2.omega == it.omega and it2.t == it.t)
  end)
end)

describe("checkpoints", function()
  for _, m in ipairs{"vlv", "rkmk_dp45", "rkmk_gl4"} do
    it("resume a " .. m .. " run bit for bit (it:save, lf.load)", function()
      local body = stress_body()
      local a = lf.integrator(m, body, {h = 0.1}):step(37)
      local path = os.tmpname()
      a:save(path)
      local b = lf.load(path, body)
      os.remove(path)
      a:step(50)
      b:step(50)
      assert.are.equal(a.t, b.t)
      assert.is_true(a.R == b.R and a.omega == b.omega)
    end)
  end
  it("resume a Lua method too, and refuse a file that is not a checkpoint", function()
    local euler = lf.method{name = "lua_euler", step = function(s, h) s.R = s.R * lf.so3.exp(h * s.omega) end}
    local body = lf.rigidbody{inertia = {1, 2, 3}, omega = {0.1, 0.2, 0.3}}
    local a = lf.integrator(euler, body, {h = 0.1}):step(5)
    local path = os.tmpname()
    a:save(path)
    local b = lf.load(path, body, euler)
    a:step(5); b:step(5)
    assert.is_true(a.R == b.R and a.t == b.t)
    local f = io.open(path, "w"); f:write("{}"); f:close()
    has(errmsg(lf.load, path, body), "is not a lieflow checkpoint")
    os.remove(path)
  end)
end)

describe("strict constructors", function()
  it("name unknown fields and suggest the intended one", function()
    has(errmsg(lf.rigidbody, {inertia = {1, 2, 3}, omgea = {1, 0, 0}}), "unknown field 'omgea' (did you mean 'omega'?)")
    has(errmsg(lf.bodies, {{inertia = {1, 2, 3}, Rr = lf.so3.I}}), "unknown field 'Rr' (did you mean 'R'?)")
    has(errmsg(lf.integrator, "vlv", stress_body(), {h = 0.1, newtn_tol = 1e-10}), "did you mean 'newton_tol'?")
  end)
  it("refuse a non-physical inertia unless asked", function()
    has(errmsg(lf.rigidbody, {inertia = {1, 1, 3}}), "violates the triangle inequality")
    assert.is_truthy(lf.rigidbody{inertia = {1, 1, 3}, nonphysical = true})
  end)
  it("point the error at the caller's line", function()
    local ok, msg = pcall(function() local b = lf.rigidbody{inertia = {1, 2}}; return b end)
    assert.is_false(ok)
    assert.is_truthy(msg:find("trajectory_spec.lua", 1, true), msg)
  end)
end)

describe("an interrupted lf.run", function()
  local EXE = os.getenv("LIEFLOW_EXE") or "build/lieflow"
  -- the command in the background, one SIGINT after 1 s (as one Ctrl-C; `timeout -s INT` signals
  -- twice, the command and its process group, and a second SIGINT ends a Lua interpreter)
  local function ctrl_c(cmd)
    return "sh -c '" .. cmd .. " > /tmp/lf-ctrlc.$$ 2>&1 & pid=$!; sleep 1; kill -INT $pid; wait $pid; " ..
           "echo status=$?; cat /tmp/lf-ctrlc.$$; rm -f /tmp/lf-ctrlc.$$'"
  end
  local have_exe = io.open(EXE, "rb") ~= nil
  local it_exe = have_exe and it or pending
  it_exe("raises an error object that carries the samples taken so far (Ctrl-C)", function()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write([[
local ok, err = pcall(lf.run, lf.stress_system(), {method = "vlv", h = 0.001, T = 1e6, every = 1000})
io.write("ok=", tostring(ok), "\n", "msg=", tostring(err), "\n")
if type(err) == "table" then
  io.write("samples=", #err.trajectory, " interrupted=", tostring(err.trajectory.interrupted),
           " last_t=", err.trajectory.t[#err.trajectory], "\n")
end
io.flush()
]])
    f:close()
    local p = io.popen(ctrl_c(EXE .. " " .. script))
    local out = p:read("a")
    p:close()
    os.remove(script)
    has(out, "ok=false")
    has(out, "interrupted at t=")
    local n = tonumber(out:match("samples=(%d+)"))
    assert(n and n > 1, out)
    has(out, "interrupted=true")
  end)

  it_exe("the first Ctrl-C also stops a busy loop inside a coroutine (before: only the second, killing the process)", function()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write("local co = coroutine.wrap(function() local x = 0 while true do x = x + 1 end end)\n",
            "local ok, err = pcall(co)\nio.write('caught: ', tostring(err), '\\n') io.flush()\n")
    f:close()
    local t0 = os.time()
    local p = io.popen(ctrl_c(EXE .. " " .. script))
    local out = p:read("a")
    p:close()
    os.remove(script)
    has(out, "interrupted!")
    assert(os.time() - t0 < 5, "not stopped by the first Ctrl-C")
  end)
end)
