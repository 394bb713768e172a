-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — what a view of a system draws (traj:animate, lf.animate, traj:write_gltf): a scene
-- description, plain data, made from the system when lf.run records its states (traj.scene).
--
--   {up = {x, y, z} (the vertical the camera keeps up), extent = radius of the scene,
--    objects = {obj, ...}}
--   obj = {shape = "box", dims = {a, b, c}, pos = {x, y, z}, pos_field =, field =, index =, color =}
--           a rigid body (field "R": each body's attitude; a body with a mass at its centre of mass,
--           pos_field = "x", in each frame) or a rotation factor of a Lie ODE (field
--           "y": index = the factor; so3 a mat3, s3 a quaternion {w, x, y, z}); dims are the full
--           side lengths along the body axes, proportional to the inertia ellipsoid's semi-axes
--           1/sqrt(J_i), the largest 1; the body axes are drawn (red x, green y, blue z).
--         | {shape = "rod" | "needle" | "arrow", length =, pos = {x, y, z} | parent = j, field =,
--            index =, color =, bob = true|nil}
--           a unit vector (field "q" of spheres, "y" of an s2 or ts2 factor): a rod from its anchor
--           (pos, or the tip of object j: the double pendulum's second link), a needle centred on
--           its pivot (the dipoles), an arrow from its anchor (other vectors).
-- Built-ins: lf.spheres.pendulum (a rod of length 1 with a bob), double_pendulum (two rods, their
-- lengths in the ratio l1 : l2 = M12 : M22), dipoles (needles of length 0.8 at the pivots
-- ((i-1) mod cols, floor((i-1)/cols), 0), cols = ceil(sqrt(n))). Anything else on spheres: arrows in
-- a row along x. Rigid bodies: boxes in a row along x. A different layout: give opts.scene to
-- traj:animate (a table of this form).
local M = {}

M.PALETTE = {"#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d",
             "#bab0ac"}
local function color(i) return M.PALETTE[(i - 1) % #M.PALETTE + 1] end

-- box side lengths of a body with principal moments J: proportional to 1/sqrt(J_i), the largest 1
local function box_dims(J)
  local a = {1 / math.sqrt(J[1]), 1 / math.sqrt(J[2]), 1 / math.sqrt(J[3])}
  local m = math.max(a[1], a[2], a[3])
  return {a[1] / m, a[2] / m, a[3] / m}
end
M.box_dims = box_dims

-- Bodies made of sites (lf.read_lammps_data registers the templates and the periodic box of its systems):
-- each body is still a box of its inertia (the frames and glTF use it), with `sites` = {{x, y, z, type},
-- ...} in its body frame, `bonds` = {{i, j}, ...} (sites of the body closer than 1.25 times its closest pair)
-- and `site_radius`, which the page draws instead of the box; the scene has `box` = {lo = {..}, L = {..}}
-- (drawn, and the bodies' centres wrapped into it) and `center`.
M.site_systems = setmetatable({}, {__mode = "k"})
function M.register_sites(system, templates, box) M.site_systems[system] = {templates = templates, box = box} end

local function site_shape(t, cache)
  if cache[t] then return cache[t] end
  local sites, dmin = {}, math.huge
  for i, s in ipairs(t.sites) do sites[i] = {s.x[1], s.x[2], s.x[3], s.type} end
  local function dist(a, b) return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2) end
  for i = 1, #sites do for j = i + 1, #sites do dmin = math.min(dmin, dist(sites[i], sites[j])) end end
  local bonds = {}
  for i = 1, #sites do
    for j = i + 1, #sites do if dist(sites[i], sites[j]) <= 1.25 * dmin then bonds[#bonds + 1] = {i, j} end end
  end
  cache[t] = {sites = sites, bonds = bonds, dmin = dmin}
  return cache[t]
end

local function site_bodies(system, reg, objs)
  local cache, dmin = {}, math.huge
  for i, t in ipairs(reg.templates) do
    local sh = site_shape(t, cache)
    objs[i].sites, objs[i].bonds = sh.sites, sh.bonds
    dmin = math.min(dmin, sh.dmin)
  end
  for _, o in ipairs(objs) do o.site_radius = 0.3 * (dmin < math.huge and dmin or 1) end
  local sc = {up = {0, 0, 1}, objects = objs}
  if reg.box then
    local lo, L = reg.box.lo, reg.box.L
    sc.box = {lo = {lo[1], lo[2], lo[3]}, L = {L[1], L[2], L[3]}}
    sc.center = {lo[1] + L[1] / 2, lo[2] + L[2] / 2, lo[3] + L[3] / 2}
    sc.extent = 0.6 * math.max(L[1], L[2], L[3])
  else
    sc.extent = math.max(1.2, system.n)
  end
  sc.site_colors = M.PALETTE
  return sc
end

local function rigid(system)
  local n, J, moving = system.n, system.inertia, system.mass ~= nil
  local objs = {}
  for i = 1, n do
    local Ji = (n == 1 and J or J[i]):totable()
    objs[i] = {shape = "box", dims = box_dims(Ji), pos = {2 * (i - 1) - (n - 1), 0, 0}, field = "R", index = i,
               color = color(i)}
    if moving then objs[i].pos, objs[i].pos_field = {0, 0, 0}, "x" end -- at its centre of mass in each frame
  end
  local reg = moving and M.site_systems[system]
  if reg and #reg.templates == n then return site_bodies(system, reg, objs) end
  return {up = {0, 0, 1}, extent = math.max(1.2, n), objects = objs}
end

local function spheres(system)
  local n, name, axis = system.n, system.potential_name, system.axis:totable()
  local objs = {}
  if name == "pendulum" and n == 1 then
    objs[1] = {shape = "rod", length = 1, pos = {0, 0, 0}, field = "q", index = 1, color = color(1), bob = true}
    return {up = axis, extent = 1.2, objects = objs}
  end
  if name == "double_pendulum" and n == 2 then
    local M12, M22 = system.M[1][2], system.M[2][2]
    local l1 = math.abs(M12 / M22)
    local s = 1 / (l1 + 1)
    objs[1] = {shape = "rod", length = l1 * s, pos = {0, 0, 0}, field = "q", index = 1, color = color(1), bob = true}
    objs[2] = {shape = "rod", length = s, parent = 1, field = "q", index = 2, color = color(2), bob = true}
    return {up = axis, extent = 1.1, objects = objs}
  end
  local cols = name == "dipoles" and math.ceil(math.sqrt(n)) or n
  local rows = math.ceil(n / cols)
  for i = 1, n do
    local c, r = (i - 1) % cols, (i - 1) // cols
    objs[i] = {shape = name == "dipoles" and "needle" or "arrow", length = name == "dipoles" and 0.8 or 1,
               pos = {c - (cols - 1) / 2, r - (rows - 1) / 2, 0}, field = "q", index = i, color = color(i)}
  end
  return {up = name == "dipoles" and {0, 0, 1} or axis, extent = math.max(1.2, 0.6 * math.max(cols, rows) + 0.6),
          objects = objs}
end

local function lie_ode(system)
  local objs = {}
  for j, f in ipairs(system.factors) do
    local x = 2.5 * (#objs)
    if f == "so3" or f == "s3" then
      objs[#objs + 1] = {shape = "box", dims = {1, 0.7, 0.4}, pos = {x, 0, 0}, field = "y", index = j, color = color(j)}
    elseif f == "s2" or f == "ts2" then
      objs[#objs + 1] = {shape = "arrow", length = 1, pos = {x, 0, 0}, field = "y", index = j, color = color(j)}
    end
  end
  for _, o in ipairs(objs) do o.pos[1] = o.pos[1] - 1.25 * (#objs - 1) end
  return {up = {0, 0, 1}, extent = math.max(1.2, 1.25 * #objs), objects = objs}
end

--- M.describe(system) -> the scene of a system (see the header).
function M.describe(system)
  local kind = system.kind
  if kind == "rigidbody" then return rigid(system) end
  if kind == "spheres" then return spheres(system) end
  return lie_ode(system)
end

return M
