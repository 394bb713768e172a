-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — the frames of a view (the page of traj:animate and the glTF of traj:write_gltf): which
-- samples are shown, and each object's rotation and position at each of them.
--
-- Frame budget: a view shows at most `frames` samples (default M.FRAMES = 2000) of the window
-- [t0, t1] (default: the whole run): every sample when there are that few, else `frames` samples
-- evenly spaced in index, the first and the last included. So a 10^6-sample run gives 2000 frames.
-- The plot beside the view keeps the whole run as a min/max envelope of at most `plot_points`
-- buckets (default M.PLOT_POINTS = 1000): the extremes of every bucket survive the thinning.
--
-- Rotations are unit quaternions {w, x, y, z} (the sign chosen continuous from frame to frame, for
-- interpolation): a box's is the body's attitude R; a rod's maps the z axis onto its unit vector q,
-- transported from frame to frame by the smallest rotation (a rod has no attitude about itself).
local states = require "lieflow.run.states"
local core = require "lieflow.core"

local M = {}
M.FRAMES = 2000
M.PLOT_POINTS = 1000

-- first index k with t[k] >= x (t increasing); n + 1 if none
local function lower_bound(t, n, x)
  local lo, hi = 1, n + 1
  while lo < hi do
    local mid = (lo + hi) // 2
    if t[mid] < x then lo = mid + 1 else hi = mid end
  end
  return lo
end

--- M.select(traj, opts) -> sample indices of the frames (opts.frames, opts.t0, opts.t1).
function M.select(traj, opts)
  local t, n = traj.t, traj.samples
  local budget = opts.frames or M.FRAMES
  local a = opts.t0 and lower_bound(t, n, opts.t0) or 1
  local b = opts.t1 and (lower_bound(t, n, opts.t1 + 1e-12 * math.max(1, math.abs(opts.t1))) - 1) or n
  if b < a then error(("no sample in the window [%s, %s] (the run covers [%g, %g])"):format(
    tostring(opts.t0), tostring(opts.t1), t[1], t[n]), 0) end
  local idx, count = {}, b - a + 1
  if count <= budget then
    for k = a, b do idx[#idx + 1] = k end
  else
    for j = 0, budget - 1 do idx[j + 1] = a + math.floor(j * (count - 1) / (budget - 1) + 0.5) end
  end
  return idx
end

-- quaternion of the smallest rotation taking unit vector a to unit vector b
local function rot_between(a, b)
  local d = a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
  if d < -1 + 1e-12 then -- opposite: a half turn about an axis perpendicular to a
    local p = math.abs(a[1]) < 0.9 and {1, 0, 0} or {0, 1, 0}
    local x = {a[2] * p[3] - a[3] * p[2], a[3] * p[1] - a[1] * p[3], a[1] * p[2] - a[2] * p[1]}
    local m = math.sqrt(x[1] ^ 2 + x[2] ^ 2 + x[3] ^ 2)
    return {0, x[1] / m, x[2] / m, x[3] / m}
  end
  local q = {1 + d, a[2] * b[3] - a[3] * b[2], a[3] * b[1] - a[1] * b[3], a[1] * b[2] - a[2] * b[1]}
  local m = math.sqrt(q[1] ^ 2 + q[2] ^ 2 + q[3] ^ 2 + q[4] ^ 2)
  return {q[1] / m, q[2] / m, q[3] / m, q[4] / m}
end

local function qmul(a, b)
  return {a[1] * b[1] - a[2] * b[2] - a[3] * b[3] - a[4] * b[4], a[1] * b[2] + a[2] * b[1] + a[3] * b[4] - a[4] * b[3],
          a[1] * b[3] - a[2] * b[4] + a[3] * b[1] + a[4] * b[2], a[1] * b[4] + a[2] * b[3] - a[3] * b[2] + a[4] * b[1]}
end

local function unit(v)
  local m = math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2)
  return {v[1] / m, v[2] / m, v[3] / m}
end

-- The value an object shows at a state: a rotation as {w, x, y, z} (boxes) or a unit vector (rods).
local function value_of(obj, st)
  local v = st[obj.field]
  if obj.field == "y" or type(v) == "table" and getmetatable(v) == nil then v = v[obj.index] end
  if obj.shape == "box" then
    if type(v) == "userdata" then return core.quat.from_matrix(v) end
    local m = math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2 + v[4] ^ 2)
    return {v[1] / m, v[2] / m, v[3] / m, v[4] / m}
  end
  if type(v) == "table" and v.q then v = v.q end
  return unit(type(v) == "userdata" and v:totable() or v)
end
M.value_of = value_of

