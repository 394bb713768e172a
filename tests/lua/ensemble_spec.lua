-- SPDX-License-Identifier: GPL-3.0-or-later
-- lf.ensemble (issue 11, item 2): members in worker processes, results identical to a serial loop
-- of lf.run for any number of workers, failing members, reduce, member order, bad options, the exact
-- serialization of records (core.proc.encode/decode), Ctrl-C.
local lf = require "lieflow"
local core = require "lieflow.core"
local testlib = require "testlib"
local errmsg, has = testlib.errmsg, testlib.has
local proc = core.proc

local function stress(alpha)
  return lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                      potential = lf.potential.stress{alpha = alpha}}
end

-- a first-order Lie–Euler written in Lua: members may use Lua methods too
local lua_euler = lf.method{name = "lua_euler", order = 1, step = function(s, h, sys)
  local J, w = sys.inertia, s.omega
  local Jw = lf.vec3{J[1] * w[1], J[2] * w[2], J[3] * w[3]}
  local Jw1 = Jw + h * (Jw:cross(w) + sys:torque(s.R))
  return {R = s.R * lf.so3.exp(h * w), omega = lf.vec3{Jw1[1] / J[1], Jw1[2] / J[2], Jw1[3] / J[3]}}
end}

-- A mixed sweep: built-in explicit and implicit methods, a Lua method, two bodies, a Lua observer,
-- member-specific step sizes and final times.
local params = {
  {method = "vlv", h = 0.125, alpha = 0.3},
  {method = "eln", h = 0.25, alpha = 0.2},
  {method = "tln", h = 0.1, alpha = 0.3},
  {method = "lgvi", h = 0.125, alpha = 0.1, T = 7.3},   -- T not a multiple of h: last short step
  {method = lua_euler, h = 0.05, alpha = 0.3, T = 2},
  {method = "vlv", h = 0.125, two = true},
  {method = "liemid_ea", h = 0.2, alpha = 0.25},
}
local function make(i, p)
  local sys
  if p.two then
    sys = lf.bodies{{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7, 0}, omega = {0, 0, 0.6}},
                    {inertia = {1, 2, 3}, R = lf.so3.exp{0.3, 0, 0.1}, omega = {0.2, 0, 0.1}},
                    potential = function(Rs) return (Rs[1][3][3] - Rs[2][3][3]) ^ 2 end}
  else
    sys = stress(p.alpha)
  end
  return sys, {method = p.method, h = p.h, T = p.T}
end
local observe = {R33 = function(it)
  local R = it.R
  if getmetatable(R) == nil then R = R[1] end
  return R[3][3]
end}
local base = {params = params, make = make, T = 10, every = 3, observe = observe, progress = false}
local function sweep(extra)
  local o = {}
  for k, v in pairs(base) do o[k] = v end
  for k, v in pairs(extra or {}) do o[k] = v end
  return lf.ensemble(o)
end

-- The serial truth: a plain loop of lf.run (the final state from the integrator lf.run used).
local function serial_truth()
  local out = {}
  for i, p in ipairs(params) do
    local sys, o = make(i, p)
    local it
    local obs = {R33 = observe.R33, keep = function(x) it = x; return 0 end}
    local traj = lf.run(sys, {method = o.method, h = o.h, T = o.T or base.T, every = base.every, observe = obs,
                              progress = false})
    out[i] = {traj = traj, state = it:state()}
  end
  return out
end

local function bits(x) return string.pack("<d", x) end

