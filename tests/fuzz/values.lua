-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow Lua API fuzzer — the hostile values (tests/fuzz/fuzz.lua).
--
-- Every value the fuzzer passes is made by one of the constructors below, called by name with
-- plain arguments (numbers, strings, booleans, pool references). The fuzzer logs each call as the
-- Lua expression that rebuilds its arguments (V.deep(200), V.liar_len({1, 2, 3}, 2^61), ...), so
-- a log is a script that replays the run: `build/lieflow <log>` (see fuzz.lua, "Replaying").
local V = {}

V.sandbox = os.getenv("LIEFLOW_FUZZ_DIR") or "."

-- ------------------------------------------------------------------ numbers
V.numbers = {
  "0", "-0.0", "1", "-1", "2", "3", "0.5", "0.125", "1e-3", "100", "1e4",
  "0/0", "1/0", "-1/0", "5e-324", "-5e-324", "2.2250738585072014e-308", "1e-310", "1e-160", "1e154",
  "1e200", "1e308", "-1e308", "1.7976931348623157e308", "math.maxinteger", "math.mininteger",
  "2^53", "2^53 + 1", "2^63", "(1 << 61) + 1", "-(1 << 31)", "1 << 31", "math.pi", "-math.pi",
  "1e-9", "3.14159265358979",
}
V.sane_numbers = {"0", "1", "0.5", "0.125", "0.25", "2", "3", "1e-3", "10", "0.3", "0.7227", "-1", "4"}

-- ------------------------------------------------------------------ strings
V.strings = {
  '""', '"%s%s%s%n"', '"%d%99999999d"', '"a\\0b"', '"\\255\\254\\0"', '("x"):rep(100000)',
  '"vlv"', '"eln"', '"rkmk4"', '"nonexistent_method"', '"energy"', '"energy_error"', '"t"',
  '"__index"', '"__gc"', '"R"', '"omega"', '"x"', '"-x.png"', '"$x.png"', '"x.svg"', '"x.csv"',
  '"/dev/full"', '"/dev/null"', '"/proc/nonexistent/f.csv"',
  'V.sandbox .. "/f.json"', 'V.sandbox .. "/sub/dir/p.png"', 'V.sandbox .. "/a\\0b.csv"', 'V.sandbox',
  '"top left"', '"nan"', '"1e400"', '"  3  "', '"\\n\\r\\t"', '"\'\\"`$(echo x)`"',
}
-- strings that must never be used as a program to run (lf.plot{gnuplot=}, gnuplot_available)
V.safe_exe = {'"/nonexistent/gnuplot"', '"gnuplot"', 'V.sandbox .. "/not-a-program"', '"/dev/null"'}

-- ------------------------------------------------------------------ tables
function V.t(...) return {...} end
function V.nested(n) -- {{...}} n levels deep
  local t = {}
  for _ = 1, n do t = {t} end
  return t
end
function V.deep(n) -- n levels, with numbers along the way
  local t = {1, 2, 3}
  for i = 1, n do t = {t, i, {x = t}} end
  return t
end
function V.cyclic()
  local t = {1, 2, 3}
  t[4] = t
  t.self = t
  return t
end
function V.vec(a, b, c) return {a, b, c} end
-- t with t[k] = v (a checkpoint with one field changed: V.with(it:checkpoint(), "noise_step", -1))
function V.with(t, k, v)
  if type(t) == "table" then t[k] = v end
  return t
end
function V.rows(a, b, c) return {a, b, c} end
function V.mat9(...) return {...} end
function V.holes() return {1, nil, 3, [5] = 5, [2 ^ 40] = 1} end
function V.big_array(n, x)
  local t = {}
  for i = 1, n do t[i] = x or i end
  return t
end
function V.liar_len(t, n) return setmetatable(t, {__len = function() return n end}) end
function V.len_error(t) return setmetatable(t, {__len = function() error("fuzz: __len raised") end}) end
function V.len_yield(t) return setmetatable(t, {__len = function() coroutine.yield("fuzz: __len yielded") end}) end
function V.len_string(t) return setmetatable(t, {__len = function() return "7" end}) end
function V.index_fn(t, kind)
  return setmetatable(t, {__index = function(_, k)
    if kind == "error" then error("fuzz: __index raised") end
    if kind == "yield" then coroutine.yield("fuzz: __index yielded") end
    if kind == "gc" then collectgarbage() return 1 end
    if kind == "nan" then return 0 / 0 end
    if kind == "self" then return t end
    return k
  end})
