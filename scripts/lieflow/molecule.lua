-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — rigid bodies made of point sites (rigid molecules): lf.molecule.
--
--   local water = lf.molecule{sites = {{mass = 15.9994, type = 1, charge = -0.8476, x = {0, 0, 0}},
--                                      {mass = 1.008, type = 2, charge = 0.4238, x = {0.8165, 0.5774, 0}}, ...}}
--   water.mass, water.inertia (principal moments), water.com (in the sites' frame), water.axes (the
--   principal axes as the columns of a rotation, in the sites' frame), water.sites (each site in the
--   body frame: x, mass, type, charge)
--   water:body{x =, R =, v =, omega =} -> a body table for lf.bodies (mass, inertia, x, R, v, omega)
--   water:place(R0) -> the R of a body whose sites sit where the template's sites are rotated by R0
--
-- The body frame is the principal frame of the sites' inertia tensor about their centre of mass, as
-- LAMMPS's fix rigid computes it: mass M = sum m_i, centre c = sum m_i r_i / M, tensor
-- I = sum m_i (|r_i - c|^2 1 - (r_i - c)(r_i - c)^T), its eigenvectors (Jacobi rotations, to round-off)
-- as the columns of the rotation A (right-handed; the moments in decreasing order, as LAMMPS orders them),
-- the body-frame sites s_i = A^T (r_i - c): a body with
-- attitude R puts its site i at x + R s_i. A molecule whose sites lie on a line (one principal moment
-- zero: a diatomic, CO2) is refused: lieflow's rigid bodies need three positive moments.
local core = require "lieflow.core"
local scene = require "lieflow.run.scene"
local lammps = require "lieflow.files.lammps"

local M = {max_bytes = 1 << 28}

local function fail(fmt, ...) error("lf.molecule: " .. fmt:format(...), 3) end
local function raise(fmt, ...) error(fmt:format(...), 0) end -- (the message names its function)

-- the eigenvalues and eigenvectors of a symmetric 3x3 matrix a (a[i][j]) by cyclic Jacobi rotations
local function jacobi3(a)
  local A = {{a[1][1], a[1][2], a[1][3]}, {a[2][1], a[2][2], a[2][3]}, {a[3][1], a[3][2], a[3][3]}}
  local V = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
  for _ = 1, 50 do
    local off = A[1][2] ^ 2 + A[1][3] ^ 2 + A[2][3] ^ 2
    local diag = A[1][1] ^ 2 + A[2][2] ^ 2 + A[3][3] ^ 2
    if off <= 1e-36 * diag or off == 0 then break end
    for p = 1, 2 do
      for q = p + 1, 3 do
        if A[p][q] ~= 0 then
          local theta = (A[q][q] - A[p][p]) / (2 * A[p][q])
          local t = (theta >= 0 and 1 or -1) / (math.abs(theta) + math.sqrt(theta * theta + 1))
          local c = 1 / math.sqrt(t * t + 1)
          local s = t * c
          for k = 1, 3 do -- A <- J^T A J, V <- V J
            local akp, akq = A[k][p], A[k][q]
            A[k][p], A[k][q] = c * akp - s * akq, s * akp + c * akq
          end
          for k = 1, 3 do
            local apk, aqk = A[p][k], A[q][k]
            A[p][k], A[q][k] = c * apk - s * aqk, s * apk + c * aqk
          end
          for k = 1, 3 do
            local vkp, vkq = V[k][p], V[k][q]
            V[k][p], V[k][q] = c * vkp - s * vkq, s * vkp + c * vkq
          end
        end
      end
    end
  end
  return {A[1][1], A[2][2], A[3][3]}, V
end

local function vec3_of(v, what)
  if core.is_vec3 and core.is_vec3(v) then return v end
  if type(v) == "table" and #v == 3 and type(v[1]) == "number" and type(v[2]) == "number" and type(v[3]) == "number" then
    return core.vec3(v[1], v[2], v[3])
  end
  local ok, r = pcall(core.vec3, v)
  if ok then return r end
  fail("%s must be a vec3 or 3 numbers, got %s", what, type(v))
end

local template = {}
template.__index = template

