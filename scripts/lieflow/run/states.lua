-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — recorded states: lf.run{..., states = true} keeps the full state of every sample.
--
-- The layout of a system's state comes from its fields (system.fields: R and omega of rigid bodies,
-- q and omega of systems on spheres, y of a Lie-group ODE) and the shape of each field's value: a
-- mat3 (9 numbers, row-major), a vec3 (3), an array of numbers (a quaternion {w, x, y, z}, r<m>), a
-- list of such values (several bodies, spheres or factors) or a record ({q =, omega =} of ts2,
-- {F =, P =} of tgl3, {R =, p =} of se3). A sample is the concatenation of those numbers: `size`
-- doubles.
--
-- In memory, samples are packed as native doubles (string.pack "d") in blocks of BLOCK samples
-- (one Lua string each): 8 * size bytes per sample, plus about 0.2 bytes per sample of block
-- overhead. A rigid body: 12 doubles = 96 bytes; n bodies 96 n; n spheres 48 n; a Lie ODE 8 bytes
-- per number of its state (so3 9, s2 3, s3 4, ts2 6, gl3 9, tgl3 18, se3 12, r<m> m). A streamed run
-- (stream = "file.csv") writes the same numbers as CSV columns (layout.columns) instead, and
-- traj:load() reads them back as columns: traj:state(k) then reads those.
--
-- The trajectory keeps plain data (so that lf.ensemble can send it): state_layout = {fields =,
-- shapes =, size =, columns =, block =} and state_blocks = {string, ...}.
local core = require "lieflow.core"

local M = {}
M.BLOCK = 256