end
-- a table whose __index finalizes an object by hand (closes an integrator while the library reads
-- the table, e.g. it:set_state(V.index_finalize({}, it)))
function V.index_finalize(t, obj)
  return setmetatable(t, {__index = function(_, k)
    local ok, gc = pcall(function() return getmetatable(obj).__gc end)
    if ok and type(gc) == "function" then pcall(gc, obj) end
    return nil
  end})
end
function V.newindex_error(t) return setmetatable(t, {__newindex = function() error("fuzz: __newindex raised") end}) end
function V.eq_liar(t) return setmetatable(t, {__eq = function() return true end, __lt = function() return true end,
                                             __le = function() error("fuzz: __le raised") end}) end
function V.tostring_error(t) return setmetatable(t, {__tostring = function() error("fuzz: __tostring raised") end}) end
function V.tostring_nonstring(t) return setmetatable(t, {__tostring = function() return {} end}) end
function V.name_nonstring(t) return setmetatable(t, {__name = 42}) end
function V.protected(t) return setmetatable(t, {__metatable = "locked", __index = function() return 0 end}) end
-- a finalizer that misbehaves: raises, collects, or resurrects the object into a global
function V.gc_bomb(kind)
  return setmetatable({}, {__gc = function(o)
    if kind == "error" then error("fuzz: __gc raised") end
    if kind == "collect" then collectgarbage() end
    if kind == "resurrect" then _G.__fuzz_resurrected = o end
  end})
end
function V.closeable(kind)
  return setmetatable({}, {__close = function() if kind == "error" then error("fuzz: __close raised") end end})
end
-- a table that looks like a dual number to the binding (metatable with __lf_dual)
function V.fake_dual() return setmetatable({1, 2, 3}, {__lf_dual = true, __index = function() return 0 end}) end

-- ------------------------------------------------------------------ functions (callbacks)
-- kind: what the callback does; arg: a number or an object it uses
function V.fn(kind, arg)
  local depth = 0
  return function(...)
    if kind == "const" then return arg end
    if kind == "nan" then return 0 / 0 end
    if kind == "inf" then return 1 / 0 end
    if kind == "nil" then return nil end
    if kind == "string" then return "1" end
    if kind == "table" then return {1, 2, 3} end
    if kind == "vec3" then return lf.vec3{1e-3, 0, 0} end
    if kind == "mat3" then return lf.so3.I end
    if kind == "error" then error("fuzz: callback raised") end
    if kind == "error_table" then error({code = 1}) end
    if kind == "error_long" then error(("fuzz callback raised a very long message "):rep(40)) end
    if kind == "yield" then return coroutine.yield("fuzz: callback yielded") end
    if kind == "gc" then collectgarbage(); return 0 end
    if kind == "busy" then local x = 0 for i = 1, 1e12 do x = x + i end return x end
    if kind == "recurse" and type(arg) == "function" then
      -- call an API function from inside the callback, with the callback's own arguments
      depth = depth + 1
      if depth <= 3 then pcall(arg, ...) end
      depth = depth - 1
      return 0
    end
    if kind == "reenter" and arg ~= nil then
      -- step the object that may be calling us (an integrator stepping from its own potential)
      local ok, step = pcall(function() return arg.step end)
      if ok and type(step) == "function" then pcall(step, arg) end
      return 0
    end
    if kind == "finalize" and arg ~= nil then
      -- run the object's finalizer by hand from inside a callback (a potential closing its system)
      local ok, gc = pcall(function() return getmetatable(arg).__gc end)
      if ok and type(gc) == "function" then pcall(gc, arg) end
      return 0
    end
    if kind == "energy" and arg then local ok, e = pcall(function() return arg:energy() end) return ok and e or 0 end
    return 0
  end
end

