-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — lf.ensemble: many independent runs (parameter sweeps, Monte Carlo, convergence
-- studies) on every core of a machine, and across the ranks of an MPI job.
--
--   local res = lf.ensemble{
--     n = 100,                       -- members 1..n ... or params = {p1, p2, ...} (member i gets params[i])
--     make = function(i, p) return system, opts end,  -- builds member i; opts (optional) override
--                                    -- method, h, T, every, observe, newton_tol, max_iter, adapt,
--                                    -- thermostat below (member i's thermostat seed: seed + i - 1)
--     method = "vlv", h = 0.125, T = 1000, every = 40, observe = {...},   -- as for lf.run
--     states = true,                 -- as for lf.run: each member's trajectory keeps its states (traj:state(k),
--                                    -- traj:animate); they travel as the packed bytes
--     summarize = function(member) return value end,  -- optional, runs in the worker (see below)
--     trajectory = true,             -- false: do not send the trajectory back (final state, stats only)
--     reduce = function(res) return value end,        -- optional, runs once at the end (on rank 0,
--                                    -- or on every rank with gather = "all")
--     workers = k,                   -- worker processes (default: all cores this process may use;
--                                    -- 1 = in this process, no fork; under MPI: 1 per rank)
--     progress = nil|true|false,     -- progress line on stderr (default: on a terminal, runs > 1 s)
--     mpi = nil|true|false,          -- nil: MPI when started by mpirun/srun; false: never
--     gather = "root"|"all",         -- under MPI: results on rank 0 only (default) or on every rank
--     seed = 0,                      -- math.randomseed(seed, i) before member i
--     quiet = false,                 -- true: no notice on stderr about failed members
--     lanes = k,                     -- step up to k members at once in one lanes integrator (see below)
--   }
--
-- Member i runs `lf.run(system, opts)` with the merged options (progress off) and yields the record
--   res[i] = {index = i, params = p, ok = true, method =, h =, T =,
--             state = it:state() at the end (an opaque table: numbers, vec3, mat3, arrays of them),
--             trajectory = what lf.run returned (columns, arrays, steps, ... ; its methods work),
--             summary = summarize(member) (if given),
--             stats = {steps =, samples =},
--             timing = {cpu_time =, wall_time =, finished = (monotonic clock), worker =, pid =, rank =}}
--   or {index = i, params = p, ok = false, error = "message", timing = {...}} when make, lf.run or
--   summarize raised an error (the other members are not affected), or
--   {index = i, ok = false, cancelled = true, error = "cancelled (interrupted)"} after Ctrl-C.
-- res also has n, failed = {indices}, cancelled = {indices}, completed (members that ran to the
-- end), interrupted, workers, ranks, wall_time, reduced (= reduce(res), also the second result).
--
-- Determinism: a member's record is a function of (i, params[i]) alone, so every field except
-- `timing` and the trajectory's cpu_time and wall_time is bitwise identical whatever the number of
-- workers or ranks, and identical to a serial loop of lf.run (M.identical compares two results).
-- Records travel as exact bytes (core.proc.encode: the 8 bytes of every double); the serial path
-- (workers = 1) passes them through the same encoding, so both give the same plain data. Members
-- must not depend on state changed by other members (globals written by make, ...); math.random is
-- reseeded before each member for that reason. The member record handed to summarize has the
-- fields above (with the trajectory object); its result must be plain data too.
--
-- Lanes: with lanes = k, consecutive members go to a worker in groups of up to k; a group whose
-- members share a model (systems made with the same built-in potential object and inertia:
-- sys:lane_model()), method (one with lanes: eln, eln_exp, vlv, lgvi), h, T and Newton options,
-- and that asks only for final states (trajectory = false, no observe, no summarize), is stepped by
-- one integrator with lanes (lf.integrator{lanes = ...}), vectorized in C. Its records are bitwise
-- those of the member-by-member path (each lane is bitwise a separate integrator; the steps are the
-- ones lf.run takes); any other group runs member by member, so the option never changes a result.
--
-- Processes: workers are forked when lf.ensemble is called (each has its own copy of the Lua
-- state: make, params and upvalues need no serialization) and take members one at a time from
-- the parent (dynamic scheduling). A worker that dies (crash, os.exit, kill) fails its member,
-- and a new worker takes its place. Ctrl-C stops every worker and returns what finished: the
-- other members are marked cancelled. No worker outlives the call, and none is left a zombie.
-- Under MPI (`mpirun -n N lieflow script.lua`) rank r runs the members i with (i - 1) % N == r
-- (with `workers` processes of its own, default 1) and rank 0 gathers the results; the other
-- ranks get res with root = false and no members (unless gather = "all").
local core = require "lieflow.core"
local run = require "lieflow.run"
local trajectory = require "lieflow.run.trajectory"