-- One frame of every object: its quaternion (continued from prev[o]) and its position.
local function frame_of(objects, st, prev, dirs)
  local qs, ps = {}, {}
  for o, obj in ipairs(objects) do
    local v = value_of(obj, st)
    local q
    if obj.shape == "box" then q = v
    else
      q = prev[o] and qmul(rot_between(dirs[o], v), prev[o]) or rot_between({0, 0, 1}, v)
      local m = math.sqrt(q[1] ^ 2 + q[2] ^ 2 + q[3] ^ 2 + q[4] ^ 2)
      q = {q[1] / m, q[2] / m, q[3] / m, q[4] / m}
      dirs[o] = v
    end
    local p = prev[o]
    if p and p[1] * q[1] + p[2] * q[2] + p[3] * q[3] + p[4] * q[4] < 0 then q = {-q[1], -q[2], -q[3], -q[4]} end
    qs[o] = q
    if obj.parent then
      local a, pa = ps[obj.parent], objects[obj.parent]
      local d = dirs[obj.parent]
      ps[o] = {a[1] + pa.length * d[1], a[2] + pa.length * d[2], a[3] + pa.length * d[3]}
    elseif obj.pos_field then -- a body that translates: at its centre of mass
      local x = st[obj.pos_field]
      if type(x) == "table" and getmetatable(x) == nil then x = x[obj.index] end
      ps[o] = type(x) == "userdata" and x:totable() or x
    else
      ps[o] = obj.pos
    end
  end
  return qs, ps
end

--- M.compute(traj, scene, idx) -> {t = {...}, k = idx, q = {[o] = {w, x, y, z, ...}},
--- p = {[o] = {x, y, z, ...} | nil}} (p only for objects that move: those with a parent or a pos_field).
function M.compute(traj, scene, idx)
  local objects = scene.objects
  local out = {t = {}, k = idx, q = {}, p = {}}
  for o, obj in ipairs(objects) do
    out.q[o] = {}
    if obj.parent or obj.pos_field then out.p[o] = {} end
  end
  local prev, dirs = {}, {}
  for f, k in ipairs(idx) do
    local st = states.state(traj, k)
    out.t[f] = traj.t[k]
    local qs, ps = frame_of(objects, st, prev, dirs)
    for o = 1, #objects do
      local q, a = out.q[o], 4 * (f - 1)
      q[a + 1], q[a + 2], q[a + 3], q[a + 4] = qs[o][1], qs[o][2], qs[o][3], qs[o][4]
      if out.p[o] then
        local p, b = out.p[o], 3 * (f - 1)
        p[b + 1], p[b + 2], p[b + 3] = ps[o][1], ps[o][2], ps[o][3]
      end
    end
    prev = qs
  end
  return out
end

--- M.recorded(traj, scene, idx) -> {[o] = {values per frame}}: what each object shows at each frame,
--- from the recorded state itself (doubles): a box's R row-major (9 numbers; an s3 factor's rotation
--- from its quaternion), a rod's unit vector q (3). The browser test compares the page with these.
function M.recorded(traj, scene, idx)
  local out = {}
  for o = 1, #scene.objects do out[o] = {} end
  for f, k in ipairs(idx) do
    local st = states.state(traj, k)
    for o, obj in ipairs(scene.objects) do
      local v = st[obj.field]
      if obj.field == "y" or type(v) == "table" and getmetatable(v) == nil then v = v[obj.index] end
      if obj.shape == "box" then
        local R = type(v) == "userdata" and v or core.quat.to_matrix(v)
        local t = R:totable()
        out[o][f] = {t[1][1], t[1][2], t[1][3], t[2][1], t[2][2], t[2][3], t[3][1], t[3][2], t[3][3]}
      else
        if type(v) == "table" and v.q then v = v.q end
        out[o][f] = type(v) == "userdata" and v:totable() or v
      end
    end
  end
  return out
end

--- M.envelope(traj, column, points) -> {name =, t = {...}, lo = {...}, hi = {...}}: the column over
--- the whole run as min/max per bucket of consecutive samples (at most `points` buckets).
function M.envelope(traj, column, points)
  local t, y, n = traj.t, traj[column], traj.samples
  local env = {name = column, t = {}, lo = {}, hi = {}, t1 = t[n]}
  local per = math.max(1, math.ceil(n / (points or M.PLOT_POINTS)))
  for a = 1, n, per do
    local lo, hi = math.huge, -math.huge
    for k = a, math.min(n, a + per - 1) do
      local v = y[k]
      if v == v then
        if v < lo then lo = v end
        if v > hi then hi = v end
      end
    end
    if lo <= hi then env.t[#env.t + 1], env.lo[#env.lo + 1], env.hi[#env.hi + 1] = t[a], lo, hi end
  end
  return env
end

return M