-- ------------------------------------------------------------------ rigid molecules (issue 32)
-- The flat spec of lf.potential.sites for bodies with the templates ts (lf.molecule), as lf.read_lammps_data
-- builds it (LJ by type with Lorentz-Berthelot mixing from o.lj = {[type] = {eps, sigma}}, charges when
-- o.k is given), then damaged as `damage` names (nil: none): a bad count, length, value or type table.
function V.sites_spec(ts, o, damage)
  o = o or {}
  local nsites, s, ty, q, ntypes = {}, {}, {}, {}, 0
  for b, t in ipairs(ts) do
    nsites[b] = #t.sites
    for _, site in ipairs(t.sites) do
      s[#s + 1], s[#s + 2], s[#s + 3] = site.x[1], site.x[2], site.x[3]
      ty[#ty + 1], q[#q + 1] = site.type - 1, site.charge
      ntypes = math.max(ntypes, site.type)
    end
  end
  local lj = o.lj or {{1, 1}, {0.5, 0.8}, {0.2, 1.2}}
  local eps, sig = {}, {}
  for i = 1, ntypes do
    for j = 1, ntypes do
      local a, b = lj[i] or {0, 1}, lj[j] or {0, 1}
      eps[#eps + 1], sig[#sig + 1] = math.sqrt(a[1] * b[1]), 0.5 * (a[2] + b[2])
    end
  end
  local spec = {nsites = nsites, s = s, type = ty, ntypes = ntypes, lj_epsilon = eps, lj_sigma = sig, cutoff = o.cutoff or 2.5,
                lj_shift = o.shift, box = o.box, skin = o.skin}
  if o.k then spec.charge, spec.coulomb_k, spec.coulomb_alpha = q, o.k, o.alpha end
  local n = #ty
  local D = {
    cutoff_half_box = function() spec.box = spec.box or {8, 8, 8}; spec.cutoff = spec.box[2] / 2 * (1 + 1e-12) end,
    cutoff_half_box_exact = function() spec.box = spec.box or {8, 8, 8}; spec.cutoff = spec.box[1] / 2 end,
    box_zero = function() spec.box = {0, 8, 8} end, box_inf = function() spec.box = {8, 1 / 0, 8} end,
    box_nan = function() spec.box = {8, 8, 0 / 0} end, box_neg = function() spec.box = {-8, 8, 8} end,
    box_short = function() spec.box = {8, 8} end, box_long = function() spec.box = {8, 8, 8, 8} end,
    box_huge = function() spec.box = {1e308, 1e308, 1e308} end, box_tiny = function() spec.box = {5e-324, 8, 8}; spec.cutoff = 1e-320 end,
    box_string = function() spec.box = "8" end, box_strings = function() spec.box = {"8", 8, 8} end,
    s_short = function() s[#s] = nil end, s_long = function() s[#s + 1] = 0 end, s_nan = function() s[2] = 0 / 0 end,
    s_inf = function() s[1] = 1 / 0 end, s_huge = function() s[1] = 1e300 end, s_string = function() s[1] = "x" end,
    coincident = function() for k = 1, #s do s[k] = 0 end end,
    type_short = function() ty[n] = nil end, type_neg = function() ty[1] = -1 end, type_out = function() ty[1] = ntypes end,
    type_huge = function() ty[1] = 2 ^ 40 end, type_float = function() ty[1] = 0.5 end,
    charge_short = function() spec.charge = {1}; spec.coulomb_k = 1 end, charge_nan = function() spec.charge = q; spec.coulomb_k = 1; q[1] = 0 / 0 end,
    charge_huge = function() spec.charge = q; spec.coulomb_k = 1; q[1] = 1e200 end,
    nsites_zero = function() nsites[1] = 0 end, nsites_neg = function() nsites[1] = -1 end,
    nsites_float = function() nsites[1] = nsites[1] + 0.5 end, nsites_huge = function() nsites[1] = 1e6 end,
    nsites_empty = function() spec.nsites = {} end, nsites_missing = function() spec.nsites = nil end,
    ntypes_small = function() spec.ntypes = math.max(ntypes - 1, 0) end, ntypes_big = function() spec.ntypes = ntypes + 1 end,
    ntypes_zero = function() spec.ntypes = 0; spec.lj_epsilon, spec.lj_sigma = nil, nil end,
    ntypes_4097 = function() spec.ntypes = 4097; spec.lj_epsilon, spec.lj_sigma = nil, nil end,
    ntypes_46341 = function() spec.ntypes = 46341 end, ntypes_wrap = function() spec.ntypes = (1 << 32) + ntypes end,
    ntypes_float = function() spec.ntypes = ntypes + 0.5 end,
    eps_neg = function() eps[1] = -1 end, eps_nan = function() eps[1] = 0 / 0 end, eps_huge = function() eps[1] = 1e308 end,
    eps_asym = function() if ntypes > 1 then eps[2] = eps[2] + 1 else eps[1] = -eps[1] end end,
    eps_only = function() spec.lj_sigma = nil end, sigma_zero = function() eps[1] = 1; sig[1] = 0 end,
    sigma_huge = function() sig[1] = 1e154 end, sigma_neg = function() sig[1] = -1 end, eps_short = function() eps[#eps] = nil end,
    skin_neg = function() spec.skin = -0.1 end, skin_inf = function() spec.skin = 1 / 0 end, skin_huge = function() spec.skin = 1e300 end,
    cutoff_zero = function() spec.cutoff = 0 end, cutoff_neg = function() spec.cutoff = -1 end, cutoff_nan = function() spec.cutoff = 0 / 0 end,
    cutoff_huge = function() spec.box = nil; spec.cutoff = 1e300 end, cutoff_tiny = function() spec.cutoff = 1e-300; spec.lj_shift = true end,
    cutoff_missing = function() spec.cutoff = nil end, cutoff_string = function() spec.cutoff = "2" end,
    alpha_neg = function() spec.charge = q; spec.coulomb_k = 1; spec.coulomb_alpha = -1 end,
    alpha_huge = function() spec.charge = q; spec.coulomb_k = 1; spec.coulomb_alpha = 1e300 end,
    k_zero = function() spec.charge = q; spec.coulomb_k = 0 end, k_huge = function() spec.charge = q; spec.coulomb_k = 1e308 end,
    unknown_field = function() spec.cutof = 1 end, shift_string = function() spec.lj_shift = "yes" end,
    many_sites = function() -- 2 bodies of 10000 sites in a small region: many pairs (max_bytes: 1 GB)
      spec.nsites, spec.s, spec.type, spec.charge, spec.lj_epsilon, spec.lj_sigma, spec.ntypes = {10000, 10000}, {}, nil, nil, nil, nil, 1
      for k = 1, 20000 do local a = k * 0.618033988749895 % 1 spec.s[3 * k - 2], spec.s[3 * k - 1], spec.s[3 * k] = a, a * 7 % 1, a * 13 % 1 end
    end,
  }
  if damage and D[damage] then D[damage]() end
  return spec
end
-- the bodies of templates ts at xs (vec3 or 3 numbers) with attitudes exp(rs[b]) and velocities, for lf.bodies,
-- with the site potential pot (whatever it is)
function V.md_bodies(ts, xs, rs, vs, pot)
  local bodies = {potential = pot}
  for b, t in ipairs(ts) do
    local R = rs and rs[b] and lf.so3.exp(rs[b]) or nil
    bodies[b] = t:body{x = xs[b], R = R and t:place(R) or nil, v = vs and vs[b] or nil, omega = vs and vs[b] and {0.1, -0.2, 0.05 * b} or nil}
  end
  return bodies
end
-- the path of a file written with text (a LAMMPS data file the fuzzer made)
function V.lammps_file(path, text)
  local f = io.open(path, "w")
  if f then f:write(text); f:close() end
  return path
end
-- the body of each atom id: function(id) -> t[id] (nil beyond)
function V.body_of(t) return function(id) return t[id] end end
-- n sites of a molecule: a planar or 3-D cloud (deterministic), mass 1
function V.many_sites(n, planar)
  local s = {}
  for k = 1, n do
    local a = k * 0.618033988749895 % 1
    s[k] = {mass = 1, x = {a * 10, a * 70 % 10, planar and 0 or a * 130 % 10}, type = 1 + k % 2}
  end
  return {sites = s}
end

return V