local proc = core.proc
local clock = core.wall_time or os.clock

local M = {}

local CAPTURE = "__lf_ensemble_integrator" -- hidden observer: keeps the integrator for it:state()
local RUN_KEYS = {"method", "h", "T", "every", "observe", "newton_tol", "max_iter", "adapt", "states", "thermostat",
                  "at", "events"}
local KNOWN = {}
for _, k in ipairs{"n", "params", "make", "method", "h", "T", "every", "observe", "newton_tol", "max_iter", "adapt", "states",
                   "thermostat", "at", "events",
                   "reduce", "summarize", "trajectory", "workers", "progress", "mpi", "gather", "seed",
                   "quiet", "lanes"} do KNOWN[k] = true end

-- ------------------------------------------------------------------ options

-- An error about the options, reported at the caller's line: the first stack level outside this file.
local THIS = debug.getinfo(1, "S").source
local function bad(fmt, ...)
  local level = 2
  while true do
    local info = debug.getinfo(level, "S")
    if not info or info.source ~= THIS then break end
    level = level + 1
  end
  error("lf.ensemble: " .. fmt:format(...), level)
end

local function optional_type(opts, key, ty, what)
  local v = opts[key]
  if v ~= nil and type(v) ~= ty then bad("option '%s' must be %s, got %s", key, what, type(v)) end
end

local function integer_option(opts, key, min, what)
  local v = opts[key]
  if v == nil then return nil end
  if type(v) == "number" and v == math.floor(v) and v >= min and v < 2 ^ 53 then return math.tointeger(v) end
  bad("option '%s' must be %s, got %s", key, what, tostring(v))
end