local function same_trajectory(got, want)
  for _, c in ipairs(want.columns) do
    if c ~= "keep" then
      local a, b = got[c], want[c]
      assert.are.equal(#b, #a, c)
      for r = 1, #b do
        if bits(a[r]) ~= bits(b[r]) then
          error(("column %s row %d: %a vs %a"):format(c, r, a[r], b[r]))
        end
      end
    end
  end
  assert.are.equal(want.steps, got.steps)
  assert.are.equal(want.samples, got.samples)
end

describe("lf.ensemble", function()
  local truth = serial_truth()
  local results = {}

  for _, k in ipairs{1, 2, 3} do
    it(("with %d worker%s gives bitwise the results of a serial loop of lf.run"):format(k, k > 1 and "s" or ""), function()
      local res = sweep{workers = k}
      results[k] = res
      assert.are.equal(#params, res.n)
      assert.are.equal(#params, res.completed)
      assert.are.same({}, res.failed)
      assert.are.equal(k, res.workers)
      for i = 1, #params do
        local r = res[i]
        assert.is_true(r.ok, r.error)
        assert.are.equal(i, r.index)
        assert.are.equal(params[i], r.params)
        same_trajectory(r.trajectory, truth[i].traj)
        -- the hidden observer that keeps the integrator is not a column
        assert.is_nil(r.trajectory.__lf_ensemble_integrator)
        for _, c in ipairs(r.trajectory.columns) do assert.are_not.equal("__lf_ensemble_integrator", c) end
        -- the final state, compared generically (one body: mat3/vec3; two: arrays of them)
        local same, where = lf.ensemble.identical(r.state, truth[i].state)
        assert.is_true(same, where)
        assert.are.equal(bits(truth[i].state.t), bits(r.state.t))
        assert.are.equal(truth[i].traj.steps, r.stats.steps)
        -- trajectories keep their methods
        assert.are.equal("function", type(r.trajectory.write_csv))
      end
      -- lgvi's T = 7.3 ends exactly at T
      assert.are.equal(7.3, res[4].state.t)
      if k > 1 then
        local same, where = lf.ensemble.identical(res, results[1])
        assert.is_true(same, where)
        -- and the members really ran in other processes
        local pids = {}
        for i = 1, #params do pids[res[i].timing.pid] = true end
        assert.is_nil(pids[proc.getpid()])
      else
        for i = 1, #params do assert.are.equal(proc.getpid(), res[i].timing.pid) end
      end
    end)
  end

  it("M.identical finds the first difference", function()
    local a = {x = {1.0, 2.0}, y = lf.vec3{1, 2, 3}, timing = {cpu_time = 1}}
    local b = {x = {1.0, 2.0 + 2 ^ -51}, y = lf.vec3{1, 2, 3}, timing = {cpu_time = 2}}
    local same, where = lf.ensemble.identical(a, b)
    assert.is_false(same)
    has(where, "res.x[2]")
    b.x[2] = 2.0
    assert.is_true(lf.ensemble.identical(a, b))
    assert.is_false(lf.ensemble.identical(a, b, {timing = true}))
    assert.is_false(lf.ensemble.identical({0.0}, {-0.0}))        -- bitwise: -0 differs
    assert.is_true(lf.ensemble.identical({0 / 0}, {0 / 0}))
    assert.is_false(lf.ensemble.identical({1}, {1.0}))           -- integer vs float
    assert.is_false(lf.ensemble.identical({y = lf.vec3{1, 2, 3}}, {y = lf.vec3{1, 2, 4}}))
  end)

  it("reports failing members by index with their error and keeps the others", function()
    for _, k in ipairs{1, 3} do
      local res = lf.ensemble{n = 8, workers = k, quiet = true, method = "vlv", h = 0.125, T = 5, every = 4,
        make = function(i)
          if i == 2 then error("no system for member two") end
          if i == 3 then return nil end
          if i == 4 then return stress(0.3), {h = -1} end
          if i == 5 and k > 1 then os.exit(7) end                 -- a worker that dies
          if i == 6 and k > 1 then proc.kill(proc.getpid(), "KILL") end
          return stress(0.1 * i)
        end,
        summarize = function(m)
          if m.index == 7 then return {f = print} end            -- cannot be sent
          if m.index == 8 then error("summary fails") end
          return {E = m.trajectory.energy[m.stats.samples]}
        end}
      local want_failed = k > 1 and {2, 3, 4, 5, 6, 7, 8} or {2, 3, 4, 7, 8}
      assert.are.same(want_failed, res.failed)
      assert.are.equal(8 - #want_failed, res.completed)
      has(res[2].error, "no system for member two")
      has(res[3].error, "make(3) returned no system")
      has(res[4].error, "option 'h' (step size) must be a finite positive number, got -1")
      assert.is_nil(res[4].error:find("ensemble.lua", 1, true))
      if k > 1 then
        has(res[5].error, "exited with status 7 while running member 5")
        has(res[6].error, "killed by signal 9")
      end
      has(res[7].error, "its result cannot be sent: summary.f is a function")
      has(res[8].error, "summary fails")
      assert.is_true(res[1].ok)
      assert.are.equal(1, res[1].index)
      -- the survivors are the serial ones
      local sys = stress(0.1)
      local tr = lf.run(sys, {method = "vlv", h = 0.125, T = 5, every = 4, progress = false})
      assert.are.equal(bits(tr.energy[tr.samples]), bits(res[1].summary.E))
    end
  end)

  it("calls reduce once with the results in member order and returns its value", function()
    local calls = 0
    local res, total = lf.ensemble{n = 5, workers = 2, method = "eln", h = 0.25, T = 3, trajectory = false,
      make = function(i) return stress(0.05 * i) end,
      summarize = function(m) return m.index * 10 end,
      reduce = function(r)
        calls = calls + 1
        local s = {}
        for i = 1, r.n do s[i] = r[i].summary end
        return table.concat(s, ",")
      end}
    assert.are.equal(1, calls)
    assert.are.equal("10,20,30,40,50", total)
    assert.are.equal(total, res.reduced)
    assert.is_nil(res[1].trajectory)     -- trajectory = false: final state and stats only
    assert.is_not_nil(res[1].state)
  end)

  it("returns the members in member order when they finish out of order", function()
    -- member 1 is the longest: with 3 workers, later members finish first
    local ps = {}
    for i = 1, 6 do ps[i] = {T = i == 1 and 60000 or 20} end
    local res = lf.ensemble{params = ps, workers = 3, method = "vlv", h = 0.125, every = 1000, trajectory = false,
                            make = function(_, p) return stress(0.3), {T = p.T} end}
    for i = 1, 6 do
      assert.are.equal(i, res[i].index)
      assert.are.equal(ps[i], res[i].params)
      assert.are.equal(ps[i].T, res[i].state.t)
    end
    assert.is_true(res[1].timing.finished > res[6].timing.finished, "member 1 should have finished last")
  end)

  it("handles n = 0 and more workers than members", function()
    local res = lf.ensemble{n = 0, make = function() end}
    assert.are.equal(0, res.n)
    assert.are.equal(0, res.completed)
    local r2 = lf.ensemble{n = 2, workers = 8, method = "vlv", h = 0.5, T = 1, make = function() return stress(0.3) end}
    assert.are.equal(2, r2.workers)
    assert.are.equal(2, r2.completed)
  end)

  it("reseeds math.random per member: Monte Carlo members do not depend on the worker", function()
    local function mc(k)
      return lf.ensemble{n = 6, workers = k, method = "vlv", h = 0.25, T = 2, trajectory = false, seed = 42,
        make = function()
          local v = {math.random() - 0.5, math.random() - 0.5, math.random() - 0.5}
          return lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp(v), omega = {0, 0, 0.625},
                              potential = lf.potential.stress{}}
        end}
    end
    local a, b = mc(1), mc(3)
    assert.is_true(lf.ensemble.identical(a, b))
    assert.is_false(lf.ensemble.identical(a[1].state, a[2].state))
  end)

  it("rejects bad options with a message naming the value", function()
    local mk = function() return stress(0.3) end
    has(errmsg(lf.ensemble, nil), "argument must be an options table")
    has(errmsg(lf.ensemble, {n = 2}), "option 'make' must be a function(i, p) returning system, opts, got nil")
    has(errmsg(lf.ensemble, {make = mk}), "give the members: 'n' (a count) or 'params'")
    has(errmsg(lf.ensemble, {n = 2, params = {1, 2}, make = mk}), "give either 'n' or 'params', not both")
    has(errmsg(lf.ensemble, {n = -1, make = mk}), "option 'n' must be an integer >= 0 (the number of members), got -1")
    has(errmsg(lf.ensemble, {n = 2.5, make = mk}), "got 2.5")
    has(errmsg(lf.ensemble, {params = {1, nil, 3, x = 1}, make = mk}), "option 'params' must be an array")
    has(errmsg(lf.ensemble, {params = "abc", make = mk}), "option 'params' must be an array (one entry per member), got string")
    has(errmsg(lf.ensemble, {n = 2, make = mk, workers = 0}), "option 'workers' must be an integer >= 1, got 0")
    has(errmsg(lf.ensemble, {n = 2, make = mk, workers = "all"}), "option 'workers' must be an integer >= 1, got all")
    has(errmsg(lf.ensemble, {n = 2, make = mk, workers = 5000}), "option 'workers' = 5000 is more than 1024")
    has(errmsg(lf.ensemble, {n = 2, make = mk, h = 0}), "option 'h' must be a finite positive number, got 0")
    has(errmsg(lf.ensemble, {n = 2, make = mk, T = 0 / 0}), "option 'T' must be a finite positive number, got")
    has(errmsg(lf.ensemble, {n = 2, make = mk, method = 3}), "option 'method' must be a method name or an lf.method, got number")
    has(errmsg(lf.ensemble, {n = 2, make = mk, every = 0}), "option 'every' must be an integer >= 1, got 0")
    has(errmsg(lf.ensemble, {n = 2, make = mk, observe = 1}), "option 'observe' must be a table (as for lf.run), got number")
    has(errmsg(lf.ensemble, {n = 2, make = mk, reduce = 1}), "option 'reduce' must be a function(res), got number")
    has(errmsg(lf.ensemble, {n = 2, make = mk, gather = "some"}), "option 'gather' must be \"root\" or \"all\", got some")
    has(errmsg(lf.ensemble, {n = 2, make = mk, seed = 1.5}), "option 'seed' must be an integer, got 1.5")
    has(errmsg(lf.ensemble, {n = 2, make = mk, wokers = 2}), "unknown option 'wokers' (options: ")
    -- the error points at the caller
    has(errmsg(function() local r = lf.ensemble{n = 2, make = mk, workers = 0}; return r end), "ensemble_spec.lua:")
    -- options missing for a member: that member fails, clearly
    local res = lf.ensemble{n = 1, make = mk, h = 0.1, T = 1, quiet = true}
    has(res[1].error, "member 1 has no 'method': give it to lf.ensemble or in the options make returns")
  end)

  it("uses all usable CPUs by default", function()
    local n = lf.ensemble.ncpu()
    assert.is_true(math.type(n) == "integer" and n >= 1)
    local res = lf.ensemble{n = 4, method = "vlv", h = 0.5, T = 1, make = function() return stress(0.3) end}
    assert.are.equal(math.min(n, 4), res.workers)
    assert.are.equal(0, (lf.ensemble.rank()))
    assert.is_true(lf.ensemble.is_root())
  end)

  it("draws a progress line on stderr (forced with progress = true; by default on a terminal)", function()
    local exe = os.getenv("LIEFLOW_EXE") or "build/lieflow"
    if not io.open(exe) then pending("build/lieflow not built") return end
    local p = io.popen(exe .. [[ -e 'local r = lf.ensemble{n = 3, workers = 2, progress = true, method = "vlv", h = 0.5,
      T = 2, make = function() return lf.rigidbody{inertia = {1, 2, 3}, R = lf.so3.I, omega = {0, 0, 1}} end}
      print("completed", r.completed)' 2>&1]])
    local out = p:read("a")
    p:close()
    has(out, "\rlf.ensemble: 3/3 members, 0 failed, 2 workers")
    has(out, "completed\t3")
    -- not on a pipe by default
    local q = io.popen(exe .. [[ -e 'lf.ensemble{n = 2, method = "vlv", h = 0.5, T = 2,
      make = function() return lf.rigidbody{inertia = {1, 2, 3}, R = lf.so3.I, omega = {0, 0, 1}} end}' 2>&1]])
    assert.are.equal("", q:read("a"))
    q:close()
  end)

  it("stops every worker on Ctrl-C and returns what finished, leaving no process behind", function()
    local exe = os.getenv("LIEFLOW_EXE") or "build/lieflow"
    if not io.open(exe) then pending("build/lieflow not built") return end
    local dir = testlib.make_tmpdir()
    local script = dir .. "/intr.lua"
    local f = assert(io.open(script, "w"))
    f:write([[
local proc = require("lieflow.core").proc
local function mk() return lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                                       potential = lf.potential.stress{}} end
local W = tonumber(arg[1])
io.stdout:setvbuf("no")
print("started")
local res = lf.ensemble{n = 8, workers = W, method = "tln", h = 0.125, every = 1000, trajectory = false,
  make = function(i) return mk(), {T = i <= 2 and 10 or 2e5} end}
local c = io.open(("/proc/%d/task/%d/children"):format(proc.getpid(), proc.getpid()))
print(("interrupted=%s completed=%d cancelled=%d failed=%d children=[%s]"):format(tostring(res.interrupted),
  res.completed, #res.cancelled, #res.failed, c and c:read("a") or "?"))
]])
    f:close()
    for _, w in ipairs{1, 2} do
      -- a new session and process group, like a terminal's: SIGINT to the whole group, as Ctrl-C does
      local out = dir .. "/out" .. w
      local cmd = ([[
cd %s || exit 1
setsid %s %s %d > %s 2>&1 &
pid=$!
for i in $(seq 1 100); do grep -q started %s 2>/dev/null && break; sleep 0.05; done
sleep 1
kill -INT -- -$pid
for i in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
wait $pid; echo "exit=$?" >> %s
sleep 0.2
if kill -0 -- -$pid 2>/dev/null; then echo "LEFTOVER" >> %s; kill -KILL -- -$pid; fi
]]):format(testlib.shq(os.getenv("PWD") or "."), exe, script, w, out, out, out, out)
      os.execute("bash -c " .. testlib.shq(cmd))
      local text = testlib.read(out) or ""
      has(text, "interrupted=true completed=2 cancelled=6 failed=0 children=[]")
      has(text, "exit=0")
      assert.is_nil(text:find("LEFTOVER", 1, true), text)
    end
    os.execute("rm -rf " .. testlib.shq(dir))
  end)
end)

describe("core.proc.encode / decode", function()
  it("round-trips values exactly, by their bytes", function()
    local v = {1.5, -0.0, 0 / 0, math.huge, -math.huge, 2 ^ -1074, math.maxinteger, math.mininteger, 0,
               "a\0b", true, false, {x = {y = {z = "deep"}}, [2.5] = "float key", [true] = "bool key"},
               lf.vec3{1, 2, 3}, lf.mat3{1, 2, 3, 4, 5, 6, 7, 8, 9}, {0.1, 0.2, 0.3}, {1, 2.0}, {}}
    local back = proc.decode(proc.encode(v))
    assert.is_true(lf.ensemble.identical(v, back))
    assert.are.equal(bits(-0.0), bits(back[2]))
    assert.is_true(back[3] ~= back[3])
    assert.are.equal("integer", math.type(back[7]))
    assert.are.equal("float", math.type(back[17][2]))
    assert.are.equal("lf.vec3", getmetatable(back[14]).__name)
    assert.are.equal("lf.mat3", getmetatable(back[15]).__name)
    assert.are.equal(8, back[15][3][2])
    assert.are.equal("bool key", back[13][true])
    -- a sparse array survives too
    local sparse = proc.decode(proc.encode{[1] = 1.0, [3] = 3.0, [100] = 1e300})
    assert.are.same({[1] = 1.0, [3] = 3.0, [100] = 1e300}, sparse)
    assert.is_nil(proc.decode(proc.encode(nil)))
  end)

  it("names the value that cannot be sent", function()
    has(errmsg(proc.encode, {a = {b = {print}}}), "a.b[1] is a function")
    has(errmsg(proc.encode, {[{}] = 1}), "has a key of type table")
    local cyc = {}
    cyc.self = cyc
    has(errmsg(proc.encode, cyc), "nested more than 100 levels deep (a cycle?)")
    has(errmsg(proc.encode, io.stdout), "the value is a FILE*")
  end)

  it("rejects data that is not its own", function()
    has(errmsg(proc.decode, "hello"), "not lf.ensemble data")
    local s = proc.encode({1.0, 2.0, 3.0})
    has(errmsg(proc.decode, s:sub(1, -3)), "truncated")
    has(errmsg(proc.decode, s .. "x"), "1 trailing bytes")
  end)

  it("with lanes steps groups sharing a model in one integrator, bitwise as member by member", function()
    local P = lf.potential.stress{}
    local Q = lf.potential.top{mgl = 2, chi = {0, 0, 1}}
    local function mk(i)
      local pot = (i == 13) and Q or P                -- member 13: another model (its group falls back)
      if i == 20 then pot = function(R) return R[3][3] end end -- a Lua potential: no lane model
      local w = i == 30 and 40 or 0.625               -- member 30: lgvi's F does not exist (fails)
      return lf.rigidbody{inertia = {2, 2, 4}, potential = pot, R = lf.so3.exp{0.01 * i, 0.7227, -0.02 * i},
                          omega = {0, 0.001 * i, w}}
    end
    local o = {n = 35, make = mk, method = "lgvi", h = 0.125, T = 20.06, every = 5, trajectory = false, quiet = true}
    local function run(extra)
      local t = {}
      for k, v in pairs(o) do t[k] = v end
      for k, v in pairs(extra) do t[k] = v end
      return lf.ensemble(t)
    end
    local serial = run{workers = 1}
    assert.are.same({30}, serial.failed)
    for _, extra in ipairs{{workers = 1, lanes = 8}, {workers = 2, lanes = 8}, {workers = 3, lanes = 35}} do
      local res = run(extra)
      local same, where = lf.ensemble.identical(serial, res)
      assert.is_true(same, where)
    end
    local res = run{workers = 1, lanes = 8}
    assert.are.equal(8, res[1].timing.lanes)      -- members 1-8 shared a model: one lanes integrator
    assert.is_nil(res[9].timing.lanes)            -- 9-16 hold member 13's other model: one by one
    assert.is_nil(res[17].timing.lanes)           -- 17-24 hold the Lua potential
    assert.is_nil(res[25].timing.lanes)           -- 25-32 hold the failing member
    assert.are.equal(3, res[33].timing.lanes)
    -- asking for more than final states turns lanes off
    res = run{workers = 1, lanes = 8, trajectory = true}
    assert.is_nil(res[1].timing.lanes)
    has(errmsg(lf.ensemble, {n = 2, make = mk, method = "vlv", h = 0.1, T = 1, lanes = 0}), "option 'lanes'")
  end)
end)
