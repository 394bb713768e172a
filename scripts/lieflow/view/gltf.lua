-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — traj:write_gltf(path [, opts]): the scene of traj:animate as glTF 2.0 (one .gltf file,
-- its buffer embedded as a base64 data URI), for Blender, the three.js editor and other viewers.
--
-- One node per object (scripts/lieflow/run/scene.lua) with a box mesh (a rigid body's box, or a thin
-- box along +z for a rod, needle or arrow; a child node offsets it so that the animated node's
-- origin is the anchor or pivot), one material per object (its colour), and one animation whose
-- channels give every node's rotation (unit quaternions, glTF's x, y, z, w order, float32, LINEAR)
-- and, for the double pendulum's second link and for bodies that translate, its translation, at the
-- frames of the view (lieflow.view.frames: the same budget and window options). Keyframe times are the simulation times
-- minus the first frame's (glTF times start at 0), in seconds; frames whose float32 time would not
-- increase are dropped. Options: frames, t0, t1, scene (as for traj:animate).
local core = require "lieflow.core"
local options = require "lieflow.options"
local json = require "lieflow.files.json"
local trajectory = require "lieflow.run.trajectory"
local frames = require "lieflow.view.frames"
local animate = require "lieflow.view.animate"

local M = {}

-- a box centred at c with side lengths d: 24 vertices (4 per face, with normals), 36 indices
local function box(d, c)
  local pos, nrm, idx = {}, {}, {}
  local faces = {{1, 2, 3}, {1, 3, 2}, {2, 3, 1}, {2, 1, 3}, {3, 1, 2}, {3, 2, 1}} -- axis, u, v
  for f, ax in ipairs(faces) do
    local a, u, v = ax[1], ax[2], ax[3]
    local s = (f % 2 == 1) and 1 or -1
    local base = #pos // 3
    for _, uv in ipairs{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}} do
      local p = {0, 0, 0}
      p[a] = s * d[a] / 2; p[u] = uv[1] * d[u] / 2; p[v] = uv[2] * d[v] / 2
      for k = 1, 3 do pos[#pos + 1] = p[k] + c[k] end
      local n = {0, 0, 0}
      n[a] = s
      for k = 1, 3 do nrm[#nrm + 1] = n[k] end
    end
    -- counter-clockwise seen from outside: (u x v) along +a for the faces listed with s = 1
    local cross = ({[1] = {2, 3}, [2] = {3, 1}, [3] = {1, 2}})[a]
    local ccw = (cross[1] == u) == (s == 1)
    local tri = ccw and {0, 1, 2, 0, 2, 3} or {0, 2, 1, 0, 3, 2}
    for _, k in ipairs(tri) do idx[#idx + 1] = base + k end
  end
  return pos, nrm, idx
end
M.box = box

-- the mesh of an object: its box and the offset of the box from the animated node's origin
local function object_box(obj)
  if obj.shape == "box" then return obj.dims, {0, 0, 0} end
  local L = obj.length
  local r = obj.shape == "needle" and 0.08 * L or 0.05
  local z = obj.shape == "needle" and 0 or L / 2
  return {r, r, L}, {0, 0, z}
end

local function hex_color(c)
  local r, g, b = c:match("^#(%x%x)(%x%x)(%x%x)$")
  if not r then return {0.5, 0.5, 0.5, 1} end
  return {tonumber(r, 16) / 255, tonumber(g, 16) / 255, tonumber(b, 16) / 255, 1}
end

-- The binary buffer and its views and accessors, built as data is added.
local function new_buffer()
  local B = {parts = {}, len = 0, views = {}, accessors = {}}
  -- add numbers (fmt "f" float32 or "H" uint16) as a view; returns the accessor's index (0-based)
  function B.add(nums, fmt, type_, target, minmax)
    local bytes = {}
    for i = 1, #nums, 256 do
      local m = math.min(256, #nums - i + 1)
      bytes[#bytes + 1] = ("<" .. fmt:rep(m)):pack(table.unpack(nums, i, i + m - 1))
    end
    local s = table.concat(bytes)
    while #s % 4 ~= 0 do s = s .. "\0" end
    B.views[#B.views + 1] = {buffer = 0, byteOffset = B.len, byteLength = #s, target = target}
    B.parts[#B.parts + 1] = s
    B.len = B.len + #s
    local ncomp = ({SCALAR = 1, VEC3 = 3, VEC4 = 4})[type_]
    local acc = {bufferView = #B.views - 1, componentType = fmt == "f" and 5126 or 5123, count = #nums // ncomp,
                 type = type_}
    if minmax then
      local lo, hi = {}, {}
      for c = 1, ncomp do lo[c], hi[c] = math.huge, -math.huge end
      for i = 1, #nums do
        local c = (i - 1) % ncomp + 1
        local v = fmt == "f" and ("<f"):unpack(("<f"):pack(nums[i])) or nums[i]
        if v < lo[c] then lo[c] = v end
        if v > hi[c] then hi[c] = v end
      end
      acc.min, acc.max = lo, hi
    end
    B.accessors[#B.accessors + 1] = acc
    return #B.accessors - 1
  end
  return B
end

-- keep the frames whose float32 time increases strictly (after the shift to start at 0)
local function increasing_frames(t)
  local keep, last = {}, -math.huge
  for f = 1, #t do
    local x = ("<f"):unpack(("<f"):pack(t[f] - t[1]))
    if x > last then keep[#keep + 1] = f; last = x end
  end
  return keep
end

-- The glTF document (a Lua table) of a trajectory's view.
local function document(traj, opts)
  local sc = opts.scene or traj.scene
  local idx = frames.select(traj, opts)
  local fr = frames.compute(traj, sc, idx)
  local keep = increasing_frames(fr.t)
  local B = new_buffer()
  local times = {}
  for i, f in ipairs(keep) do times[i] = fr.t[f] - fr.t[1] end
  local input = B.add(times, "f", "SCALAR", nil, true)
  local doc = {asset = {version = "2.0", generator = "lieflow " .. tostring(core.version)}, scene = 0,
               scenes = {{name = tostring(traj.method), nodes = {}}}, nodes = {}, meshes = {}, materials = {},
               animations = {{name = "motion", channels = {}, samplers = {}}}}
  local anim = doc.animations[1]
  for o, obj in ipairs(sc.objects) do
    local dims, off = object_box(obj)
    local pos, nrm, ind = box(dims, {0, 0, 0})
    local mi = #doc.meshes
    doc.materials[#doc.materials + 1] = {name = "object " .. o, pbrMetallicRoughness = {baseColorFactor = hex_color(obj.color),
                                         metallicFactor = 0, roughnessFactor = 0.8}}
    doc.meshes[#doc.meshes + 1] = {name = obj.shape .. " " .. o, primitives = {{
      attributes = {POSITION = B.add(pos, "f", "VEC3", 34962, true), NORMAL = B.add(nrm, "f", "VEC3", 34962)},
      indices = B.add(ind, "H", "SCALAR", 34963), material = #doc.materials - 1}}}
    local child = #doc.nodes
    doc.nodes[#doc.nodes + 1] = {name = "mesh " .. o, mesh = mi, translation = off}
    local q, p, qs, ps = fr.q[o], fr.p[o], {}, {}
    for _, f in ipairs(keep) do
      local a = 4 * (f - 1)
      qs[#qs + 1], qs[#qs + 2], qs[#qs + 3], qs[#qs + 4] = q[a + 2], q[a + 3], q[a + 4], q[a + 1] -- x, y, z, w
      if p then for k = 1, 3 do ps[#ps + 1] = p[3 * (f - 1) + k] end end
    end
    local node = {name = ("%s %d (%s[%d])"):format(obj.shape, o, obj.field, obj.index), children = {child},
                  rotation = {qs[1], qs[2], qs[3], qs[4]}, translation = p and {ps[1], ps[2], ps[3]} or obj.pos}
    doc.nodes[#doc.nodes + 1] = node
    local ni = #doc.nodes - 1
    table.insert(doc.scenes[1].nodes, ni)
    anim.samplers[#anim.samplers + 1] = {input = input, output = B.add(qs, "f", "VEC4"), interpolation = "LINEAR"}
    anim.channels[#anim.channels + 1] = {sampler = #anim.samplers - 1, target = {node = ni, path = "rotation"}}
    if p then
      anim.samplers[#anim.samplers + 1] = {input = input, output = B.add(ps, "f", "VEC3"), interpolation = "LINEAR"}
      anim.channels[#anim.channels + 1] = {sampler = #anim.samplers - 1, target = {node = ni, path = "translation"}}
    end
  end
  local data = table.concat(B.parts)
  doc.buffers = {{byteLength = #data, uri = "data:application/octet-stream;base64," .. animate.base64(data)}}
  doc.bufferViews, doc.accessors = B.views, B.accessors
  return doc
end
M.document = document

--- M.write(traj, path [, opts]) -> path (traj:write_gltf).
function M.write(traj, path, opts)
  local fn = "traj:write_gltf"
  if type(path) ~= "string" or path == "" or path:find("\0", 1, true) then
    error(("%s: path (a non-empty string) expected, got %s"):format(fn, type(path)), 3)
  end
  opts = opts or {}
  if type(opts) ~= "table" then error(("%s: options table expected, got %s"):format(fn, type(opts)), 3) end
  local ok, err = pcall(function()
    options.check_keys(opts, {"frames", "t0", "t1", "scene"}, fn, 0)
    if type(rawget(traj, "state_layout")) ~= "table" then
      error(("%s: this trajectory has no recorded states: run it with lf.run{..., states = true}"):format(fn), 0)
    end
    local text = json.encode(document(traj, opts))
    local f <close> = core.atomic_open(path, fn)
    f:write(text)
    f:commit()
  end)
  if not ok then error(err, 3) end
  return path
end

--- traj:write_gltf(path [, opts]) -> path: the scene as glTF 2.0 with rotation keyframes, a method of
--- every trajectory (added here, by the view, to the class of scripts/lieflow/run/trajectory.lua).
function trajectory.methods:write_gltf(path, opts)
  trajectory.check(self, "traj:write_gltf")
  return M.write(self, path, opts)
end

return M