local function check_options(opts)
  if type(opts) ~= "table" then
    bad("argument must be an options table {n = | params = , make = , method = , h = , T = , ...}, got %s", type(opts))
  end
  local unknown = {}
  for k in pairs(opts) do if not KNOWN[k] then unknown[#unknown + 1] = tostring(k) end end
  if #unknown > 0 then
    table.sort(unknown)
    local known = {}
    for k in pairs(KNOWN) do known[#known + 1] = k end
    table.sort(known)
    bad("unknown option%s '%s' (options: %s)", #unknown > 1 and "s" or "", table.concat(unknown, "', '"),
        table.concat(known, ", "))
  end
  if type(opts.make) ~= "function" then
    bad("option 'make' must be a function(i, p) returning system, opts, got %s", type(opts.make))
  end
  local n = integer_option(opts, "n", 0, "an integer >= 0 (the number of members)")
  local params = opts.params
  if params ~= nil then
    if n ~= nil then bad("give either 'n' or 'params', not both") end
    if type(params) ~= "table" then bad("option 'params' must be an array (one entry per member), got %s", type(params)) end
    n = #params
    for k in pairs(params) do
      if math.type(k) ~= "integer" or k < 1 or k > n then
        bad("option 'params' must be an array 1..%d without holes or other keys, it has the key %s", n, tostring(k))
      end
    end
  elseif n == nil then
    bad("give the members: 'n' (a count) or 'params' (an array, one entry per member)")
  end
  local m = opts.method
  if m ~= nil and type(m) ~= "string" then
    local ok = pcall(run.check_method, m, "lf.ensemble")
    if not ok then bad("option 'method' must be a method name or an lf.method, got %s", type(m)) end
  end
  for _, key in ipairs{"h", "T"} do
    local v = opts[key]
    if v ~= nil and (type(v) ~= "number" or v ~= v or v <= 0 or v == math.huge) then
      bad("option '%s' must be a finite positive number, got %s", key, tostring(v))
    end
  end
  integer_option(opts, "every", 1, "an integer >= 1")
  optional_type(opts, "observe", "table", "a table (as for lf.run)")
  optional_type(opts, "reduce", "function", "a function(res)")
  optional_type(opts, "summarize", "function", "a function(member) returning plain data")
  optional_type(opts, "trajectory", "boolean", "true or false")
  optional_type(opts, "progress", "boolean", "true, false or nil")
  optional_type(opts, "mpi", "boolean", "true, false or nil")
  optional_type(opts, "quiet", "boolean", "true or false")
  integer_option(opts, "lanes", 1, "an integer >= 1 (members stepped at once)")
  local workers = integer_option(opts, "workers", 1, "an integer >= 1")
  if workers and workers > 1024 then bad("option 'workers' = %d is more than 1024", workers) end
  local gather = opts.gather
  if gather ~= nil and gather ~= "root" and gather ~= "all" then
    bad("option 'gather' must be \"root\" or \"all\", got %s", tostring(gather))
  end
  local seed = opts.seed
  if seed ~= nil and math.type(seed) ~= "integer" then bad("option 'seed' must be an integer, got %s", tostring(seed)) end
  local spec = {}
  for k, v in pairs(opts) do spec[k] = v end
  spec.n, spec.workers, spec.seed = n, workers, seed or 0
  spec.gather = gather or "root"
  return spec
end

-- ------------------------------------------------------------------ one member

-- The trajectory as plain data (what lf.run's trajectory holds, without its metatable).
local function plain_trajectory(traj)
  local t = {}
  for k, v in pairs(traj) do t[k] = v end
  return t
end

local function is_interrupt(err)
  return proc.interrupted() or (type(err) == "string" and err:find("interrupted!$") ~= nil)
end

--- Run member i (in a worker, or in this process): returns its record (plain data) and, when the
--- member was stopped by Ctrl-C, true as a second result.
local function run_member(spec, i)
  local rec = {index = i}
  local p = spec.params and spec.params[i]
  local c0, w0 = os.clock(), clock()
  math.randomseed(spec.seed, i)
  local ok, err = pcall(function()
    local system, mopts = spec.make(i, p)
    if system == nil then error(("make(%d) returned no system"):format(i), 0) end
    if mopts ~= nil and type(mopts) ~= "table" then
      error(("make(%d) must return system, options (a table); the options are a %s"):format(i, type(mopts)), 0)
    end
    local o = {}
    for _, k in ipairs(RUN_KEYS) do o[k] = spec[k] end
    for k, v in pairs(mopts or {}) do o[k] = v end
    -- a thermostat's noise: member i's own stream, seed + i - 1 (the same whatever the workers)
    if type(o.thermostat) == "table" then
      local th = {}
      for k, v in pairs(o.thermostat) do th[k] = v end
      if math.type(th.seed or 0) == "integer" and (th.seed or 0) >= 0 then th.seed = (th.seed or 0) + i - 1 end
      o.thermostat = th
    end
    for _, k in ipairs{"method", "h", "T"} do
      if o[k] == nil then
        error(("member %d has no '%s': give it to lf.ensemble or in the options make returns"):format(i, k), 0)
      end
    end
    if o.observe ~= nil and type(o.observe) ~= "table" then
      error(("member %d: option 'observe' must be a table, got %s"):format(i, type(o.observe)), 0)
    end
    local it
    local obs = {}
    for k, v in pairs(o.observe or {}) do obs[k] = v end
    obs[CAPTURE] = function(x) it = x; return 0 end
    o.observe, o.progress = obs, false
    local traj = run.run(system, o)
    traj[CAPTURE] = nil
    for j, c in ipairs(traj.columns) do
      if c == CAPTURE then table.remove(traj.columns, j); break end
    end
    rec.ok = true
    rec.method, rec.h, rec.T = traj.method, traj.h, traj.T
    rec.state = (it and it.state) and it:state() or nil
    rec.stats = {steps = traj.steps, samples = traj.samples}
    if spec.summarize then
      rec.summary = spec.summarize{index = i, params = p, method = rec.method, h = rec.h, T = rec.T,
                                   state = rec.state, trajectory = traj, stats = rec.stats}
    end
    if spec.trajectory ~= false then rec.trajectory = plain_trajectory(traj) end
  end)
  if not ok then
    if is_interrupt(err) then return rec, true end
    -- lf.run's own messages point at this file: keep only the message
    rec = {index = i, ok = false, error = (tostring(err):gsub("^[^\n]-ensemble%.lua:%d+: ", ""))}
  end
  local w1 = clock()
  rec.timing = {cpu_time = os.clock() - c0, wall_time = w1 - w0, finished = w1, pid = proc.getpid(), rank = spec.rank}
  return rec
end

-- The records of a group of members stepped by one lanes integrator (see the header), or nil when
-- the group does not qualify (then it runs member by member, which also reports make's errors).
local function run_lanes(spec, idxs)
  if spec.trajectory ~= false or spec.summarize or spec.observe then return nil end
  local c0, w0 = os.clock(), clock()
  local members, key, o1 = {}, nil, nil
  for j, i in ipairs(idxs) do
    math.randomseed(spec.seed, i)
    local ok, system, mopts = pcall(spec.make, i, spec.params and spec.params[i])
    if not ok or type(system) ~= "userdata" or (mopts ~= nil and type(mopts) ~= "table") then return nil end
    local o = {}
    for _, k in ipairs(RUN_KEYS) do o[k] = spec[k] end
    for k, v in pairs(mopts or {}) do o[k] = v end
    -- lanes share one step size: adaptive members run one by one
    if o.observe ~= nil or o.adapt or o.thermostat or type(o.method) ~= "string" or o.h == nil or o.T == nil then
      return nil
    end
    local okk, kj = pcall(system.lane_model, system)
    if not okk or kj == nil or (key and kj ~= key) then return nil end
    if o1 and (o.method ~= o1.method or o.h ~= o1.h or o.T ~= o1.T or o.every ~= o1.every
               or o.newton_tol ~= o1.newton_tol or o.max_iter ~= o1.max_iter) then return nil end
    key, o1 = kj, o1 or o
    members[j] = {system = system, state = {R = system.R, omega = system.omega}}
  end
  local info
  for _, m in ipairs(core.methods()) do if m.name == o1.method then info = m end end
  if not (info and info.lanes) then return nil end
  local states = {}
  for j, m in ipairs(members) do states[j] = m.state end
  local h, T = o1.h, o1.T
  local n = run.step_count(T, h, "lf.ensemble")
  local ok, it = pcall(core.integrator, o1.method, members[1].system,
                       {h = h, newton_tol = o1.newton_tol, max_iter = o1.max_iter, lanes = states})
  if not ok then return nil end
  -- the steps lf.run takes: n of h, then one to T when n h falls short of it
  local stepped = pcall(function()
    it:step(n)
    if n == 0 or T - n * h > 1e-9 * h then it:advance_to(T) end
  end)
  if not stepped then
    if proc.interrupted() then error("interrupted!", 0) end
    return nil -- a failing member: member by member, for its own error
  end
  local every = o1.every or 1
  local samples = 1 + (n + every - 1) // every + ((n == 0 or T - n * h > 1e-9 * h) and 1 or 0)
  local w1 = clock()
  local recs = {}
  for j, i in ipairs(idxs) do
    recs[j] = {index = i, ok = true, method = o1.method, h = h, T = T, state = it:lane(j),
               stats = {steps = it.steps, samples = samples},
               timing = {cpu_time = (os.clock() - c0) / #idxs, wall_time = (w1 - w0) / #idxs, finished = w1,
                         pid = proc.getpid(), rank = spec.rank, lanes = #idxs}}
  end
  return recs
end

--- The records of a task (a group of member indices), and true as a second result when Ctrl-C
--- stopped it.
local function run_task(spec, idxs)
  if #idxs > 1 then
    local ok, recs = pcall(run_lanes, spec, idxs)
    if not ok and is_interrupt(recs) then return {}, true end
    if ok and recs then return recs end
  end
  local recs = {}
  for j, i in ipairs(idxs) do
    local rec, intr = run_member(spec, i)
    if intr then return recs, true end
    recs[j] = rec
  end
  return recs
end

-- The bytes of a record; a record that cannot be sent (summarize returned a function ...) becomes
-- a failure that says why. The same in a worker and in this process.
local function pack(rec)
  local ok, s = pcall(proc.encode, rec)
  if ok then return s end
  local msg = tostring(s):gsub("^the value", "the record")
  return proc.encode{index = rec.index, ok = false, timing = rec.timing,
                     error = ("its result cannot be sent: %s"):format(msg)}
end

local function cancelled_record(i)
  return {index = i, ok = false, cancelled = true, error = "cancelled (interrupted)"}
end

-- ------------------------------------------------------------------ progress

local function progress_printer(spec, total, k, label)
  local show = spec.progress == true or (spec.progress == nil and core.isatty and core.isatty(2))
  local t0, last, shown = clock(), 0, false
  local pr = {}
  function pr.update(done, failed, final)
    if not show then return end
    local now = clock()
    if not final and (now - last < 0.2 or (spec.progress == nil and now - t0 < 1)) then return end
    if final and not shown then return end
    last, shown = now, true
    local el = now - t0
    local eta = done > 0 and done < total and (" ~%.0f s left"):format(el / done * (total - done)) or ""
    io.stderr:write(("\rlf.ensemble: %d/%d members, %d failed, %d %s, %.1f s%s   %s"):format(
      done, total, failed, k, label, el, eta, final and "\n" or ""))
    io.stderr:flush()
  end
  return pr
end

-- ------------------------------------------------------------------ engines
-- Both return payloads[i] (encoded records) for the members in `indices`, and interrupted.

local function run_here(spec, tasks, payloads, pr)
  local done, failed = 0, 0
  local interrupted = false
  local ok, err = pcall(function()
    for _, task in ipairs(tasks) do
      if proc.interrupted() then interrupted = true; return end
      local recs, intr = run_task(spec, task)
      for _, rec in ipairs(recs) do
        rec.timing.worker = 0
        payloads[rec.index] = pack(rec)
        done = done + 1
        if not rec.ok then failed = failed + 1 end
      end
      if intr then interrupted = true; return end
      pr.update(done, failed)
    end
  end)
  if not ok then
    if is_interrupt(err) then interrupted = true else error(err, 0) end
  end
  pr.update(done, failed, true)
  return interrupted
end

-- A task (member indices) as a frame, and back.
local function task_frame(task) return string.pack("<i8" .. ("i8"):rep(#task), #task, table.unpack(task)) end
local function frame_task(frame)
  local n = string.unpack("<i8", frame)
  local task = {string.unpack("<" .. ("i8"):rep(n), frame, 9)}
  task[n + 1] = nil -- string.unpack's last result: the position after the data
  return task
end

-- In a worker: take tasks until the parent closes the socket, send back one record per member.
local function worker_loop(spec, fd, id)
  while true do
    local frame = proc.recv(fd)
    if not frame then return end
    local recs = run_task(spec, frame_task(frame))
    for _, rec in ipairs(recs) do
      rec.timing.worker = id
      if not proc.send(fd, string.pack("<i8", rec.index) .. pack(rec)) then return end
    end
  end
end

local function status_text(how, code, name)
  if how == "exited" then return ("exited with status %d"):format(code) end
  if how == "signaled" then return ("killed by signal %d (%s)"):format(code, name or "?") end
  return tostring(how)
end

local function run_forked(spec, tasks, k, payloads, pr)
  local group <close> = proc.group()
  local workers, next_id = {}, 0
  local pos, done, failed = 1, 0, 0
  local total = 0
  for _, task in ipairs(tasks) do total = total + #task end
  local interrupted = false

  local function spawn()
    next_id = next_id + 1
    local pfd, cfd = proc.socketpair()
    if not pfd then error("lf.ensemble: cannot create a socket pair for a worker: " .. tostring(cfd), 0) end
    local pid, ferr = proc.fork()
    if not pid then
      proc.close(pfd); proc.close(cfd)
      error("lf.ensemble: cannot start a worker process: " .. tostring(ferr), 0)
    end
    if pid == 0 then -- the worker: never returns into the script
      local ok = pcall(function()
        proc.close(pfd)
        for fd in pairs(workers) do proc.close(fd) end -- the siblings' sockets (their end of file)
        worker_loop(spec, cfd, next_id)
      end)
      proc.exit(ok and 0 or 70)
    end
    proc.close(cfd)
    group:add(pid, pfd)
    local w = {pid = pid, fd = pfd, reader = proc.reader(pfd), id = next_id}
    workers[pfd] = w
    return w
  end

  -- w.task: the task handed to worker w; w.left: its members not yet reported (index -> true)
  local requeue = {} -- tasks handed to a worker that was already gone: they never ran
  local function assign(w)
    if #requeue > 0 then
      w.task = table.remove(requeue)
    elseif pos <= #tasks then
      w.task = tasks[pos]
      pos = pos + 1
    else
      w.task, w.left = nil, nil
      return
    end
    w.left = {}
    for _, i in ipairs(w.task) do w.left[i] = true end
    proc.send(w.fd, task_frame(w.task)) -- a dead worker shows as end of file below
  end
  local function pending() return pos <= #tasks or #requeue > 0 end

  local function finish(i, payload, ok)
    payloads[i] = payload
    done = done + 1
    if not ok then failed = failed + 1 end
  end

  local ok, err = pcall(function()
    for _ = 1, math.min(k, #tasks) do assign(spawn()) end
    while done < total do
      local fds = {}
      for fd in pairs(workers) do fds[#fds + 1] = fd end
      table.sort(fds)
      local ready, intr = proc.poll(fds, 200)
      if intr then interrupted = true; return end
      for _, fd in ipairs(ready) do
        local w = workers[fd]
        local frames, eof = w.reader:pump()
        local fresh = false -- w.task was handed out in this round (after its predecessor finished)
        for _, f in ipairs(frames) do
          local i = string.unpack("<i8", f)
          if not (w.left and w.left[i]) then
            error(("lf.ensemble: worker %d sent member %d, which it was not running"):format(w.id, i), 0)
          end
          local payload = f:sub(9)
          local rok, rec = pcall(proc.decode, payload)
          local good = rok and rec.ok
          if not rok then
            payload = proc.encode{index = i, ok = false, error = ("garbled result from worker %d: %s"):format(w.id, tostring(rec))}
          end
          finish(i, payload, good)
          w.left[i] = nil
          if next(w.left) == nil then
            assign(w)
            fresh = true
          end
        end
        if eof then -- the worker is gone (crash, os.exit, killed): its members fail, a new one takes over
          workers[fd] = nil
          local how, code, name = group:reap(w.pid, 2)
          if w.task and fresh then -- sent to a worker that had already ended: run it elsewhere
            requeue[#requeue + 1] = w.task
            w.task, w.left = nil, nil
          end
          if w.task then
            for _, i in ipairs(w.task) do
              if w.left[i] then
                finish(i, proc.encode{index = i, ok = false, timing = {worker = w.id, pid = w.pid},
                  error = ("worker process %d %s while running member %d"):format(w.pid,
                    status_text(how, code, name), i)}, false)
              end
            end
            w.task, w.left = nil, nil
          end
          if pending() then assign(spawn()) end
        end
      end
      pr.update(done, failed)
    end
  end)
  if not ok then
    if is_interrupt(err) then interrupted = true else group:shutdown(0); error(err, 0) end
  end
  -- normal end: the workers see their socket close and exit by themselves; after Ctrl-C they are
  -- killed at once
  group:shutdown(interrupted and 0 or 5)
  pr.update(done, failed, true)
  return interrupted
end

-- ------------------------------------------------------------------ MPI

local mpi_mod, mpi_err
local function load_mpi()
  if mpi_mod or mpi_err then return mpi_mod, mpi_err end
  local ok, m = pcall(require, "lieflow.mpi")
  if not ok then
    -- the build tree: beside the core (build/lua/lieflow/core.so, or build/lieflow linking it), or
    -- <root>/build/lua/lieflow/mpi.so for <root>/scripts/?.lua on package.path
    local dirs = {}
    local bin = core.binary
    if bin then
      local dir = bin:match("^(.*)/[^/]*$")
      dirs[#dirs + 1] = dir .. "/../?.so"  -- core.so in <dir> = .../lua/lieflow
      dirs[#dirs + 1] = dir .. "/lua/?.so" -- the executable in build/
    end
    for root in package.path:gmatch("([^;]*)/scripts/%?%.lua") do dirs[#dirs + 1] = root .. "/build/lua/?.so" end
    for _, d in ipairs(dirs) do
      local f = package.searchpath("lieflow.mpi", d)
      if f then
        local open, lerr = package.loadlib(f, "luaopen_lieflow_mpi")
        if open then ok, m = true, open(); package.loaded["lieflow.mpi"] = m; break end
        m = lerr
      end
    end
  end
  if ok then mpi_mod = m else mpi_err = tostring(m) end
  return mpi_mod, mpi_err
end

--- The lieflow.mpi module (nil, message when it cannot be loaded): from the Lua C path, or from
--- the build tree next to the scripts (build/lua/lieflow/mpi.so).
function M.mpi_module() return load_mpi() end

--- The MPI launcher's environment variable that says this process is one rank of a job, and its
--- value (nil when not started by mpirun / srun).
function M.mpi_launched()
  for _, v in ipairs{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK"} do
    local x = os.getenv(v)
    if x then return v, x end
  end
end

local mpi_ctx
--- The MPI context {mpi =, rank =, size =} when this process is a rank of an MPI job (MPI is then
--- initialized), else nil. want: the ensemble's 'mpi' option (nil: automatic).
local function mpi_context(want)
  if want == false then return nil end
  if mpi_ctx then return mpi_ctx end
  local var, val = M.mpi_launched()
  if not var and want == nil then return nil end
  local mpi, err = load_mpi()
  if not mpi then
    error(("lf.ensemble: %s but the lieflow.mpi module cannot be loaded (%s); build it with OpenMPI installed "
      .. "(libopenmpi-dev: make), or pass mpi = false"):format(
      var and ("started as an MPI rank (%s=%s)"):format(var, val) or "mpi = true", err), 3)
  end
  local rank, size = mpi.init()
  mpi_ctx = {mpi = mpi, rank = rank, size = size}
  return mpi_ctx
end

--- rank, size of this process in its MPI job (0, 1 outside MPI). Initializes MPI when started by
--- mpirun.
function M.rank()
  local ctx = mpi_context(nil)
  if ctx then return ctx.rank, ctx.size end
  return 0, 1
end

--- true on rank 0 of an MPI job and outside MPI: the process that has the results and writes files.
function M.is_root() return (M.rank()) == 0 end

--- CPUs this process may run on (its affinity mask: taskset, cgroups, mpirun's binding).
function M.ncpu() return (proc.ncpu()) end

local TAG_GATHER, TAG_ALL = 7101, 7102

-- ------------------------------------------------------------------ results

local function decode_record(spec, i, payload)
  local rec = proc.decode(payload)
  if spec.params then rec.params = spec.params[i] end
  if rec.trajectory then setmetatable(rec.trajectory, trajectory.trajectory_mt) end
  return rec
end

local result_mt = {__name = "lf.ensemble_result"}

local function assemble(spec, payloads, interrupted, k, ranks, t0)
  local res = setmetatable({n = spec.n, failed = {}, cancelled = {}, completed = 0, interrupted = interrupted,
               workers = k, ranks = ranks, root = true}, result_mt)
  for i = 1, spec.n do
    local rec
    if payloads[i] then rec = decode_record(spec, i, payloads[i]) else
      rec = cancelled_record(i)
      if spec.params then rec.params = spec.params[i] end
    end
    res[i] = rec
    if rec.ok then res.completed = res.completed + 1
    elseif rec.cancelled then res.cancelled[#res.cancelled + 1] = i
    else res.failed[#res.failed + 1] = i end
  end
  res.wall_time = clock() - t0
  if #res.failed > 0 and not spec.quiet then
    local show = {}
    for j = 1, math.min(#res.failed, 10) do show[j] = res.failed[j] end
    io.stderr:write(("lf.ensemble: %d of %d members failed (%s%s); member %d: %s\n"):format(#res.failed, spec.n,
      table.concat(show, ", "), #res.failed > 10 and ", ..." or "", res.failed[1], res[res.failed[1]].error))
  end
  if interrupted and not spec.quiet then
    io.stderr:write(("lf.ensemble: interrupted: %d of %d members finished\n"):format(res.completed + #res.failed, spec.n))
  end
  return res
end

--- lf.ensemble(opts) -> res, reduced (see the header of this file).
function M.run(opts)
  local spec = check_options(opts)
  local t0 = clock()
  local ctx = mpi_context(spec.mpi)
  local rank, size = 0, 1
  if ctx then rank, size = ctx.rank, ctx.size end
  spec.rank = rank
  local indices = {}
  for i = 1, spec.n do
    if (i - 1) % size == rank then indices[#indices + 1] = i end
  end
  local tasks, per = {}, spec.lanes or 1 -- consecutive members in groups of up to `lanes`
  for j = 1, #indices, per do
    local task = {}
    for q = j, math.min(j + per - 1, #indices) do task[#task + 1] = indices[q] end
    tasks[#tasks + 1] = task
  end
  local k = spec.workers or (size > 1 and 1 or proc.ncpu())
  k = math.max(1, math.min(k, #tasks))
  local payloads = {}
  local pr = progress_printer(spec, #indices, k, k == 1 and "process" or "workers")
  if size > 1 and rank ~= 0 then pr.update = function() end end
  local interrupted
  if k == 1 then interrupted = run_here(spec, tasks, payloads, pr)
  else interrupted = run_forked(spec, tasks, k, payloads, pr) end

  if size > 1 then
    local mpi = ctx.mpi
    local ok, err = pcall(function()
      if rank ~= 0 then
        mpi.send(0, TAG_GATHER, proc.encode{payloads = payloads, interrupted = interrupted})
      else
        for r = 1, size - 1 do
          local part = proc.decode(mpi.recv(r, TAG_GATHER))
          for i, pl in pairs(part.payloads) do payloads[i] = pl end
          interrupted = interrupted or part.interrupted
        end
      end
      if spec.gather == "all" then
        local all = mpi.bcast(rank == 0 and proc.encode{payloads = payloads, interrupted = interrupted} or nil, 0)
        local d = proc.decode(all)
        payloads, interrupted = d.payloads, d.interrupted
      end
    end)
    if not ok then
      io.stderr:write(("lf.ensemble (MPI rank %d of %d): %s\n"):format(rank, size, tostring(err)))
      mpi.abort(1)
    end
    if rank ~= 0 and spec.gather ~= "all" then
      return {n = spec.n, root = false, rank = rank, ranks = size, workers = k, failed = {}, cancelled = {},
              completed = 0, interrupted = interrupted, wall_time = clock() - t0}
    end
  end
  local res = assemble(spec, payloads, interrupted, k, size, t0)
  res.rank = rank
  if rank ~= 0 then res.root = false end
  if spec.reduce and (rank == 0 or spec.gather == "all") then
    res.reduced = spec.reduce(res)
  end
  return res, res.reduced
end

-- ------------------------------------------------------------------ comparison

local function same_number(a, b)
  if math.type(a) ~= math.type(b) then return false end
  if math.type(a) == "integer" then return a == b end
  return string.pack("<d", a) == string.pack("<d", b)
end

local function describe(v)
  if type(v) == "number" then return math.type(v) == "float" and ("%a"):format(v) or tostring(v) end
  return type(v) == "string" and ("%q"):format(v) or tostring(v)
end

-- fields that measure time (different on every run)
local TIMING = {timing = true, cpu_time = true, wall_time = true}

local function diff(a, b, path, skip)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ("%s: %s vs %s"):format(path, describe(a), describe(b)) end
  if ta == "number" then
    if same_number(a, b) then return nil end
    return ("%s: %s vs %s"):format(path, describe(a), describe(b))
  end
  if ta == "userdata" then
    local ma, mb = getmetatable(a), getmetatable(b)
    if ma ~= mb or not (ma and a.totable) then return ("%s: %s vs %s"):format(path, tostring(a), tostring(b)) end
    return diff(a:totable(), b:totable(), path, skip)
  end
  if ta ~= "table" then
    if a == b then return nil end
    return ("%s: %s vs %s"):format(path, describe(a), describe(b))
  end
  local keys = {}
  for k in pairs(a) do keys[#keys + 1] = k end
  for k in pairs(b) do if a[k] == nil then keys[#keys + 1] = k end end
  table.sort(keys, function(x, y)
    if type(x) == type(y) and (type(x) == "number" or type(x) == "string") then return x < y end
    return type(x) < type(y)
  end)
  for _, k in ipairs(keys) do
    if not (skip and TIMING[k]) then
      local d = diff(a[k], b[k], path .. (type(k) == "string" and ("." .. k) or ("[" .. tostring(k) .. "]")), skip)
      if d then return d end
    end
  end
  return nil
end

-- what two ensemble results must share: the members and what follows from them (not how many
-- workers or ranks computed them, nor when)
local function result_core(r)
  local c = {n = r.n, failed = r.failed, cancelled = r.cancelled, completed = r.completed,
             interrupted = r.interrupted, reduced = r.reduced}
  for i = 1, r.n or 0 do c[i] = r[i] end
  return c
end

--- M.identical(a, b [, {timing = true}]) -> true | false, "path: x vs y" (the first difference).
--- Bitwise comparison of two values (ensemble results, member records, states): numbers by their
--- 8 bytes and subtype, vec3/mat3 by their components. Fields that measure time (timing, cpu_time,
--- wall_time) are skipped unless opts.timing is true. Two ensemble results are compared by their
--- members, n, failed, cancelled, completed, interrupted and reduced (not workers, ranks, wall_time).
function M.identical(a, b, opts)
  if getmetatable(a) == result_mt and getmetatable(b) == result_mt then a, b = result_core(a), result_core(b) end
  local d = diff(a, b, "res", not (opts and opts.timing))
  if d then return false, d end
  return true
end

return setmetatable(M, {__call = function(_, opts) return M.run(opts) end})
