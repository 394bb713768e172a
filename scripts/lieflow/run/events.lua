-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — lf.run's samples at given times (option at) and events (option events), on the dense output
-- of the integrator (it:dense(t): the Hermite interpolant in the Lie algebra, core/method/dense.c).
--
-- at = {t1, t2, ...} (increasing, within [0, T]): the samples are taken at exactly those times
-- (traj.t[i] == t_i) from the interpolant of the step that contains each, without changing the steps;
-- the run records no other sample. energy_error is against E at t = 0.
-- events = {{g = function(t, state [, p]) return number end, direction = "up" | "down" | "both",
-- stop = false, name = "..."}, ...}: after every step each g is evaluated at the new state (state: the
-- fields of it:state(); p: the system's params); a sign change (in the direction asked: "up" from < 0 to
-- >= 0) is located by the Illinois method (modified regula falsi) on g(t, it:dense(t)) to 1e-12
-- relative in t, then refined with the method's own steps (a step of tau - t0 from the step's start, g at
-- its end, Illinois again within 1e-6 h of the interpolant's root): the event's time has the method's
-- accuracy, not the interpolant's (order 3). traj.events[i] = {name =, t =, state =} (the state of that
-- step), in the order of their times. An event with stop = true ends the run at its time, with the state
-- there (the last sample). At a zero: a crossing is a sign change from a nonzero value, so g = 0 at the
-- start does not fire (no event at t0), and g reaching 0 exactly at a step's end fires there, once (the next
-- step starts from 0). Measured (tests/lua/events_spec.lua): the Dzhanibekov flips to 2.6e-12 with
-- rkmk_gl6 at h = 0.025 (7.6e-10 with the interpolant's root alone).
local M = {}

local function fail(fn, fmt, ...) error(("%s: " .. fmt):format(fn, ...), 0) end

--- M.check_at(at, T, fn) -> the times (a copy), checked: finite, increasing, within [0, T]
function M.check_at(at, T, fn)
  if type(at) ~= "table" or #at < 1 then fail(fn, "option 'at' must be an array of times, got %s", type(at)) end
  local out = {}
  for i = 1, #at do
    local t = at[i]
    if type(t) ~= "number" or t ~= t or t < 0 or t > T then
      fail(fn, "at[%d] = %s: expected a time in [0, T = %.17g]", i, tostring(t), T)
    end
    if i > 1 and not (t > out[i - 1]) then fail(fn, "at[%d] = %.17g: the times must increase (at[%d] = %.17g)", i, t,
      i - 1, out[i - 1]) end
    out[i] = t
  end
  return out
end

local DIRECTIONS = {up = 1, down = -1, both = 0}

--- M.check_events(events, fn) -> the events checked: {g =, dir = 1 | -1 | 0, stop =, name =}
function M.check_events(events, fn)
  if type(events) ~= "table" or #events < 1 then
    fail(fn, "option 'events' must be an array of {g = function(t, state) ... end, ...}, got %s", type(events))
  end
  local out = {}
  for i, e in ipairs(events) do
    if type(e) ~= "table" then fail(fn, "events[%d] must be a table {g =, direction =, stop =, name =}, got %s", i, type(e)) end
    for k in pairs(e) do
      if k ~= "g" and k ~= "direction" and k ~= "stop" and k ~= "name" then
        fail(fn, "events[%d]: unknown field '%s' (fields: g, direction, stop, name)", i, tostring(k))
      end
    end
    if type(e.g) ~= "function" and not (getmetatable(e.g) and getmetatable(e.g).__call) then
      fail(fn, "events[%d].g must be a function(t, state [, p]) returning a number, got %s", i, type(e.g))
    end
    local dir = DIRECTIONS[e.direction or "both"]
    if not dir then fail(fn, "events[%d].direction must be \"up\", \"down\" or \"both\", got %s", i, tostring(e.direction)) end
    if e.stop ~= nil and type(e.stop) ~= "boolean" then fail(fn, "events[%d].stop must be true or false, got %s", i, type(e.stop)) end
    if e.name ~= nil and type(e.name) ~= "string" then fail(fn, "events[%d].name must be a string, got %s", i, type(e.name)) end
    out[i] = {g = e.g, dir = dir, stop = e.stop == true, name = e.name or ("event " .. i)}
  end
  return out
end

-- g of event e at (t, state), a finite number, or an error naming the event
local function value(e, t, state, p, fn)
  local ok, v = pcall(e.g, t, state, p)
  if not ok then fail(fn, "event '%s': g failed at t = %.17g: %s", e.name, t, tostring(v)) end
  if type(v) ~= "number" or v ~= v or math.abs(v) == math.huge then
    fail(fn, "event '%s': g returned %s at t = %.17g, expected a finite number", e.name, tostring(v), t)
  end
  return v
end

-- whether g going from a to b is a crossing in direction dir (a < 0 <= b up, a > 0 >= b down)
local function crosses(a, b, dir)
  local up, down = a < 0 and b >= 0, a > 0 and b <= 0
  return dir == 1 and up or dir == -1 and down or dir == 0 and (up or down)
end

--- M.locate(f, ta, tb, ga, gb) -> t: a root of f in [ta, tb] (ga = f(ta), gb = f(tb) of opposite signs or
--- gb = 0) by the Illinois method, to 1e-12 relative (absolute 1e-12 near t = 0), at most 200 evaluations
function M.locate(f, ta, tb, ga, gb)
  if gb == 0 then return tb end
  local side = 0
  for _ = 1, 200 do
    if math.abs(tb - ta) <= 1e-12 * math.max(1, math.abs(ta), math.abs(tb)) then break end
    local t = (ta * gb - tb * ga) / (gb - ga)
    if not (t > math.min(ta, tb) and t < math.max(ta, tb)) then t = 0.5 * (ta + tb) end
    local g = f(t)
    if g == 0 then return t end
    if (g > 0) == (gb > 0) then
      tb, gb = t, g
      if side == -1 then ga = ga / 2 end
      side = -1
    else
      ta, ga = t, g
      if side == 1 then gb = gb / 2 end
      side = 1
    end
  end
  return math.abs(ga) < math.abs(gb) and ta or tb
end

--- M.step_all(r, take, probe): the steps of run r with option at (r.at) and/or events (r.events): one
--- step at a time while events are watched (else as many as reach the next time of at), the samples at
--- the times of at from probe (an integrator set to the interpolated state), r.event_list filled.
function M.step_all(r, take, probe)
  local it, h, fn, p = r.it, r.h, r.fn, r.params
  local at, events, nat = r.at, r.events, 1
  local list = {}
  r.event_list = list
  local gv = {}
  if events then
    local s0 = it:state()
    for i, e in ipairs(events) do gv[i] = value(e, it.t, s0, p, fn) end
  end
  -- An event's time refined with the method's own steps: tau -> g(tau, the state one step of tau - t0 from
  -- the step's start) has a root near the interpolant's (t_i); bracketed within 1e-6 h of it, Illinois on
  -- it (each value a step of the probe) gives the time to the method's accuracy instead of the
  -- interpolant's. The state there is the probe's. Not bracketed (a crossing the steps see otherwise than
  -- the interpolant): the interpolant's time and state.
  local function stepped(e, tau, s0)
    probe:set_state(s0)
    local ok, err = pcall(probe.advance_to, probe, tau)
    if not ok then fail(fn, "event '%s': a step to t = %.17g failed: %s", e.name, tau, tostring(err)) end
    local s = probe:state()
    return value(e, tau, s, p, fn), s
  end
  local function refine(e, ti, s0, t0, t1)
    local d = 1e-6 * math.abs(t1 - t0)
    local a, b = math.max(math.min(t0, t1), ti - d), math.min(math.max(t0, t1), ti + d)
    if not (b > a) or a == s0.t then return ti, it:dense(ti) end
    local ga, gb = stepped(e, a, s0), stepped(e, b, s0)
    if not crosses(ga, gb, 0) and gb ~= 0 then return ti, it:dense(ti) end
    local te = M.locate(function(tau) return (stepped(e, tau, s0)) end, a, b, ga, gb)
    local _, s = stepped(e, te, s0)
    return te, s
  end
  local function sample_at(t) -- a sample of the interpolated state at t (the integrator's own at its time)
    if t == it.t then return take(it) end
    it:dense(t, probe)
    take(probe)
  end
  if not at then take(it) end -- the initial sample
  while at and nat <= #at and at[nat] == it.t do take(it); nat = nat + 1 end -- (a time at the start)
  local n, done = r.n, 0
  local need_last = n == 0 or r.T - n * h > 1e-9 * h -- a last, shorter step that lands on T
  local function finished() return done >= n and (not need_last or it.t >= r.T) end
  while not finished() do
    -- the next step: h, or the last, shorter one that lands on T
    if not events and done < n and at and nat <= #at then -- no events: whole steps up to the next time
      local k = math.min(n - done, math.max(1, math.floor((at[nat] - it.t) / h)))
      if k > 1 then
        local ok, err = pcall(it.step, it, k - 1)
        if not ok then r.failed(err, it.t) end
        done = done + k - 1
      end
    end
    local t0 = it.t
    local ok, err
    if done >= n then ok, err = pcall(it.advance_to, it, r.T) else ok, err = pcall(it.step, it, 1) end
    if not ok then r.failed(err, it.t) end
    done = done + 1
    local t1 = it.t
    -- the events of this step, in time order
    local hits = {}
    if events then
      local s1 = it:state()
      for i, e in ipairs(events) do
        local g1 = value(e, t1, s1, p, fn)
        if crosses(gv[i], g1, e.dir) then
          local te = M.locate(function(t) return value(e, t, it:dense(t), p, fn) end, t0, t1, gv[i], g1)
          hits[#hits + 1] = {e = e, t = te}
        end
        gv[i] = g1
      end
      table.sort(hits, function(a, b) return (a.t - b.t) * (t1 - t0) < 0 end)
    end
    local stop
    for _, hit in ipairs(hits) do
      local te, st = refine(hit.e, hit.t, it:dense(t0), t0, t1)
      list[#list + 1] = {name = hit.e.name, t = te, state = st}
      if hit.e.stop then stop = list[#list]; break end
    end
    while at and nat <= #at and at[nat] <= (stop and stop.t or t1) do sample_at(at[nat]); nat = nat + 1 end
    if stop then -- a terminal event: the run ends there, with the state there
      it:set_state(stop.state)
      if not at then take(it) end
      return
    end
    if not at and (done % r.every == 0 or finished()) then take(it) end
  end
end

return M
