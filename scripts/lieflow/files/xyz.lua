-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — the sites of rigid bodies written for other programs: extended XYZ (ASE, OVITO) and LAMMPS
-- dump files (lf.write_xyz, lf.write_lammps_dump).
--
-- A frame is the state of bodies that translate (`it:state()`, a trajectory's traj:state(k): x and R, of
-- one body or arrays) and the bodies' templates (lf.molecule): site i of body b is at x_b + R_b s_i.
--   M.sites(templates, state) -> {{x, y, z, type, body, site}, ...}
--   M.write_xyz(path, o)        o = {templates =, states = {state, ...} | state = , box = {Lx, Ly, Lz} (optional),
--                               species = {[type] = "O", ...} (default "T<type>"), times = {...}, append = false}
--   M.write_lammps_dump(path, o) the same fields (timesteps = {...} instead of times; box = {xlo, xhi, ylo, yhi,
--                               zlo, zhi} or {Lx, Ly, Lz} from 0): ITEM: ATOMS id mol type xu yu zu
local M = {}

local function fail(fn, fmt, ...) error(fn .. ": " .. fmt:format(...), 0) end

local function blocks(v, nb)
  if nb == 1 and (type(v) == "userdata" or (type(v) == "table" and type(v[1]) == "number")) then return {v} end
  return v
end