-- The shape of a value: {k = "n" | "m" | "v" | "a", n = count} | {k = "l", items = {...}} |
-- {k = "r", keys = {...}, items = {...}}; every shape has size (its count of numbers).
local function shape_of(v)
  if type(v) == "number" then return {k = "n", size = 1} end
  if type(v) == "userdata" then
    local t = v:totable()
    if type(t[1]) == "table" then return {k = "m", size = 9} end
    return {k = "v", size = #t}
  end
  if type(v) ~= "table" then error(("states: a field value of type %s cannot be recorded"):format(type(v)), 0) end
  if v[1] ~= nil then
    if type(v[1]) == "number" then return {k = "a", size = #v} end
    local s = {k = "l", items = {}, size = 0}
    for i, x in ipairs(v) do s.items[i] = shape_of(x); s.size = s.size + s.items[i].size end
    return s
  end
  local s = {k = "r", keys = {}, items = {}, size = 0}
  for key in pairs(v) do s.keys[#s.keys + 1] = key end
  table.sort(s.keys)
  for i, key in ipairs(s.keys) do s.items[i] = shape_of(v[key]); s.size = s.size + s.items[i].size end
  return s
end
M.shape_of = shape_of

-- Append the numbers of v (of shape s) to out from index i; returns the next index.
local function flatten(v, s, out, i)
  local k = s.k
  if k == "n" then out[i] = v; return i + 1 end
  if k == "m" then
    local t = v:totable()
    for r = 1, 3 do for c = 1, 3 do out[i] = t[r][c]; i = i + 1 end end
    return i
  end
  if k == "v" then
    local t = v:totable()
    for j = 1, s.size do out[i] = t[j]; i = i + 1 end
    return i
  end
  if k == "a" then
    for j = 1, s.size do out[i] = v[j]; i = i + 1 end
    return i
  end
  for j, item in ipairs(s.items) do i = flatten(k == "l" and v[j] or v[s.keys[j]], item, out, i) end
  return i
end

-- The value of shape s from nums[i ...]; returns it and the next index.
local function build(s, nums, i)
  local k = s.k
  if k == "n" then return nums[i], i + 1 end
  if k == "m" then
    return core.mat3{{nums[i], nums[i + 1], nums[i + 2]}, {nums[i + 3], nums[i + 4], nums[i + 5]},
                     {nums[i + 6], nums[i + 7], nums[i + 8]}}, i + 9
  end
  if k == "v" then return core.vec3{nums[i], nums[i + 1], nums[i + 2]}, i + 3 end
  if k == "a" then return {table.unpack(nums, i, i + s.size - 1)}, i + s.size end
  local out = {}
  for j, item in ipairs(s.items) do
    local v
    v, i = build(item, nums, i)
    if k == "l" then out[j] = v else out[s.keys[j]] = v end
  end
  return out, i
end

-- Column names of the numbers of shape s, prefixed by base (R11 .. R33, omega1 .., 2_q1 .., y4_q1 ..).
local function names(s, base, out)
  local k = s.k
  if k == "n" then out[#out + 1] = base
  elseif k == "m" then for r = 1, 3 do for c = 1, 3 do out[#out + 1] = base .. r .. c end end
  elseif k == "v" or k == "a" then for j = 1, s.size do out[#out + 1] = base .. j end
  elseif k == "l" then for j, item in ipairs(s.items) do names(item, j .. "_" .. base, out) end
  else for j, item in ipairs(s.items) do names(item, base .. "_" .. s.keys[j], out) end end
  return out
end

--- M.layout(system) -> {fields =, shapes =, size =, columns =, block =}: the layout of its state.
function M.layout(system)
  local lay = {fields = {}, shapes = {}, size = 0, columns = {}, block = M.BLOCK}
  for i, f in ipairs(system.fields) do
    lay.fields[i] = f
    lay.shapes[i] = shape_of(system[f])
    lay.size = lay.size + lay.shapes[i].size
    names(lay.shapes[i], f, lay.columns)
  end
  return lay
end

--- M.sample(lay, it, out) -> out: the numbers of the integrator's current state.
function M.sample(lay, it, out)
  local st, i = it:state(), 1
  for j, f in ipairs(lay.fields) do i = flatten(st[f], lay.shapes[j], out, i) end
  return out
end

--- M.recorder(lay) -> rec: rec:add(it) packs one sample, rec:finish() -> the blocks.
function M.recorder(lay)
  local fmt = "=" .. ("d"):rep(lay.size)
  local nums, cur, blocks = {}, {}, {}
  local rec = {}
  function rec.add(it)
    M.sample(lay, it, nums)
    cur[#cur + 1] = fmt:pack(table.unpack(nums, 1, lay.size))
    if #cur == lay.block then blocks[#blocks + 1] = table.concat(cur); cur = {} end
  end
  function rec.finish()
    local out = {table.unpack(blocks)}
    if #cur > 0 then out[#out + 1] = table.concat(cur) end
    return out
  end
  return rec
end

--- M.numbers(traj, k) -> the numbers of sample k (from the packed blocks, or from the columns of a
--- loaded stream).
function M.numbers(traj, k)
  local lay, blocks = rawget(traj, "state_layout"), rawget(traj, "state_blocks")
  if blocks then
    local b = blocks[(k - 1) // lay.block + 1]
    local off = ((k - 1) % lay.block) * 8 * lay.size
    local nums = {("=" .. ("d"):rep(lay.size)):unpack(b, off + 1)}
    nums[#nums] = nil -- (the next position)
    return nums
  end
  local nums = {}
  for i, c in ipairs(lay.columns) do
    local col = rawget(traj, c)
    if type(col) ~= "table" then error(("traj:state: the column '%s' of the recorded states is missing"):format(c), 0) end
    nums[i] = col[k]
  end
  return nums
end

--- M.state(traj, k) -> {t =, <field> = value, ...}: the state of sample k in the fields' shapes.
function M.state(traj, k)
  local lay = rawget(traj, "state_layout")
  local nums, i = M.numbers(traj, k), 1
  local st = {t = rawget(traj, "t") and traj.t[k] or nil}
  for j, f in ipairs(lay.fields) do st[f], i = build(lay.shapes[j], nums, i) end
  return st
end

--- M.bytes_per_sample(lay): the memory a sample takes in memory (the packed doubles).
function M.bytes_per_sample(lay) return 8 * lay.size end

return M