-- the methods' receiver: a template (t:body(...), not t.body(...))
local function check_self(self, who)
  if getmetatable(self) ~= template then
    error(("lf.molecule:%s: call it as a method of an lf.molecule (t:%s(...)), got %s as self"):format(who, who,
      type(self)), 3)
  end
end
template.__name = "lf.molecule"

--- lf.molecule{sites = {{mass =, x =, type =, charge =}, ...}} -> template
function M.molecule(spec)
  if type(spec) ~= "table" then fail("argument must be a table {sites = {...}}, got %s", type(spec)) end
  for k in pairs(spec) do
    if k ~= "sites" and k ~= "name" then fail("unknown field '%s' (fields: sites, name)", tostring(k)) end
  end
  if spec.name ~= nil and type(spec.name) ~= "string" then fail("field 'name' must be a string, got %s", type(spec.name)) end
  local sites = spec.sites
  if type(sites) ~= "table" or #sites < 1 then fail("field 'sites' must be an array of sites, got %s", type(sites)) end
  local mass, c = 0, core.vec3(0, 0, 0)
  local raw = {}
  for i, s in ipairs(sites) do
    if type(s) ~= "table" then fail("site %d must be a table {mass =, x =, type =, charge =}, got %s", i, type(s)) end
    for k in pairs(s) do
      if k ~= "mass" and k ~= "x" and k ~= "type" and k ~= "charge" and k ~= "name" then
        fail("site %d: unknown field '%s' (fields: mass, x, type, charge, name)", i, tostring(k))
      end
    end
    local m = s.mass
    if type(m) ~= "number" or not (m > 0) or m == math.huge then fail("site %d: mass = %s, expected a finite positive number", i, tostring(m)) end
    local x = vec3_of(s.x, ("site %d: field 'x'"):format(i))
    for k = 1, 3 do if x[k] ~= x[k] or math.abs(x[k]) == math.huge then fail("site %d: x has component %d = %s, expected a finite number", i, k, tostring(x[k])) end end
    local q = s.charge or 0
    if type(q) ~= "number" or q ~= q or math.abs(q) == math.huge then fail("site %d: charge = %s, expected a finite number", i, tostring(q)) end
    local ty = s.type or 1
    if math.type(ty) ~= "integer" or ty < 1 then fail("site %d: type = %s, expected an integer >= 1", i, tostring(ty)) end
    raw[i] = {mass = m, x = x, type = ty, charge = q, name = s.name}
    mass = mass + m
    c = c + m * x
  end
  c = (1 / mass) * c
  local I = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}
  local extent = 0
  for _, s in ipairs(raw) do
    local d = s.x - c
    local d2 = d:dot(d)
    extent = math.max(extent, d2)
    for a = 1, 3 do
      for b = 1, 3 do I[a][b] = I[a][b] + s.mass * ((a == b and d2 or 0) - d[a] * d[b]) end
    end
  end
  local moments, V = jacobi3(I)
  -- order the axes by decreasing moment, right-handed (as LAMMPS's jacobi3: its fix rigid's body frame, so
  -- that NO_SQUISH's rotations about axes 3, 2, 1, 2, 3 are LAMMPS's)
  local order = {1, 2, 3}
  table.sort(order, function(p, q) return moments[p] > moments[q] end)
  local cols = {}
  for k = 1, 3 do cols[k] = core.vec3(V[1][order[k]], V[2][order[k]], V[3][order[k]]) end
  if cols[1]:cross(cols[2]):dot(cols[3]) < 0 then cols[3] = -1 * cols[3] end
  local J = {moments[order[1]], moments[order[2]], moments[order[3]]}
  local scale = mass * extent
  if #raw == 1 or J[3] <= 1e-12 * J[1] or scale == 0 then
    fail("the %d site%s lie on a line (principal moments %g, %g, %g): a linear molecule has a zero moment, and lieflow's rigid bodies need three positive ones",
      #raw, #raw == 1 and "" or "s", J[1], J[2], J[3])
  end
  local A = core.mat3{{cols[1][1], cols[2][1], cols[3][1]}, {cols[1][2], cols[2][2], cols[3][2]},
                      {cols[1][3], cols[2][3], cols[3][3]}}
  local body_sites = {}
  for i, s in ipairs(raw) do
    body_sites[i] = {x = A:T() * (s.x - c), mass = s.mass, type = s.type, charge = s.charge, name = s.name}
  end
  return setmetatable({name = spec.name, mass = mass, com = c, inertia = J, axes = A, sites = body_sites}, template)
end

--- template:body{x =, R =, v =, omega =} -> {mass =, inertia =, x =, R =, v =, omega =} for lf.bodies;
--- R defaults to the template's own axes (the sites where the template put them, the centre at x).
function template:body(o)
  check_self(self, "body")
  o = o or {}
  if type(o) ~= "table" then error(("lf.molecule:body: a table {x =, R =, v =, omega =} expected, got %s"):format(type(o)), 2) end
  for k in pairs(o) do
    if k ~= "x" and k ~= "R" and k ~= "v" and k ~= "omega" then
      error(("lf.molecule:body: unknown field '%s' (fields: x, R, v, omega)"):format(tostring(k)), 2)
    end
  end
  for _, k in ipairs{"x", "v", "omega"} do
    if o[k] ~= nil then
      local okv, v = pcall(vec3_of, o[k], k)
      if not okv or not (math.abs(v[1]) < math.huge and math.abs(v[2]) < math.huge and math.abs(v[3]) < math.huge) then
        error(("lf.molecule:body: field '%s' must be a finite vec3"):format(k), 2)
      end
    end
  end
  if o.R ~= nil and not (pcall(core.so3.is_rotation, o.R) and core.so3.is_rotation(o.R)) then
    error("lf.molecule:body: field 'R' must be a rotation (mat3)", 2)
  end
  return {mass = self.mass, inertia = {self.inertia[1], self.inertia[2], self.inertia[3]}, x = o.x or self.com,
          R = o.R or self.axes, v = o.v or {0, 0, 0}, omega = o.omega or {0, 0, 0}}
end

--- template:place(R0) -> R: the attitude that puts the sites at R0 (r_i - c) around the centre
function template:place(R0)
  check_self(self, "place")
  if not (core.so3.is_rotation and pcall(core.so3.is_rotation, R0) and core.so3.is_rotation(R0)) then
    error("lf.molecule:place: a rotation (mat3) expected", 2)
  end
  return R0 * self.axes
end

--- The state of a rigid body from the positions r and velocities u of its sites (those of the
--- template, in its order): x (the centre of mass), R, v (= sum m u / M) and the body angular velocity
--- omega = J^-1 R^T L, L = sum m (r - x) x u (LAMMPS's fix rigid: the rigid motion that carries the
--- sites' momentum and angular momentum). R is fitted to the sites (the rotation taking the template's
--- body-frame sites to r - x, Kabsch's method through the polar decomposition of sum m (r - x) s^T).
function template:state_of(r, u)
  check_self(self, "state_of")
  local n = #self.sites
  if type(r) ~= "table" or (u ~= nil and type(u) ~= "table") then
    error(("lf.molecule:state_of: arrays of positions (and velocities) expected, got %s"):format(type(r)), 2)
  end
  if rawlen(r) ~= n or (u and rawlen(u) ~= n) then -- (raw: a table's __len may lie)
    error(("lf.molecule:state_of: %d positions and %d velocities for %d sites"):format(rawlen(r), u and rawlen(u) or 0,
      n), 2)
  end
  local x, v = core.vec3(0, 0, 0), core.vec3(0, 0, 0)
  for i, s in ipairs(self.sites) do
    x = x + s.mass * vec3_of(rawget(r, i), "position " .. i)
    if u then v = v + s.mass * vec3_of(rawget(u, i), "velocity " .. i) end
  end
  x, v = (1 / self.mass) * x, (1 / self.mass) * v
  local B = core.mat3{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}
  local L = core.vec3(0, 0, 0)
  for i, s in ipairs(self.sites) do
    local d = vec3_of(rawget(r, i)) - x
    local b = s.x
    B = B + s.mass * core.mat3{{d[1] * b[1], d[1] * b[2], d[1] * b[3]}, {d[2] * b[1], d[2] * b[2], d[2] * b[3]},
                               {d[3] * b[1], d[3] * b[2], d[3] * b[3]}}
    if u then L = L + s.mass * d:cross(vec3_of(rawget(u, i)) - v) end
  end
  local R = core.so3.project(B)
  local Lb = R:T() * L
  local omega = core.vec3(Lb[1] / self.inertia[1], Lb[2] / self.inertia[2], Lb[3] / self.inertia[3])
  return {x = x, R = R, v = v, omega = omega}
end

function template:__tostring()
  check_self(self, "__tostring")
  return ("lf.molecule(%s%d sites, mass %g, inertia (%g, %g, %g))"):format(self.name and (tostring(self.name) .. ", ") or "",
    #self.sites, self.mass, self.inertia[1], self.inertia[2], self.inertia[3])
end

-- ------------------------------------------------------------------ bodies of sites, and LAMMPS's files
--- M.sites_potential(templates, opts) -> an lf.potential of the sites of bodies with the templates
--- templates[1..nb] (lf.molecule): Lennard-Jones between the site types (opts.lj = {[type] = {epsilon,
--- sigma}}, Lorentz-Berthelot mixing, or opts.lj_pairs = {[i] = {[j] = {epsilon, sigma}}}), damped
--- shifted force Coulomb between charges (opts.coulomb = {alpha =, k =}), opts.cutoff, opts.shift
--- (LJ shifted to 0 at the cutoff), opts.box = {Lx, Ly, Lz}, opts.skin.
-- a {epsilon, sigma} pair of the option `what`: finite, epsilon >= 0, sigma > 0
local function lj_pair(v, what)
  if type(v) ~= "table" or type(v[1]) ~= "number" or type(v[2]) ~= "number" then
    fail("%s must be {epsilon, sigma} (two numbers), got %s", what, type(v) == "table" and "a table of other values" or type(v))
  end
  if not (v[1] >= 0 and v[1] < math.huge and v[2] > 0 and v[2] < math.huge) then
    fail("%s = {%s, %s}: expected epsilon >= 0 and sigma > 0, finite", what, tostring(v[1]), tostring(v[2]))
  end
  return v[1], v[2]
end

--- M.site_pair_functions(site_pair, ntypes, used, base, opts, who) -> {[a ntypes + b + 1] = f}: the Lua
--- function site_pair(r, si, sj [, p]) -> u compiled (lf.compile, with its derivative in r from the same
--- graph) once per pair of the site types a <= b present (0-based; used[a] true), the charges as inputs:
--- si = {type = a + base, charge = qa}. opts.params (p), opts.compile ("auto" | "native" | "tape"),
--- opts.cutoff (the trace point is r = cutoff/2). Errors name who and the pair of types.
function M.site_pair_functions(site_pair, ntypes, used, base, opts, who)
  if type(site_pair) ~= "function" then raise("%s: site_pair must be a function (r, si, sj [, p]) -> u, got %s", who,
    type(site_pair)) end
  if ntypes > 32 then raise("%s: site_pair takes at most 32 site types, got %d", who, ntypes) end
  if opts.params ~= nil and type(opts.params) ~= "table" then
    raise("%s: params must be a table, got %s", who, type(opts.params))
  end
  local backend = opts.compile
  if backend ~= nil and backend ~= "auto" and backend ~= "native" and backend ~= "tape" then
    raise("%s: compile must be \"auto\", \"native\" or \"tape\" (site_pair is always compiled), got %s", who,
      tostring(backend))
  end
  local rc = type(opts.cutoff) == "number" and opts.cutoff > 0 and opts.cutoff < math.huge and opts.cutoff or 1
  local fns = {}
  for a = 0, ntypes - 1 do
    for b = a, ntypes - 1 do
      if used[a] and used[b] then
        local ta, tb = a + base, b + base
        local ok, f = pcall(core.compile, function(r, qa, qb, p)
          return site_pair(r, {type = ta, charge = qa}, {type = tb, charge = qb}, p)
        end, {args = {"number", "number", "number"}, params = opts.params, backend = backend, at = {0.5 * rc, 1, 1}})
        if not ok then
          raise("%s: site_pair of the site types %d and %d: %s", who, ta, tb, tostring(f):gsub("^lf%.compile: ", ""))
        end
        fns[a * ntypes + b + 1] = f
      end
    end
  end
  return fns
end

--- M.potential_sites(spec, c_sites) -> lf.potential.sites{...} (c_sites: the C constructor), with
--- spec.site_pair (and params, compile) compiled by M.site_pair_functions first.
local SITE_PAIR_KEYS = {site_pair = true, params = true, compile = true}
function M.potential_sites(spec, c_sites)
  if type(spec) ~= "table" or spec.site_pair == nil then
    if type(spec) == "table" and (spec.params ~= nil or spec.compile ~= nil) then
      error("lf.potential.sites: params and compile go with a site_pair function", 2)
    end
    return c_sites(spec)
  end
  local ok, res = pcall(function()
    local c, used, ntypes = {}, {}, 1
    for k, v in pairs(spec) do if not SITE_PAIR_KEYS[k] then c[k] = v end end
    if spec.ntypes ~= nil then
      if math.type(spec.ntypes) ~= "integer" or spec.ntypes < 1 then
        raise("lf.potential.sites: ntypes = %s, expected an integer >= 1", tostring(spec.ntypes))
      end
      ntypes = spec.ntypes
    end
    if type(spec.type) == "table" then
      for _, t in ipairs(spec.type) do if math.type(t) == "integer" and t >= 0 and t < ntypes then used[t] = true end end
    else
      used[0] = true
    end
    c.pair_functions = M.site_pair_functions(spec.site_pair, ntypes, used, 0, spec, "lf.potential.sites")
    return c_sites(c)
  end)
  if not ok then error(tostring(res):gsub("^[^:]*lieflow/[%w_/]+%.lua:%d+: ", ""), 2) end
  return res
end

--- M.potentials(c) -> lf.potential: the C constructors of table c, with sites taking a site_pair function
function M.potentials(c)
  local t = {}
  for k, v in pairs(c) do t[k] = v end
  t.sites = function(spec) return M.potential_sites(spec, c.sites) end
  return t
end

function M.sites_potential(templates, opts)
  local sites = core.potential and core.potential.sites
  local nsites, s, ty, q, ntypes, charged = {}, {}, {}, {}, 0, false
  for _, k in ipairs{"lj", "lj_pairs", "coulomb"} do
    if opts[k] ~= nil and type(opts[k]) ~= "table" then fail("option '%s' must be a table, got %s", k, type(opts[k])) end
  end
  for b, t in ipairs(templates) do
    nsites[b] = #t.sites
    for _, site in ipairs(t.sites) do
      s[#s + 1], s[#s + 2], s[#s + 3] = site.x[1], site.x[2], site.x[3]
      ty[#ty + 1] = site.type - 1
      q[#q + 1] = site.charge
      charged = charged or site.charge ~= 0
      ntypes = math.max(ntypes, site.type)
    end
  end
  if ntypes > 1024 then fail("atom type %d: at most 1024 types", ntypes) end -- the LJ tables grow as its square
  local eps, sig = {}, {}
  for i = 1, ntypes do
    for j = 1, ntypes do
      local e, g = 0, 1
      local lp = opts.lj_pairs
      local pij = lp and (type(lp[i]) == "table" and lp[i][j] or type(lp[j]) == "table" and lp[j][i])
      if pij then e, g = lj_pair(pij, ("lj_pairs[%d][%d]"):format(i, j))
      elseif opts.lj and opts.lj[i] and opts.lj[j] then
        local ei, si = lj_pair(opts.lj[i], ("lj[%d]"):format(i))
        local ej, sj = lj_pair(opts.lj[j], ("lj[%d]"):format(j))
        e, g = math.sqrt(ei * ej), 0.5 * (si + sj)
      end
      eps[#eps + 1], sig[#sig + 1] = e, g
    end
  end
  local pair_functions
  if opts.site_pair ~= nil then
    local used = {}
    for _, t in ipairs(ty) do used[t] = true end
    pair_functions = M.site_pair_functions(opts.site_pair, ntypes, used, 1, opts, "site_pair")
  end
  return sites{nsites = nsites, s = s, type = ty, charge = charged and q or nil, ntypes = ntypes,
                              lj_epsilon = eps, lj_sigma = sig, cutoff = opts.cutoff, lj_shift = opts.shift and 1 or 0,
                              coulomb_alpha = opts.coulomb and opts.coulomb.alpha or 0,
                              coulomb_k = opts.coulomb and opts.coulomb.k or 0, box = opts.box, skin = opts.skin or 0,
                              pair_functions = pair_functions, type_base = pair_functions and 1 or nil}
end

--- M.read_lammps_data(path, opts, bodies_fn) -> system, info: the bodies of a LAMMPS data file. opts.bodies =
--- "molecule" (by molecule ID) or function(id) -> body index (1-based); the atoms of a body are unwrapped
--- with their image flags; each body's template (lf.molecule of its atoms), state (the centre of mass,
--- the principal axes fitted to the atoms, v_cm = sum m v / M, L = sum m (r - x_cm) x v as LAMMPS's fix
--- rigid computes them); Lennard-Jones from opts.lj or the file's Pair Coeffs (not with opts.lj_pairs or
--- opts.site_pair, a Lua site-site pair function), the box from the file
--- (opts.box = false: none). info = {data = the parsed file, templates, atoms = atom ids per body}.
local READ_KEYS = {bodies = true, cutoff = true, skin = true, shift = true, lj = true, lj_pairs = true, coulomb = true,
                   box = true, kB = true, site_pair = true, params = true, compile = true}

function M.read_lammps_data(path, opts, bodies_fn)
  if type(path) ~= "string" then error(("lf.read_lammps_data: path (string) expected, got %s"):format(type(path)), 2) end
  opts = opts or {}
  if type(opts) ~= "table" then error(("lf.read_lammps_data: options (a table) expected, got %s"):format(type(opts)), 2) end
  for k in pairs(opts) do
    if not READ_KEYS[k] then
      error(("lf.read_lammps_data: unknown option '%s' (options: bodies, cutoff, skin, shift, lj, lj_pairs, coulomb, site_pair, params, compile, box, kB)")
        :format(tostring(k)), 2)
    end
  end
  if opts.kB ~= nil and not (type(opts.kB) == "number" and opts.kB > 0 and opts.kB < math.huge) then
    error(("lf.read_lammps_data: option 'kB' must be a positive number, got %s"):format(tostring(opts.kB)), 2)
  end
  local ok, sys, info = pcall(M.build_lammps, path, opts, bodies_fn)
  if not ok then -- every error names the reader, never a line of this file
    local msg = tostring(sys):gsub("^[^:]*lieflow/[%w_/]+%.lua:%d+: ", "")
    if not msg:find("^lf%.read_lammps_data") then msg = "lf.read_lammps_data: " .. msg end
    error(msg, 2)
  end
  return sys, info
end

function M.build_lammps(path, opts, bodies_fn)
  local f, err = io.open(path, "r")
  if not f then error(("lf.read_lammps_data: cannot open '%s': %s"):format(path, tostring(err)), 2) end
  -- at most M.max_bytes: a device or a huge file (/dev/zero) is refused instead of read forever
  local text, rerr = f:read(M.max_bytes + 1)
  f:close()
  if text == nil and rerr then error(("lf.read_lammps_data: cannot read '%s': %s"):format(path, tostring(rerr)), 2) end
  text = text or ""
  if #text > M.max_bytes then
    error(("lf.read_lammps_data: '%s' is larger than %d bytes: not a data file lieflow reads"):format(path, M.max_bytes), 2)
  end
  local okp, d = pcall(lammps.parse, text, path)
  if not okp then error(d, 2) end
  local by = opts.bodies or "molecule"
  local index = {}
  local groups, order = {}, {}
  for _, a in ipairs(d.atoms) do
    local b
    if by == "molecule" then
      if not a.mol then error(("lf.read_lammps_data: %s: atom style %s has no molecule IDs: give bodies = function(id) ... end"):format(path, d.style), 2) end
      b = a.mol
    elseif type(by) == "function" then
      b = by(a.id)
      if math.type(b) ~= "integer" or b < 1 then error(("lf.read_lammps_data: bodies(%d) returned %s, expected a body index >= 1"):format(a.id, tostring(b)), 2) end
    else
      error(("lf.read_lammps_data: opts.bodies must be \"molecule\" or a function(id) -> body, got %s"):format(type(by)), 2)
    end
    if not groups[b] then groups[b] = {}; order[#order + 1] = b end
    groups[b][#groups[b] + 1] = a
  end
  table.sort(order)
  local L = {d.box[2] - d.box[1], d.box[4] - d.box[3], d.box[6] - d.box[5]}
  local templates, bodies, ids = {}, {}, {}
  for k, b in ipairs(order) do
    local atoms = groups[b]
    table.sort(atoms, function(p, q) return p.id < q.id end)
    local sites, r, u = {}, {}, {}
    ids[k] = {}
    for i, a in ipairs(atoms) do
      local x = {a.x[1] + a.image[1] * L[1], a.x[2] + a.image[2] * L[2], a.x[3] + a.image[3] * L[3]}
      sites[i] = {mass = d.masses[a.type], type = a.type, charge = a.q or 0, x = x}
      r[i], u[i] = x, d.velocities[a.id] or {0, 0, 0}
      ids[k][i] = a.id
    end
    local ok, t = pcall(M.molecule, {sites = sites})
    if not ok then error(("lf.read_lammps_data: body %d (atoms %d ..): %s"):format(b, atoms[1].id, tostring(t):gsub("^lf%.molecule: ", "")), 2) end
    templates[k] = t
    local st = t:state_of(r, u)
    -- the template's own frame is the body frame: its sites at R s relative to the centre
    bodies[k] = {mass = t.mass, inertia = t.inertia, x = st.x, v = st.v, R = st.R, omega = st.omega}
  end
  local lj = opts.lj
  -- the file's Pair Coeffs unless the pair interaction is given (opts.lj, lj_pairs, or a site_pair of its own)
  if not lj and not opts.lj_pairs and opts.site_pair == nil and next(d.pair_coeffs) then lj = d.pair_coeffs end
  local pot = M.sites_potential(templates, {lj = lj, lj_pairs = opts.lj_pairs, cutoff = opts.cutoff, shift = opts.shift,
                                            coulomb = opts.coulomb, box = opts.box ~= false and (opts.box or L) or nil,
                                            skin = opts.skin, site_pair = opts.site_pair, params = opts.params,
                                            compile = opts.compile})
  bodies.potential = pot
  local sys = bodies_fn(bodies)
  local box = opts.box ~= false and (opts.box or L) or nil
  scene.register_sites(sys, templates, box and {lo = {d.box[1], d.box[3], d.box[5]}, L = box} or nil) -- (the 3-D view)
  return sys, {data = d, templates = templates, atoms = ids, box = L, potential = pot,
               observe = M.thermo_observers(pot, #templates, box, opts.kB)}
end

--- M.thermo_observers(potential, nb, box, kB) -> {name = function(it)} for lf.run's observe: the
--- potential energy of the sites, the temperature 2 K / (kB f) with f = 6 nb - 3 degrees of freedom in a
--- periodic box (the total momentum is fixed) and 6 nb - 6 in open space (the angular momentum too), the
--- molecular virial W = sum over pairs of bodies r_IJ . F_IJ and (in a box of volume V) the pressure
--- P = (2/3 K_trans + W/3) / V, in the model's energy / volume units (kB default 1).
function M.thermo_observers(pot, nb, box, kB)
  kB = kB or 1
  local f = box and 6 * nb - 3 or 6 * nb - 6
  local V = box and box[1] * box[2] * box[3]
  local function stats(it)
    it:energy() -- evaluates the sites' potential at the state
    return core.potential.sites_stats(pot)
  end
  local obs = {
    potential_energy = function(it) return stats(it).energy end,
    virial = function(it) return stats(it).virial end,
    temperature = function(it) return 2 * (it.kinetic_translation + it.kinetic_rotation) / (kB * f) end,
  }
  if V then
    obs.pressure = function(it) return (2 / 3 * it.kinetic_translation + stats(it).virial / 3) / V end
  end
  return obs
end

return M