--- The sites of the bodies of a state, in body order.
function M.sites(templates, state, fn)
  fn = fn or "lf.sites"
  if type(templates) ~= "table" or #templates < 1 then fail(fn, "'templates' must be an array of lf.molecule, got %s", type(templates)) end
  if type(state) ~= "table" or state.x == nil or state.R == nil then
    fail(fn, "a state with x and R (bodies that translate: it:state()) expected, got %s", type(state))
  end
  local nb = #templates
  local xs, Rs = blocks(state.x, nb), blocks(state.R, nb)
  if type(xs) ~= "table" or type(Rs) ~= "table" then
    fail(fn, "the state's x and R must be vec3 and mat3 (arrays of them for several bodies), got %s and %s", type(xs),
      type(Rs))
  end
  if #xs ~= nb or #Rs ~= nb then fail(fn, "the state has %d centres and %d attitudes for %d templates", #xs, #Rs, nb) end
  local out = {}
  for b, t in ipairs(templates) do
    local x, R = xs[b], Rs[b]
    local okR = pcall(function() return R * t.sites[1].x + x end)
    if not okR then fail(fn, "body %d: x must be a vec3 and R a mat3", b) end
    for i, s in ipairs(t.sites) do
      local r = R * s.x
      out[#out + 1] = {x[1] + r[1], x[2] + r[2], x[3] + r[3], type = s.type, body = b, site = i}
    end
  end
  return out
end

-- an optional array of n numbers (integers when `integer`) named key
local function numbers(o, key, n, integer, fn)
  local v = o[key]
  if v == nil then return end
  if type(v) ~= "table" or (n and #v ~= n) then
    fail(fn, "'%s' must be an array of %s numbers, got %s", key, n and tostring(n) or "the frames'", type(v))
  end
  for i = 1, #v do
    if type(v[i]) ~= "number" or v[i] ~= v[i] or math.abs(v[i]) == math.huge or (integer and math.tointeger(v[i]) == nil) then
      fail(fn, "'%s'[%d] is %s, expected a finite %s", key, i, tostring(v[i]), integer and "integer" or "number")
    end
  end
end

local function frames(o, fn)
  if type(o) ~= "table" then fail(fn, "options {templates =, states = | state =, ...} expected, got %s", type(o)) end
  local states = o.states or (o.state and {o.state})
  if type(states) ~= "table" or #states < 1 then fail(fn, "'states' (an array of states) or 'state' is required") end
  if type(o.templates) ~= "table" then fail(fn, "'templates' must be an array of lf.molecule, got %s", type(o.templates)) end
  for b, t in ipairs(o.templates) do
    if type(t) ~= "table" or type(t.sites) ~= "table" then fail(fn, "templates[%d] is not an lf.molecule", b) end
  end
  numbers(o, "times", #states, false, fn)
  numbers(o, "timesteps", #states, true, fn)
  if o.box ~= nil and not (type(o.box) == "table" and (#o.box == 3 or #o.box == 6)) then
    fail(fn, "'box' must be {Lx, Ly, Lz} or {xlo, xhi, ylo, yhi, zlo, zhi}")
  end
  numbers(o, "box", nil, false, fn)
  return states
end

local function open(path, append, fn)
  if type(path) ~= "string" or path == "" or path:find("\0", 1, true) then fail(fn, "a file path expected, got %s", type(path)) end
  local f, err = io.open(path, append and "a" or "w")
  if not f then fail(fn, "cannot open '%s': %s", path, tostring(err)) end
  return f
end

local function write_all(f, path, chunks, fn)
  local ok, err = f:write(table.concat(chunks))
  local okc, errc = f:close()
  if not ok or not okc then fail(fn, "cannot write '%s': %s", path, tostring(err or errc)) end
end

--- Extended XYZ: per frame the number of sites, a comment line with Lattice (a box: pbc), Properties and
--- Time, then "species x y z" per site (%.17g: exact).
function M.write_xyz(path, o)
  local fn = "lf.write_xyz"
  local states = frames(o, fn)
  if o.species ~= nil then -- {[type] = "O", ...}: names without white space (a species is one XYZ field)
    if type(o.species) ~= "table" then fail(fn, "'species' must be a table {[type] = name, ...}, got %s", type(o.species)) end
    for t, name in pairs(o.species) do
      if type(name) ~= "string" or name == "" or name:find("[%s%c]") then
        fail(fn, "species[%s] must be a name without white space, got %s", tostring(t), type(name) == "string"
          and ("%q"):format(name) or type(name))
      end
    end
  end
  local chunks = {}
  for k, st in ipairs(states) do
    local sites = M.sites(o.templates, st, fn)
    chunks[#chunks + 1] = ("%d\n"):format(#sites)
    local lattice = o.box and ('Lattice="%.17g 0 0 0 %.17g 0 0 0 %.17g" pbc="T T T" '):format(o.box[1], o.box[2], o.box[3]) or ""
    chunks[#chunks + 1] = ("%sProperties=species:S:1:pos:R:3 Time=%.17g\n"):format(lattice, o.times and o.times[k] or k - 1)
    for _, s in ipairs(sites) do
      local sp = o.species and o.species[s.type] or ("T" .. s.type)
      chunks[#chunks + 1] = ("%s %.17g %.17g %.17g\n"):format(sp, s[1], s[2], s[3])
    end
  end
  write_all(open(path, o.append, fn), path, chunks, fn)
  return path
end

--- LAMMPS dump (text): ITEM: TIMESTEP, NUMBER OF ATOMS, BOX BOUNDS pp pp pp, ATOMS id mol type xu yu zu
--- (unwrapped coordinates; the atom ids count the sites body after body, mol is the body).
function M.write_lammps_dump(path, o)
  local fn = "lf.write_lammps_dump"
  local states = frames(o, fn)
  local box = o.box or {0, 1, 0, 1, 0, 1}
  if #box == 3 then box = {0, box[1], 0, box[2], 0, box[3]} end
  local chunks = {}
  for k, st in ipairs(states) do
    local sites = M.sites(o.templates, st, fn)
    chunks[#chunks + 1] = ("ITEM: TIMESTEP\n%d\nITEM: NUMBER OF ATOMS\n%d\nITEM: BOX BOUNDS pp pp pp\n"):format(
      math.tointeger(o.timesteps and o.timesteps[k] or k - 1), #sites)
    chunks[#chunks + 1] = ("%.17g %.17g\n%.17g %.17g\n%.17g %.17g\nITEM: ATOMS id mol type xu yu zu\n"):format(
      box[1], box[2], box[3], box[4], box[5], box[6])
    for id, s in ipairs(sites) do
      chunks[#chunks + 1] = ("%d %d %d %.17g %.17g %.17g\n"):format(id, s.body, s.type, s[1], s[2], s[3])
    end
  end
  write_all(open(path, o.append, fn), path, chunks, fn)
  return path
end

return M
