-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow compiled-model fuzzer: random expression programs through the tracer, the native code
-- generator and the tape, checked against each other, against plain Lua and against the
-- interpreted point trace, so that no backend differs silently.
--
-- Each program is Lua source text (printed with every finding, replayable with --only), generated
-- from a small typed grammar over arguments of kinds number, vec3 (general or unit), mat3 (general
-- or a rotation) and arrays of numbers, with an optional params table `p` as the last argument:
-- arithmetic and ^ (integer and real exponents, real ones on positive bases), unary minus, math.*
-- with guarded domains (sqrt(1 + x*x), log(2 + x*x), asin(x / (2 + |x|)), ...), the vec3/mat3
-- methods (normalized of vectors bounded away from 0, inv of I + 0.1 A / (1 + |A|)), lf.so3, lf.s2
-- and lf.quat maps (log, cayinv, angle of rotations away from the angle pi), lf.math.select with
-- the conditions, helper functions of the chunk (upvalues), and fixed-count loops, some of them
-- long (graphs of thousands of operations, emitted in chunks natively). The result is mostly a
-- number (so that gradients exist), sometimes a vec3 or mat3. Some programs must be refused: they
-- branch on a traced value, call math.floor / fmod / % / // of one, or pass one to a function of
-- plain numbers (string.format, a math.sqrt taken outside the function, `..`).
--
-- For each program, at a few random points (rotations lf.so3.exp of random vectors, unit vectors
-- for the s2 arguments, moderate numbers; sometimes exact zeros, the identity, tiny angles):
--   * native and tape give the same bits (values, gradients, operation counts), and so does the
--     tape of the program traced at another point (the graph must not depend on the trace point);
--     evaluating a point again gives the same bits;
--   * the compiled value equals the plain Lua call of the same function on plain values within
--     1e-9 relative to max(1, |value|, the largest intermediate of the plain call), unless moving
--     the arguments by 1e-13 moves the plain value as much (an ill-conditioned point: counted);
--   * the compiled gradient equals lf.autodiff.reverse.gradient (the interpreted point trace)
--     within 1e-9 relative (one raising where the other does not is a finding), has the shape of
--     its argument, and (every 2nd program, two points: cheap on the tape) equals central
--     differences, Richardson-extrapolated, along directions that stay in the domain (geodesics on
--     S^2, R exp(h y) on SO(3)) within 1e-5 relative; points near a kink are skipped;
--   * an error is a clean lieflow message, not a raw Lua error from lieflow's own .lua files, and a
--     program that the plain call runs is not refused by the tracer; a refused program is refused
--     by both backends with the expected message at the program's line;
--   * potentials U(R, p) also go into lf.rigidbody with compile = "native", "tape" and false:
--     sys:potential(R) and sys:torque(R) agree within 1e-9 relative (native and tape bit for bit),
--     also after sys:set_params;
--   * potentials of bodies that translate: U(x1, R1 [, p]) in lf.rigidbody{mass =}, U(x1, R1, x2, R2)
--     in lf.bodies (as U(xs, Rs)) and pair kernels u(R1, R2, r3 [, p]) of three moving centres (with a
--     cutoff or none), each with compile = "native", "tape" and false: sys:potential, sys:force and
--     sys:torque at each configuration against the program (U its plain value, the sum over the pairs
--     within the cutoff; F = -dU/dx and tau = -dU/dR in the left trivialization from the compiled
--     program's gradient) and the compiled backends against the interpreted one, within 1e-9 relative
--     (native and tape bit for bit), also after sys:set_params;
--   * forcings tau(t, R1, w1 [, x1, v1] [, p]) (a vec3) in lf.rigidbody{forcing =} (with a mass: a force
--     too) with compile = "native", "tape" and false: a few steps of vlv, lgvi, no_squish, dlm,
--     split_exact or rkmk4 from the program's points, the states of native and tape bit for bit and the
--     compiled ones against the interpreted within 1e-9 relative, also after sys:set_params.
--
-- Usage: lieflow tests/fuzz/graph_fuzz.lua [--seed N] [--programs K] [--seconds S] [--log FILE]
--                                          [--native-every N] [--only I] [--verbose]
--   --programs K      number of programs (default 20); with --seconds, the run also stops at S s
--   --native-every N  program i is also compiled natively when i % N == 1 (default 4: 5 of 20);
--                     the others on the tape only (a first native compile costs 0.05-0.3 s)
--   --only I          run program I of the seed only, natively too (the replay line of a finding)
--   --log FILE        write every program's source to FILE before it runs (a crash leaves the
--                     culprit last)
--   --verbose         print every program on stderr
-- Native code is used when a probe compile succeeds (LIEFLOW_CC=/nonexistent: tape only). Objects
-- go to lieflow's code cache (set XDG_CACHE_HOME to keep them out of ~/.cache; run.sh does).
-- Output: findings (kind, detail, replay line, point, values, program), then on stdout
-- `graph_fuzz: seed N, K programs, M points, native|tape-only, F finding(s)`, and statistics on
-- stderr. Exit status 1 when there are findings, 0 otherwise. Deterministic given --seed (an own
-- xorshift generator per program and per program's points; --seconds only cuts the run short).
-- Known bugs (KNOWN, KNOWN_FINDINGS below) do not count unless LIEFLOW_FUZZ_ALL=1.
local lf = rawget(_G, "lf") or require "lieflow"

-- ------------------------------------------------------------------ options
local opt = {seed = 1, programs = 20, seconds = math.huge, native_every = 4}
do
  local i = 1
  while arg and arg[i] do
    local a, v = arg[i], arg[i + 1]
    if a == "--seed" then opt.seed = assert(math.tointeger(tonumber(v)), "--seed N (an integer)"); i = i + 1
    elseif a == "--programs" then opt.programs = assert(tonumber(v), "--programs K"); i = i + 1
    elseif a == "--seconds" then opt.seconds = assert(tonumber(v), "--seconds S"); i = i + 1
    elseif a == "--native-every" then opt.native_every = assert(math.tointeger(tonumber(v)), "--native-every N"); i = i + 1
    elseif a == "--only" then opt.only = assert(math.tointeger(tonumber(v)), "--only I"); i = i + 1
    elseif a == "--log" then opt.log = v; i = i + 1
    elseif a == "--verbose" then opt.verbose = true
    else error("graph_fuzz.lua: unknown argument " .. tostring(a)) end
    i = i + 1
  end
end
local clock = lf.core and lf.core.wall_time or os.time
local t_start = clock()

-- Known bugs, found by this fuzzer and not fixed yet. Delete an entry when its bug is fixed.
-- KNOWN: inputs that reach the bug are not generated unless LIEFLOW_FUZZ_ALL=1 (then its findings
-- count). KNOWN_FINDINGS: findings that match are counted and reported once on stderr, but do not
-- fail the run unless LIEFLOW_FUZZ_ALL=1.
local RUN_ALL = os.getenv("LIEFLOW_FUZZ_ALL") == "1"
local cur = {}   -- the program being checked: {index, src, log}
local KNOWN = {}          -- none today (the first runs' findings are fixed: see git log)
local KNOWN_FINDINGS = {}

-- tolerances (relative to max(1, |value|, scale)); see the header
local TOL_PLAIN, TOL_REVERSE, TOL_FD = 1e-9, 1e-9, 1e-5

-- ------------------------------------------------------------------ PRNG (xorshift64, own state)
local rng = {}
rng.__index = rng
local function new_rng(seed, stream)
  local s = (seed * 0x9E3779B97F4A7C15 + stream * 0xBF58476D1CE4E5B9 + 0x94D049BB133111EB) | 1
  local r = setmetatable({s = s}, rng)
  for _ = 1, 8 do r:int() end
  return r
end
function rng:int()
  local x = self.s
  x = x ~ (x << 13); x = x ~ (x >> 7); x = x ~ (x << 17)
  self.s = x
  return x
end
function rng:float() return (self:int() >> 11) * 0x1p-53 end         -- [0, 1)
function rng:range(a, b) return a + (b - a) * self:float() end
function rng:int_in(a, b) return a + (self:int() >> 11) % (b - a + 1) end
function rng:chance(p) return self:float() < p end
function rng:pick(t) return t[self:int_in(1, #t)] end

-- ------------------------------------------------------------------ helpers
local fmt = string.format
local function finite(x) return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge end
local function mtname(x)
  local mt = getmetatable(x)
  return type(mt) == "table" and type(rawget(mt, "__name")) == "string" and rawget(mt, "__name") or type(x)
end
local function num(x) return fmt("%.17g", x) end
-- Lua source of a constant (negative ones in parentheses: `a - -1` is fine, `a--1` a comment)
local function const(x)
  local s = fmt("%.4g", x)
  if not s:find("[%.e]") then s = s .. ".0" end
  return x < 0 and "(" .. s .. ")" or s
end

-- the numbers of a value, in order (number, vec3, mat3, table of numbers or of those)
local function flatten(x, out)
  out = out or {}
  local k = mtname(x)
  if type(x) == "number" then out[#out + 1] = x
  elseif k == "lf.vec3" then for i = 1, 3 do out[#out + 1] = x[i] end
  elseif k == "lf.mat3" then for i = 1, 3 do for j = 1, 3 do out[#out + 1] = x[i][j] end end
  elseif type(x) == "table" then for i = 1, #x do flatten(x[i], out) end
  else out[#out + 1] = 0 / 0 end
  return out
end
local function shape(x)
  local k = mtname(x)
  if type(x) == "number" then return "number" end
  if k == "lf.vec3" or k == "lf.mat3" then return k:sub(4) end
  if type(x) == "table" then return "table" .. #x end
  return k
end
-- Lua source that rebuilds a value (for the printed point)
local function show(x)
  local k = mtname(x)
  if type(x) == "number" then return num(x) end
  if k == "lf.vec3" then return fmt("lf.vec3{%s, %s, %s}", num(x[1]), num(x[2]), num(x[3])) end
  if k == "lf.mat3" then
    local r = {}
    for i = 1, 3 do r[i] = fmt("{%s, %s, %s}", num(x[i][1]), num(x[i][2]), num(x[i][3])) end
    return "lf.mat3{" .. table.concat(r, ", ") .. "}"
  end
  if type(x) == "table" then
    local parts = {}
    for i = 1, #x do parts[i] = show(x[i]) end
    local keys = {}
    for key in pairs(x) do if type(key) == "string" then keys[#keys + 1] = key end end
    table.sort(keys)
    for _, key in ipairs(keys) do parts[#parts + 1] = key .. " = " .. show(x[key]) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return tostring(x)
end
local function bits(a, b) return string.pack("<d", a) == string.pack("<d", b) end
local function maxabs(t)
  local m = 0
  for _, v in ipairs(t) do if math.abs(v) > m then m = math.abs(v) end end
  return m
end

-- a raw Lua runtime error from lieflow's own .lua files, or a misuse of the standard library there
-- (as tests/fuzz/fuzz.lua decides it)
local OWN_LUA = "lieflow/[%w_/]+%.lua:%d+: "
local RAW = {"attempt to ", "stack overflow", "C stack overflow", "number has no integer representation",
             "invalid value %(at index", "table index is n", "bad argument #%d+ to '[%w_]+' %(number expected",
             "bad argument #%d+ to '[%w_]+' %(table expected", "bad argument #%d+ to 'format'"}
local function unclean(msg)
  if type(msg) ~= "string" then return "an error value of type " .. type(msg) end
  local first = msg:match("^[^\n]*")
  local pos = first:find(OWN_LUA)
  if pos then
    local rest = first:sub(pos):gsub("^" .. OWN_LUA, "")
    for _, p in ipairs(RAW) do if rest:find("^" .. p) then return "a raw Lua error in lieflow's Lua code" end end
  end
  return nil
end

-- ------------------------------------------------------------------ findings
local nfindings, bykind = 0, {}
local MAX_PRINTED = 25
local known_count, known_seen = {}, {}
local function finding(kind, detail, point, values)
  if not RUN_ALL then
    for _, k in ipairs(KNOWN_FINDINGS) do
      if k.match(kind, detail) then
        known_count[k.id] = (known_count[k.id] or 0) + 1
        if not known_seen[k.id] then
          known_seen[k.id] = true
          io.stderr:write(fmt("graph_fuzz: known bug %s (not counted; LIEFLOW_FUZZ_ALL=1 counts it): program %d of seed %d: %s\n",
                              k.id, cur.index, opt.seed, detail))
        end
        return
      end
    end
  end
  nfindings = nfindings + 1
  bykind[kind] = (bykind[kind] or 0) + 1
  if cur.log then cur.log:write("-- FINDING ", kind, ": ", (detail:gsub("\n", " ")), "\n") end
  if nfindings > MAX_PRINTED then return end
  local out = {fmt("FINDING %s (program %d of seed %d): %s", kind, cur.index, opt.seed, detail),
               fmt("  replay: lieflow tests/fuzz/graph_fuzz.lua --seed %d --only %d", opt.seed, cur.index)}
  if point then out[#out + 1] = "  point: " .. point end
  if values then out[#out + 1] = "  values: " .. values end
  out[#out + 1] = "  program:"
  out[#out + 1] = "    " .. cur.src:gsub("\n", "\n    ")
  io.stdout:write(table.concat(out, "\n"), "\n")
end

-- ------------------------------------------------------------------ the generator
-- Expressions are {s = source, b = bound, ang = rotation angle bound (R), qa = half angle (Q)}.
-- Types: N number, V vec3, U unit vec3 (a V), M mat3, R rotation (an M), Q unit quaternion
-- (a table {w, x, y, z}). b bounds |x| (N), the norm (V), the Frobenius norm (M). The bounds are
-- rough; they keep magnitudes moderate (an expression beyond its type's limit is squashed by atan
-- or a scaling) and keep rotations whose log, cayinv, angle are taken away from the angle pi.
local Gen = {}
Gen.__index = Gen

local function E(s, b, extra)
  local e = {s = s, b = b}
  if extra then for k, v in pairs(extra) do e[k] = v end end
  return e
end
local SQ3 = math.sqrt(3)
local MAXB = {N = 50, V = 50, M = 50}

function Gen:var(T)   -- a random variable (argument, parameter or earlier local) of type T, or nil
  local c = {}
  local function add(list) for _, v in ipairs(list or {}) do c[#c + 1] = v end end
  add(self.vars[T])
  if T == "V" then add(self.vars.U) end
  if T == "M" then add(self.vars.R) end
  if #c == 0 then return nil end
  return self.r:pick(c)
end

-- squash an expression into moderate magnitudes (N: atan; V: v / sqrt(1 + v.v); M: A / (1 + |A|))
function Gen:tame(T, e, lim)
  if e.b <= lim then return e end
  if T == "N" then return E(fmt("math.atan(%s)", e.s), 1.571) end
  if T == "V" or T == "U" then return E(fmt("(%s / math.sqrt(1 + %s:dot(%s)))", e.s, e.s, e.s), 1) end
  return E(fmt("(%s / (1 + %s:norm()))", e.s, e.s), 1)
end

function Gen:const_vec()
  local r = self.r
  local a, b, c = r:range(-1, 1), r:range(-1, 1), r:range(-1, 1)
  return E(fmt("lf.vec3{%s, %s, %s}", const(a), const(b), const(c)), math.sqrt(a * a + b * b + c * c) + 1e-3)
end

-- a leaf of type T: mostly a variable (an argument, parameter or earlier local), else a small
-- conversion from a variable of another type, rarely a constant
function Gen:leaf(T)
  local r = self.r
  local v = self:var(T)
  if v and r:chance(0.7) then return v end
  local k = r:int_in(1, 8)
  if T == "N" then
    if k == 1 and #self.arrays > 0 then
      local a = r:pick(self.arrays)
      if r:chance(0.2) then return E(fmt("%s[#%s]", a.s, a.s), 2) end
      return E(fmt("%s[%d]", a.s, r:int_in(1, a.n)), 2)
    elseif k == 2 and self.params then
      return E(r:pick{"p.k", "p.c", "p.B.y"}, 2)
    elseif k <= 4 and self:var("V") then
      local w = self:var("V")
      return E(fmt("%s%s", w.s, r:pick{".x", ".y", ".z", "[1]", "[2]", "[3]"}), w.b)
    elseif k <= 6 and self:var("M") then
      local m = self:var("M")
      local i, j = r:int_in(1, 3), r:int_in(1, 3)
      local s = r:pick{fmt("%s[%d][%d]", m.s, i, j), fmt("%s:row(%d)[%d]", m.s, i, j), fmt("%s:col(%d)[%d]", m.s, j, i)}
      return E(s, m.b)
    elseif k == 7 and self:var("Q") then
      return E(fmt("%s[%d]", self:var("Q").s, r:int_in(1, 4)), 1)
    end
    if v and r:chance(0.8) then return v end
    local c = r:pick{0.5, 2, -1.5, 0.25, 3, r:range(-3, 3)}
    return E(const(c), math.abs(c))
  elseif T == "V" then
    if k == 1 and self.params then return E("p.B", 2) end
    if k <= 3 and self:var("R") then
      local R = self:var("R")
      local c = self:const_vec()
      return E(fmt("(%s * %s)", R.s, c.s), c.b)
    end
    if k <= 5 and (self:var("N") or #self.arrays > 0) then
      local a, b = self:leaf("N"), self:leaf("N")
      return E(fmt("lf.vec3{%s, %s, %s}", a.s, const(r:range(-1, 1)), b.s), a.b + b.b + 1)
    end
    if v then return v end
    if k == 6 and self:var("M") then
      local m = self:var("M")
      return E(fmt("%s:%s(%d)", m.s, r:pick{"row", "col"}, r:int_in(1, 3)), m.b)
    end
    return self:const_vec()
  elseif T == "U" then
    if k <= 3 and self:var("R") then
      return E(fmt("%s:col(%d)", self:var("R").s, r:int_in(1, 3)), 1)
    elseif k <= 6 and (self:var("V") or self:var("N")) then
      local a = self:tame("V", self:leaf("V"), 1)
      return E(fmt("(%s + lf.vec3{0, 0, 2}):normalized()", a.s), 1)
    end
    if v then return v end
    local a, b = r:range(0, math.pi), r:range(-math.pi, math.pi)
    local x, y, z = math.sin(a) * math.cos(b), math.sin(a) * math.sin(b), math.cos(a)
    return E(fmt("lf.vec3{%s, %s, %s}", num(x), num(y), num(z)), 1)   -- exact digits: unit to 1e-16
  elseif T == "M" then
    if k <= 3 then return self:leaf("R") end
    if k <= 5 and (self:var("V") or self:var("N")) then
      local a = self:leaf("V")
      return E(fmt("lf.so3.hat(%s)", a.s), a.b * 1.42)
    end
    if v then return v end
    local t = {}
    for i = 1, 9 do t[i] = const(r:range(-1, 1)) end
    return E(fmt("lf.mat3{{%s, %s, %s}, {%s, %s, %s}, {%s, %s, %s}}", table.unpack(t)), 3)
  elseif T == "R" then
    if k <= 5 and (self:var("V") or self:var("N")) then
      local w = self:tame("V", self:leaf("V"), 2)
      return E(fmt("lf.so3.exp(%s)", w.s), SQ3, {ang = w.b})
    end
    if v then return v end
    if k == 6 then return E("lf.so3.I", SQ3, {ang = 0}) end
    local w = self:const_vec()
    return E(fmt("lf.so3.exp(%s)", w.s), SQ3, {ang = w.b})
  elseif T == "Q" then
    if k <= 3 and self:var("R") then
      local R = self:var("R")
      return E(fmt("lf.quat.from_matrix(%s)", R.s), 1, {qa = math.min(R.ang, math.pi) / 2})
    end
    if k <= 6 and (self:var("V") or self:var("N")) then
      local w = self:tame("V", self:leaf("V"), 1.2)
      return E(fmt("lf.quat.exp(%s)", w.s), 1, {qa = w.b})
    end
    if v then return v end
    local w = self:const_vec()
    return E(fmt("lf.quat.exp(%s)", w.s), 1, {qa = w.b})
  end
end

-- a rotation whose angle stays below lim (log, cayinv, angle, quat.from_matrix are taken of it)
function Gen:small_rot(d, lim)
  for _ = 1, 3 do
    local e = self:gen("R", d)
    if e.ang <= lim then return e end
  end
  local w = self:tame("V", self:gen("V", d - 1), 1)
  return E(fmt("lf.so3.exp(%s)", w.s), SQ3, {ang = w.b})
end
function Gen:small_quat(d, lim)
  for _ = 1, 3 do
    local e = self:gen("Q", d)
    if e.qa <= lim then return e end
  end
  local w = self:tame("V", self:gen("V", d - 1), 1)
  return E(fmt("lf.quat.exp(%s)", w.s), 1, {qa = w.b})
end
-- two expressions of type T with different source (dist(R, R) is a singular point; aliases through
-- locals still reach it: see KNOWN_FINDINGS)
function Gen:two(T, d)
  local a = self:gen(T, d)
  local b = self:gen(T, d)
  for _ = 1, 4 do
    if b.s ~= a.s then break end
    b = self:gen(T, d)
  end
  if b.s == a.s then b = T == "U" and E(fmt("(lf.so3.exp(lf.vec3{0.3, -0.2, 0.1}) * %s)", a.s), 1)
                      or E(fmt("(lf.so3.exp(lf.vec3{0.3, -0.2, 0.1}) * %s)", a.s), SQ3, {ang = a.ang + 0.4}) end
  return a, b
end

local COND = {"lt", "le", "gt", "ge", "eq", "ne"}
local REALPOW = {0.5, 1.5, -0.5, 2.5, -1.25, 0.3, 1.7, -1, -2, -3, 1, 2, 0}

-- a condition for lf.math.select: mostly on traced values, sometimes constant (a boolean, a number)
function Gen:cond(d)
  local r = self.r
  if r:chance(0.1) then
    return r:pick{"lf.math.lt(0.5, 1.0)", "lf.math.ge(0.5, 1.0)", "true", "false", "1", "0"}
  end
  local a, b = self:gen("N", d - 1), self:gen("N", d - 1)
  return fmt("lf.math.%s(%s, %s)", r:pick(COND), a.s, b.s)
end

function Gen:genN(d)
  local r = self.r
  local k = r:int_in(1, 21)
  local function sub() return self:gen("N", d - 1) end
  if k <= 3 then
    local a, b = sub(), sub()
    local op = r:pick{"+", "-", "*"}
    return E(fmt("(%s %s %s)", a.s, op, b.s), op == "*" and a.b * b.b or a.b + b.b)
  elseif k == 4 then
    local a, b = sub(), self:leaf("N")
    local form = r:int_in(1, 3)
    if form == 1 then return E(fmt("(%s / (1 + %s * %s))", a.s, b.s, b.s), a.b) end
    if form == 2 then return E(fmt("(%s / (2 + math.cos(%s)))", a.s, b.s), a.b) end
    return E(fmt("(%s / (1 + math.abs(%s)))", a.s, b.s), a.b)
  elseif k == 5 then
    local a = self:tame("N", sub(), 6)
    local form = r:int_in(1, 5)
    if form == 1 then
      local n = r:pick{0, 1, 2, 2, 3, 3, 4, 5, 8}
      if a.b > 2 and n > 4 then a = self:tame("N", a, 1) end
      return E(fmt("(%s ^ %d)", a.s, n), a.b ^ n + 1)
    end
    if form == 2 then
      local p = r:pick(REALPOW)
      return E(fmt("((2 + math.sin(%s)) ^ %s)", a.s, const(p)), 3 ^ math.abs(p) + 1)
    end
    if form == 3 then return E(fmt("((1 + %s * %s) ^ -%d)", a.s, a.s, r:int_in(1, 3)), 1) end
    if form == 4 then return E(fmt("(2 ^ %s)", a.s), 2 ^ a.b) end
    local b = self:leaf("N")   -- a positive base to a state-dependent real power
    return E(fmt("((1.5 + math.cos(%s)) ^ %s)", b.s, a.s), 2.5 ^ a.b)
  elseif k == 6 then
    local a = sub()
    return E(fmt("(-%s)", a.s), a.b)
  elseif k <= 10 then
    local a = sub()
    local f = r:int_in(1, 16)
    if f == 1 then return E(fmt("math.sqrt(1 + %s * %s)", a.s, a.s), a.b + 1) end
    if f == 2 then return E(fmt("math.sqrt(2 + math.cos(%s))", a.s), 2) end
    if f == 3 then a = self:tame("N", a, 4) return E(fmt("math.exp(%s)", a.s), math.exp(a.b)) end
    if f == 4 then return E(fmt("math.log(2 + %s * %s)", a.s, a.s), math.log(2 + a.b * a.b) + 1) end
    if f == 5 then return E(fmt("math.log(1 + math.abs(%s))", a.s), math.log(1 + a.b)) end
    if f == 6 then return E(fmt("math.sin(%s)", a.s), 1) end
    if f == 7 then return E(fmt("math.cos(%s)", a.s), 1) end
    if f == 8 then return E(fmt("math.tan(%s / (1 + math.abs(%s)))", a.s, a.s), 1.56) end
    if f == 9 then return E(fmt("math.tan(0.5 * math.sin(%s))", a.s), 0.55) end
    if f == 10 then return E(fmt("math.asin(%s / (2 + math.abs(%s)))", a.s, a.s), 0.53) end
    if f == 11 then return E(fmt("math.acos(0.9 * math.sin(%s))", a.s), 2.7) end
    if f == 12 then return E(fmt("math.atan(%s)", a.s), 1.571) end
    if f == 13 then
      local b = sub()
      if r:chance(0.5) then return E(fmt("math.atan(%s, %s)", a.s, b.s), 3.1416) end
      return E(fmt("math.atan(%s, 2 + math.cos(%s))", a.s, b.s), 1.571)
    end
    if f == 14 then return E(fmt("math.abs(%s)", a.s), a.b) end
    local b = sub()
    local fn = f == 15 and "min" or "max"
    if r:chance(0.3) then
      local c = sub()
      return E(fmt("math.%s(%s, %s, %s)", fn, a.s, b.s, c.s), math.max(a.b, b.b, c.b))
    end
    return E(fmt("math.%s(%s, %s)", fn, a.s, b.s), math.max(a.b, b.b))
  elseif k <= 12 then   -- vectors to numbers
    local f = r:int_in(1, 5)
    if f == 1 then local a, b = self:gen("V", d - 1), self:gen("V", d - 1) return E(fmt("%s:dot(%s)", a.s, b.s), a.b * b.b) end
    if f == 2 then local a = self:gen("V", d - 1) return E(fmt("math.sqrt(1 + %s:dot(%s))", a.s, a.s), a.b + 1) end
    if f == 3 then   -- |a|: a shifted away from 0 (the norm is singular there)
      local a = self:tame("V", self:gen("V", d - 1), 1)
      return E(fmt("(%s + lf.vec3{0, 2, 0}):norm()", a.s), 3)
    end
    local a = self:gen("V", d - 1)
    return E(fmt("%s%s", a.s, r:pick{".x", ".y", ".z", "[1]", "[2]", "[3]"}), a.b)
  elseif k <= 14 then   -- matrices to numbers
    local a = self:gen("M", d - 1)
    local f = r:int_in(1, 6)
    if f == 1 then return E(fmt("%s:det()", a.s), a.b ^ 3) end
    if f == 2 then return E(fmt("%s:trace()", a.s), a.b * SQ3) end
    if f == 3 then return E(fmt("%s[%d][%d]", a.s, r:int_in(1, 3), r:int_in(1, 3)), a.b) end
    if f == 4 then local v = self:gen("V", d - 1) return E(fmt("%s:row(%d):dot(%s)", a.s, r:int_in(1, 3), v.s), a.b * v.b) end
    if f == 5 then return E(fmt("%s:col(%d)%s", a.s, r:int_in(1, 3), r:pick{".x", ".y", ".z"}), a.b) end
    a = self:tame("M", a, 1)
    return E(fmt("(%s + lf.so3.I):norm()", a.s), 3)   -- |I + A|_F >= sqrt(3) - 1 > 0
  elseif k <= 16 then   -- rotations, unit vectors, quaternions to numbers
    local f = r:int_in(1, 6)
    if f == 1 then local a, b = self:two("R", d - 1) return E(fmt("lf.so3.dist(%s, %s)", a.s, b.s), 2.83) end
    if f == 2 then local a = self:small_rot(d - 1, 2.5) return E(fmt("lf.so3.angle(%s)", a.s), 3.1416) end
    if f == 3 then
      local a, b = self:two("R", d - 1)
      if a.ang + b.ang > 2.5 then return E(fmt("lf.so3.dist(%s, %s)", a.s, b.s), 2.83) end
      return E(fmt("lf.so3.angle(%s, %s)", a.s, b.s), 3.1416)
    end
    if f == 4 then
      local a = self:tame("M", self:gen("M", d - 1), 1)
      return E(fmt("lf.so3.orth_error(%s + 0.5 * lf.so3.I)", a.s), 10)   -- (I/2 + A) is far from orthogonal
    end
    if f == 5 then local a, b = self:two("U", d - 1) return E(fmt("lf.s2.dist(%s, %s)", a.s, b.s), 3.1416) end
    local q = self:gen("Q", d - 1)
    return E(fmt("%s[%d]", q.s, r:int_in(1, 4)), 1)
  elseif k <= 18 and d >= 2 then   -- select on a condition
    local x, y = sub(), sub()
    return E(fmt("lf.math.select(%s, %s, %s)", self:cond(d), x.s, y.s), math.max(x.b, y.b))
  elseif k == 19 and self.helpers then   -- helpers of the chunk (upvalues: natural math reaches them)
    local a = sub()
    if r:chance(0.5) then return E(fmt("h1(%s)", a.s), a.b + 1) end
    local b = sub()
    return E(fmt("h2(%s, %s)", a.s, b.s), a.b + 3)
  end
  return self:leaf("N")
end

function Gen:genV(d)
  local r = self.r
  local k = r:int_in(1, 16)
  local function sub() return self:gen("V", d - 1) end
  if k <= 2 then
    local a, b = sub(), sub()
    return E(fmt("(%s %s %s)", a.s, r:pick{"+", "-"}, b.s), a.b + b.b)
  elseif k == 3 then
    local a, n = sub(), self:gen("N", d - 1)
    if r:chance(0.5) then return E(fmt("(%s * %s)", n.s, a.s), n.b * a.b) end
    return E(fmt("(%s * %s)", a.s, n.s), n.b * a.b)
  elseif k == 4 then
    local a, n = sub(), self:leaf("N")
    if r:chance(0.5) then return E(fmt("(%s / (2 + math.cos(%s)))", a.s, n.s), a.b) end
    return E(fmt("(-%s)", a.s), a.b)
  elseif k == 5 then
    local a, b = sub(), sub()
    return E(fmt("%s:cross(%s)", a.s, b.s), a.b * b.b)
  elseif k == 6 then
    local m, a = self:gen("M", d - 1), sub()
    if r:chance(0.6) then return E(fmt("(%s * %s)", m.s, a.s), m.b * a.b) end
    return E(fmt("(%s * %s)", a.s, m.s), m.b * a.b)   -- a row vector times a matrix
  elseif k == 7 then
    local x, y, z = self:gen("N", d - 1), self:gen("N", d - 1), self:gen("N", d - 1)
    return E(fmt("lf.vec3{%s, %s, %s}", x.s, y.s, z.s), x.b + y.b + z.b)
  elseif k == 8 then
    if r:chance(0.5) then
      local a = self:small_rot(d - 1, 3.05)
      return E(fmt("lf.so3.log(%s)", a.s), 3.1416)
    end
    local a = self:small_rot(d - 1, 2.5)
    return E(fmt("lf.so3.cayinv(%s)", a.s), 2 * math.tan(1.25) + 1)
  elseif k == 9 then
    local m = self:gen("M", d - 1)
    return E(fmt("lf.so3.vee(%s)", m.s), m.b)
  elseif k == 10 then
    local R, a = self:gen("R", d - 1), sub()
    return E(fmt("lf.so3.Ad(%s, %s)", R.s, a.s), a.b)
  elseif k == 11 then
    local a = self:tame("V", sub(), 4)
    local b = sub()
    return E(fmt("(lf.so3.%s(%s) * %s)", r:pick{"dexp", "dexpinv", "dcay", "dcayinv"}, a.s, b.s), 30 * b.b)
  elseif k == 12 then
    local q = self:small_quat(d - 1, 2.5)
    return E(fmt("lf.quat.log(%s)", q.s), 2.5)
  elseif k == 13 then
    local u, a = self:leaf("U"), sub()
    if r:chance(0.3) then   -- the inverse of a retraction: x . y > 0
      a = self:tame("V", a, 1)
      return E(fmt("lf.s2.retract_inv(%s, lf.s2.retract(%s, lf.s2.tangent(%s, %s)))", u.s, u.s, u.s, a.s), 1)
    end
    return E(fmt("lf.s2.tangent(%s, %s)", u.s, a.s), a.b)
  elseif k == 14 and d >= 2 then
    local x, y = sub(), sub()
    return E(fmt("lf.math.select(%s, %s, %s)", self:cond(d), x.s, y.s), math.max(x.b, y.b))
  elseif k == 15 then
    return self:genU(d)
  end
  return self:leaf("V")
end

function Gen:genU(d)
  local r = self.r
  local k = r:int_in(1, 6)
  if k == 1 then
    local R, u = self:gen("R", d - 1), self:gen("U", d - 1)
    return E(fmt("(%s * %s)", R.s, u.s), 1)
  elseif k == 2 then
    local u, v = self:leaf("U"), self:tame("V", self:gen("V", d - 1), 3)
    return E(fmt("lf.s2.%s(%s, lf.s2.tangent(%s, %s))", r:pick{"exp", "retract"}, u.s, u.s, v.s), 1)
  elseif k == 3 then
    local a, b = self:two("U", d - 1)
    return E(fmt("lf.s2.midpoint(%s, %s)", a.s, b.s), 1)
  elseif k == 4 then   -- a vector bounded away from 0, normalized
    local a = self:tame("V", self:gen("V", d - 1), 1)
    return E(fmt("(%s + lf.vec3{%s}):normalized()", a.s, r:pick{"2, 0, 0", "0, -2, 0", "1.5, 1.5, 0", "0, 0, 3"}), 1)
  end
  return self:leaf("U")
end

function Gen:genM(d)
  local r = self.r
  local k = r:int_in(1, 14)
  local function sub() return self:gen("M", d - 1) end
  if k <= 2 then
    local a, b = sub(), sub()
    return E(fmt("(%s %s %s)", a.s, r:pick{"+", "-"}, b.s), a.b + b.b)
  elseif k == 3 then
    local a, n = sub(), self:gen("N", d - 1)
    return E(fmt("(%s * %s)", n.s, a.s), n.b * a.b)
  elseif k == 4 then
    local a, b = sub(), sub()
    return E(fmt("(%s * %s)", a.s, b.s), a.b * b.b)
  elseif k == 5 then
    local a = sub()
    return E(r:chance(0.7) and fmt("%s:T()", a.s) or fmt("(-%s)", a.s), a.b)
  elseif k == 6 then
    local v = self:gen("V", d - 1)
    return E(fmt("lf.so3.hat(%s)", v.s), v.b * 1.42)
  elseif k == 7 then   -- the inverse of a well-conditioned matrix: I + 0.1 A / (1 + |A|)
    local a = sub()
    return E(fmt("(lf.so3.I + (0.1 / (1 + %s:norm())) * %s):inv()", a.s, a.s), 2.2)
  elseif k == 8 then
    local v = self:tame("V", self:gen("V", d - 1), 4)
    return E(fmt("lf.so3.%s(%s)", r:pick{"dexp", "dexpinv", "dcay", "dcayinv"}, v.s), 30)
  elseif k == 9 and d >= 2 then
    local x, y = sub(), sub()
    return E(fmt("lf.math.select(%s, %s, %s)", self:cond(d), x.s, y.s), math.max(x.b, y.b))
  elseif k == 10 and d >= 2 and r:chance(0.3) then
    local t, b = {}, 0
    for i = 1, 9 do local e = self:gen("N", 0) t[i] = e.s b = b + e.b end
    return E(fmt("lf.mat3{{%s, %s, %s}, {%s, %s, %s}, {%s, %s, %s}}", table.unpack(t)), b)
  elseif k <= 12 then
    return self:genR(d)
  end
  return self:leaf("M")
end

function Gen:genR(d)
  local r = self.r
  local k = r:int_in(1, 8)
  if k == 1 then
    local a, b = self:gen("R", d - 1), self:gen("R", d - 1)
    return E(fmt("(%s * %s)", a.s, b.s), SQ3, {ang = a.ang + b.ang})
  elseif k == 2 then
    local a = self:gen("R", d - 1)
    return E(r:chance(0.8) and fmt("%s:T()", a.s) or fmt("lf.so3.Ad(%s)", a.s), SQ3, {ang = a.ang})
  elseif k == 3 then
    local v = self:tame("V", self:gen("V", d - 1), 2)
    return E(fmt("lf.so3.exp(%s)", v.s), SQ3, {ang = math.min(v.b, math.pi)})
  elseif k == 4 then
    local v = self:tame("V", self:gen("V", d - 1), 3)
    return E(fmt("lf.so3.cay(%s)", v.s), SQ3, {ang = 2 * math.atan(v.b / 2)})
  elseif k == 5 then
    local q = self:gen("Q", d - 1)
    return E(fmt("lf.quat.to_matrix(%s)", q.s), SQ3, {ang = 2 * q.qa})
  end
  return self:leaf("R")
end

function Gen:genQ(d)
  local r = self.r
  local k = r:int_in(1, 6)
  if k == 1 then
    local v = self:tame("V", self:gen("V", d - 1), 1.2)
    return E(fmt("lf.quat.exp(%s)", v.s), 1, {qa = v.b})
  elseif k == 2 then
    local a = self:gen("R", d - 1)
    return E(fmt("lf.quat.from_matrix(%s)", a.s), 1, {qa = math.min(a.ang, math.pi) / 2})
  elseif k == 3 then
    local q = self:gen("Q", d - 1)
    return E(fmt("lf.quat.conj(%s)", q.s), 1, {qa = q.qa})
  elseif k == 4 then
    local a, b = self:gen("Q", d - 1), self:gen("Q", d - 1)
    return E(fmt("lf.quat.mul(%s, %s)", a.s, b.s), 1, {qa = a.qa + b.qa})
  end
  return self:leaf("Q")
end

function Gen:gen(T, d)
  if d <= 0 or self.r:chance(0.2) then return self:leaf(T) end
  local e
  if T == "N" then e = self:genN(d)
  elseif T == "V" then e = self:genV(d)
  elseif T == "U" then e = self:genU(d)
  elseif T == "M" then e = self:genM(d)
  elseif T == "R" then e = self:genR(d)
  else e = self:genQ(d) end
  if (T == "N" or T == "V" or T == "M") and e.b > MAXB[T] then e = self:tame(T, e, MAXB[T]) end
  return e
end

-- A program: {src, args (kinds for lf.compile), argt (N, V, U, M, R, array), params, result,
-- mode ("plain", "potential", "refuse"), expect (the refusal's message)}
local ARGKINDS = {
  {"number", "N", "x"}, {"number", "N", "x"}, {"vec3", "V", "v"}, {"vec3", "U", "u"},
  {"mat3", "M", "A"}, {"mat3", "R", "R"}, {"mat3", "R", "R"}, {"array", "array", "a"},
}
-- the array lengths given as args = {n} (1, 3 and 9 are arrays too, not a number, vec3, mat3)
local ARRAY_LENGTHS = {1, 2, 3, 4, 5, 6, 7, 9}

-- programs that must be refused: a branch on a traced value, a piecewise-constant function of one,
-- or a documented misuse (text from a traced number, a changed vector, a plain-number function)
-- statement(x, t) -> source, the message expected (a Lua pattern)
local REFUSALS = {
  function(x, t, r) return fmt("if %s %s %s then %s = %s + 1 end", x, r:pick{">", "<", ">=", "<="}, const(r:range(-0.5, 0.5)), t, t),
                           "compares a state%-dependent value" end,
  -- both sides traced: `x == 0.5` is false without a comparison (a userdata and a number)
  function(x, t, r) return fmt("if %s == 0.5 * %s + %s then %s = -%s end", x, x, const(r:range(-1, 1)), t, t),
                           "compares a state%-dependent value" end,
  function(x, t, r) return fmt("while %s < %s - 1 do %s = %s + 1 end", t, x, t, t), "compares a state%-dependent value" end,
  function(x, t, r) return fmt("%s = %s + math.%s(%s * 3)", t, t, r:pick{"floor", "ceil"}, x), "piecewise constant" end,
  function(x, t, r) return fmt("%s = %s + math.fmod(%s, 0.7)", t, t, x), "piecewise constant" end,
  function(x, t, r) return fmt("%s = %s + (%s * 3) %s 2", t, t, x, r:pick{"%", "//"}), "piecewise" end,
  function(x, t, r) return fmt("%s = %s + tonumber(string.format(\"%%.3f\", %s))", t, t, x), "'format'" end,
  function(x, t, r) return fmt("local text = \"x = \" .. %s", x), "concatenate" end,
  function(x, t, r) return fmt("%s = %s + plain_sqrt(1 + %s * %s)", t, t, x, x), "sqrt' %(number expected" end,
}

-- A program: {src, args (kinds for lf.compile), argt (N, V, U, M, R, array), params, result,
-- mode ("plain", "potential", "refuse"), expect (the refusal's message)}
local ARGKINDS = {
  {"number", "N", "x"}, {"number", "N", "x"}, {"vec3", "V", "v"}, {"vec3", "U", "u"},
  {"mat3", "M", "A"}, {"mat3", "R", "R"}, {"mat3", "R", "R"}, {"array", "array", "a"},
}
-- the arguments of the programs that are potentials of bodies that translate (mode -> {kind, type, name})
local BODY_ARGS = {
  potential_x = {{"vec3", "V", "x1"}, {"mat3", "R", "R1"}},
  potential_xs = {{"vec3", "V", "x1"}, {"mat3", "R", "R1"}, {"vec3", "V", "x2"}, {"mat3", "R", "R2"}},
  pair_x = {{"mat3", "R", "R1"}, {"mat3", "R", "R2"}, {"vec3", "V", "r3"}},
}
-- the arguments of the programs that are forcings (t, state.R, state.omega [, state.x, state.v]): a
-- vec3, the torque (and, of a body that translates, the force)
local FORCING_ARGS = {
  forcing = {{"number", "N", "t"}, {"mat3", "R", "R1"}, {"vec3", "V", "w1"}},
  forcing_x = {{"number", "N", "t"}, {"mat3", "R", "R1"}, {"vec3", "V", "w1"}, {"vec3", "V", "x1"}, {"vec3", "V", "v1"}},
}
local function generate(index)
  local r = new_rng(opt.seed, index)
  local g = setmetatable({r = r, vars = {N = {}, V = {}, U = {}, M = {}, R = {}, Q = {}}, arrays = {}}, Gen)
  local prog = {index = index, args = {}, argt = {}, names = {}, mode = "plain"}
  -- the ranges of the points: rotations up to the angle 1.2 or (wide) 3.0, numbers up to 2 or 50
  prog.wide, prog.big = r:chance(0.25), r:chance(0.15)
  local ANG = prog.wide and 3.0 or 1.2
  local mode = r:float()
  if mode < 0.09 then prog.mode = "potential"
  elseif mode < 0.15 then prog.mode = "potential_x"
  elseif mode < 0.18 then prog.mode = "potential_xs"
  elseif mode < 0.21 then prog.mode = "pair_x"
  elseif mode < 0.29 then prog.mode = "refuse"
  elseif mode < 0.33 then prog.mode = "forcing"
  elseif mode < 0.36 then prog.mode = "forcing_x" end
  if prog.mode == "potential" then
    prog.args[1], prog.argt[1], prog.names[1] = "mat3", "R", "R1"
    g.vars.R[1] = E("R1", SQ3, {ang = ANG})
  elseif BODY_ARGS[prog.mode] or FORCING_ARGS[prog.mode] then
    -- potentials of bodies that translate: U(x1, R1), U(x1, R1, x2, R2) (two bodies: lf.bodies calls
    -- it through U(xs, Rs)), and pair kernels u(R1, R2, r3) of moving centres (r3 = x_j - x_i); forcings
    -- tau(t, R1, w1 [, x1, v1])
    for i, a in ipairs(BODY_ARGS[prog.mode] or FORCING_ARGS[prog.mode]) do
      prog.args[i], prog.argt[i], prog.names[i] = a[1], a[2], a[3]
      table.insert(g.vars[a[2]], E(a[3], a[2] == "R" and SQ3 or 2.6, {ang = ANG}))
    end
  else
    for i = 1, r:int_in(1, 3) do
      local k = r:pick(ARGKINDS)
      local name = k[3] .. i
      prog.names[i] = name
      if k[1] == "array" then
        local n = r:pick(ARRAY_LENGTHS)
        prog.args[i], prog.argt[i] = n, "array"
        g.arrays[#g.arrays + 1] = {s = name, n = n}
      else
        prog.args[i], prog.argt[i] = k[1], k[2]
        local e = E(name, ({N = prog.big and 50 or 2, V = 2.6, U = 1, M = 3, R = SQ3})[k[2]], {ang = ANG})
        table.insert(g.vars[k[2]], e)
      end
    end
  end
  if r:chance(0.4) then
    g.params = true
    prog.params = {k = const(r:range(-2, 2)), c = const(r:range(0.1, 2)),
                   B = fmt("lf.vec3{%s, %s, %s}", const(r:range(-1, 1)), const(r:range(-1, 1)), const(r:range(-1, 1)))}
  end
  -- helper functions of the chunk, called from the program (upvalues: their math.* must be traced too)
  g.helpers = r:chance(0.25)
  local lines = {}
  local function emit(s) lines[#lines + 1] = "  " .. s end
  local depth = r:int_in(1, 3)
  local nloc = r:int_in(1, 8)
  local TYPES = {"N", "N", "N", "N", "V", "V", "U", "M", "R", "Q"}
  local function new_local(T, e, name)
    emit(fmt("local %s = S(%s)", name, e.s))
    table.insert(g.vars[T], E(name, e.b, {ang = e.ang, qa = e.qa}))
  end
  for i = 1, nloc do
    local T = r:pick(TYPES)
    new_local(T, g:gen(T, depth), "t" .. i)
  end
  -- a fixed-count loop (unrolled by the tracer); sometimes a long one (a graph of thousands of
  -- operations: the native code is then emitted in chunks)
  if r:chance(0.35) then
    local long = r:chance(0.15)
    local n = long and r:int_in(20, 60) or r:int_in(2, 5)
    local k = r:int_in(1, 4)
    if k == 1 or long then
      if #g.vars.N == 0 then new_local("N", g:gen("N", 1), "t" .. (nloc + 1)) end
      if #g.vars.V == 0 then new_local("V", g:gen("V", 1), "t" .. (nloc + 2)) end
      local t, w = r:pick(g.vars.N), r:pick(g.vars.V)
      local e = g:gen("N", long and 2 or 1)
      local dw = g:tame("V", g:gen("V", 1), 1)
      emit(fmt("for i = 1, %d do", n))
      emit(fmt("  %s = S(0.5 * %s + math.sin(%s + 0.01 * i))", t.s, t.s, e.s))
      if long or r:chance(0.5) then
        emit(fmt("  %s = S(lf.so3.exp(%s * (%s / (1 + %s * %s))) * %s)", w.s, dw.s, const(r:range(-0.3, 0.3)), t.s, t.s, w.s))
      end
      emit("end")
      t.b = math.max(t.b, 2)
    elseif k == 2 and #g.vars.V > 0 then
      local t = r:pick(g.vars.V)
      local w = g:tame("V", g:gen("V", 1), 1)
      emit(fmt("for i = 1, %d do %s = S(lf.so3.exp(%s * (0.2 * i)) * %s) end", n, t.s, w.s, t.s))
    elseif k == 3 and #g.vars.V > 0 and #g.vars.M > 0 and r:chance(0.5) then
      local v, m = r:pick(g.vars.V), r:pick(g.vars.M)
      emit("local c = 0")
      emit(fmt("for i = 1, 3 do c = c + %s[i] * %s[i][4 - i] + %s:col(i)[i] end", v.s, m.s, m.s))
      table.insert(g.vars.N, E("c", 3 * v.b * m.b + 3 * m.b))
    elseif k == 3 and #g.vars.R > 0 then
      local t = r:pick(g.vars.R)
      local w = g:tame("V", g:gen("V", 1), 0.5)
      emit(fmt("for i = 1, %d do %s = S(%s * lf.so3.%s(%s)) end", n, t.s, t.s, r:pick{"exp", "cay"}, w.s))
      t.ang = t.ang + n * 0.5
    elseif #g.arrays > 0 then
      local a = r:pick(g.arrays)
      local e = g:leaf("N")
      emit(fmt("local s = 0"))
      emit(fmt("for i = 1, #%s do s = s + %s[i] * math.cos(i * %s) end", a.s, a.s, e.s))
      table.insert(g.vars.N, E("s", 2 * a.n))
    end
  end
  -- a refused program
  if prog.mode == "refuse" then
    local x
    for i, t in ipairs(prog.argt) do
      local n = prog.names[i]
      if t == "N" then x = n
      elseif t == "array" then x = n .. "[1]"
      elseif t == "V" or t == "U" then x = n .. ".y"
      else x = n .. "[2][1]" end
      if r:chance(0.5) then break end
    end
    local t = g:var("N")
    local tgt = t and t.s:match("^[%a_][%w_]*$") and t.s or nil
    if not tgt then new_local("N", E("0.5", 0.5), "b") tgt = "b" end
    local stmt, expect = r:pick(REFUSALS)(x, tgt, r)
    emit(stmt)
    prog.expect = expect
  end
  -- the result
  local rt = prog.mode == "plain" and r:pick{"N", "N", "N", "N", "N", "N", "N", "V", "M"} or
             FORCING_ARGS[prog.mode] and "V" or "N"
  prog.result = rt
  local e = g:gen(rt == "M" and "M" or rt, r:int_in(1, 2))
  -- make the result depend on the locals (a sum of most of them)
  local terms = {e.s}
  for _, v in ipairs(g.vars[rt]) do
    if (v.s:match("^t%d") or v.s == "s" or v.s == "b" or v.s == "c") and r:chance(0.8) then terms[#terms + 1] = v.s end
  end
  if rt == "N" then
    for _, v in ipairs(g.vars.V) do if v.s:match("^t%d") and r:chance(0.6) then terms[#terms + 1] = v.s .. ".x" end end
    for _, v in ipairs(g.vars.M) do if v.s:match("^t%d") and r:chance(0.6) then terms[#terms + 1] = v.s .. ":trace()" end end
    for _, v in ipairs(g.vars.R) do if v.s:match("^t%d") and r:chance(0.6) then terms[#terms + 1] = v.s .. "[1][3]" end end
    for _, v in ipairs(g.vars.Q) do if v.s:match("^t%d") and r:chance(0.6) then terms[#terms + 1] = v.s .. "[2]" end end
  end
  emit("return " .. table.concat(terms, " + "))
  local argnames = {table.unpack(prog.names)}
  if g.params then argnames[#argnames + 1] = "p" end
  -- plain_sqrt: math.sqrt taken outside the function (an upvalue), which the tracer cannot reach
  local body = table.concat(lines, "\n")
  local src = {"local lf, S = ..."}
  if body:find("plain_sqrt") then src[#src + 1] = "local plain_sqrt = math.sqrt" end
  if body:find("h%d%(") then
    src[#src + 1] = "local function h1(z) return math.sqrt(1 + z * z) * math.cos(z) end"
    src[#src + 1] = "local function h2(z, w) return h1(z) + math.atan(w) * lf.math.select(lf.math.gt(z, w), 2, 1) end"
  end
  src[#src + 1] = "return function(" .. table.concat(argnames, ", ") .. ")"
  src[#src + 1] = body
  src[#src + 1] = "end"
  prog.src = table.concat(src, "\n")
  return prog
end

-- ------------------------------------------------------------------ points
local function rand_vec(r, s) return lf.vec3{r:range(-s, s), r:range(-s, s), r:range(-s, s)} end
local function rand_unit(r)
  local v
  repeat v = rand_vec(r, 1) until v:norm() > 0.1
  return v:normalized()
end
-- a point: moderate values, sometimes special ones (exact zeros, axes, the identity, tiny angles
-- and vectors: where the generated code's series and guards take over)
local function rand_point(r, prog)
  local pt = {}
  for i, t in ipairs(prog.argt) do
    local special = r:chance(0.1)
    if t == "N" then pt[i] = special and r:pick{0.0, 1.0, -1.0, 1e-9, -3e-5} or r:range(-2, 2) * (prog.big and 25 or 1)
    elseif t == "V" then
      if special then pt[i] = r:chance(0.5) and lf.vec3{0, 0, 0} or rand_unit(r) * 10 ^ r:range(-10, -3)
      else pt[i] = rand_vec(r, 1.5) end
    elseif t == "U" then
      pt[i] = special and r:pick{lf.vec3{1, 0, 0}, lf.vec3{0, -1, 0}, lf.vec3{0, 0, 1}} or rand_unit(r)
    elseif t == "R" then
      local lim = prog.wide and 3.0 or 1.2
      local w = rand_vec(r, lim)
      if w:norm() > lim then w = w * (lim / w:norm()) end
      if special then w = r:chance(0.3) and lf.vec3{0, 0, 0} or rand_unit(r) * 10 ^ r:range(-10, -2) end
      pt[i] = lf.so3.exp(w)
    elseif t == "M" then
      local m = {}
      for k = 1, 9 do m[k] = r:range(-1, 1) end
      pt[i] = special and lf.mat3() or lf.mat3(m)
    else
      local a = {}
      for k = 1, prog.args[i] do a[k] = special and 0.0 or r:range(-2, 2) end
      pt[i] = a
    end
  end
  return pt
end
local function show_point(prog, pt)
  local parts = {}
  for i, v in ipairs(pt) do parts[i] = prog.names[i] .. " = " .. show(v) end
  return table.concat(parts, ", ")
end
local function copy_point(pt)
  local c = {}
  for i, v in ipairs(pt) do
    if type(v) == "table" then c[i] = {table.unpack(v)} else c[i] = v end
  end
  return c
end

-- ------------------------------------------------------------------ loading a program
local stats = {programs = 0, points = 0, native = 0, refused = 0, invalid = 0, fd = 0, fd_skipped = 0,
               bodies = 0, body_points = 0, bodies_skipped = 0, plain_skipped = 0, reverse_skipped = 0,
               too_large = 0, max_nodes = 0, nodes = 0, ties = 0, cc_timeout = 0, ill = 0, forcings = 0,
               forcing_runs = 0, forcing_skipped = 0}

local function identity(x) return x end
local function params_of(prog)   -- a fresh params table (lieflow may keep what it is given)
  if not prog.params then return nil end
  return assert(load("return {k = " .. prog.params.k .. ", c = " .. prog.params.c .. ", B = " .. prog.params.B .. "}",
                     "=params", "t", {lf = lf}))()
end
-- a fresh closure of the program (lf.compile changes its function's environment in place), with
-- S the scale recorder (plain calls) or the identity (traced calls), and its own lf (plain calls)
local function instantiate(prog, S, lib)
  local chunk = assert(load(prog.src, "=prog" .. prog.index, "t", _G))
  return chunk(lib or lf, S or identity)
end

-- lf for a plain call, whose conditions lf.math.lt/le/gt/ge/eq/ne report their operands: a
-- condition near its tie may go the other way in the compiled code (rounding differs), and then a
-- selected value differs by a jump, not by rounding (dexp(x) x and x, equal in exact arithmetic)
local function recording_lf(report)
  local m = setmetatable({}, {__index = lf.math})
  for _, k in ipairs{"lt", "le", "gt", "ge", "eq", "ne"} do
    local cond = lf.math[k]
    m[k] = function(a, b)
      if type(a) == "number" and type(b) == "number" then report(a, b) end
      return cond(a, b)
    end
  end
  return setmetatable({math = m}, {__index = lf})
end

-- the arguments of a compiled call: the point's values, then the params
local function argv(prog, pt, P)
  local a = {table.unpack(pt, 1, #prog.args)}
  if prog.params then a[#a + 1] = P end
  return table.unpack(a, 1, #prog.args + (prog.params and 1 or 0))
end

-- f(pt...) with the params appended
local function call(f, prog, pt, P) return f(argv(prog, pt, P)) end

-- the plain Lua call: value and scale (the largest number of the intermediates, arguments, result);
-- nil, 0 and why when it raises, gives a non-finite number, or a condition was within 1e-8
-- (relative) of its tie
local TIE = 1e-8
local function plain_value(prog, pt, P)
  local scale, tie = 0, false
  local function S(x)
    for _, v in ipairs(flatten(x)) do if math.abs(v) > scale then scale = math.abs(v) end end
    return x
  end
  local lib = recording_lf(function(a, b)
    if math.abs(a - b) <= TIE * math.max(1, math.abs(a), math.abs(b)) then tie = true end
  end)
  local f = instantiate(prog, S, lib)
  local ok, v = pcall(call, f, prog, pt, P)
  if not ok then return nil, 0, v end
  if tie then stats.ties = stats.ties + 1 return nil, 0, "a condition near its tie" end
  local flat = flatten(v)
  for _, x in ipairs(flat) do if not finite(x) then return nil, 0, "not finite" end end
  for _, a in ipairs(pt) do S(a) end
  S(v)
  return v, scale
end

-- ------------------------------------------------------------------ native or tape only
local cc_env = os.getenv("LIEFLOW_CC")
local have_native = false
if cc_env ~= "/nonexistent" then
  local ok, f = pcall(lf.compile, function(x) return x * x + 1 end, {args = {"number"}, backend = "native"})
  have_native = ok and f.backend == "native"
  if not have_native then
    io.stderr:write("graph_fuzz: no native code, tape only: ", ok and tostring(f.report) or tostring(f), "\n")
  end
end

-- ------------------------------------------------------------------ the checks
local function compare_bits(kind, a, b, pt_s, what, names)
  names = names or {"native", "tape"}
  local fa, fb = flatten(a), flatten(b)
  local vals = fmt("%s = %s, %s = %s", names[1], show(a), names[2], show(b))
  if shape(a) ~= shape(b) or #fa ~= #fb then
    finding(kind, what .. ": shapes differ", pt_s, vals)
    return false
  end
  for i = 1, #fa do
    if not bits(fa[i], fb[i]) then
      finding(kind, fmt("%s: component %d differs (%s %s, %s %s)", what, i, names[1], num(fa[i]), names[2], num(fb[i])), pt_s, vals)
      return false
    end
  end
  return true
end

local function compare_tol(kind, a, b, tol, scale, pt_s, what, names)
  local fa, fb = flatten(a), flatten(b)
  if #fa ~= #fb then
    finding(kind, what .. ": sizes differ", pt_s, fmt("%s = %s, %s = %s", names[1], show(a), names[2], show(b)))
    return false
  end
  local s = math.max(1, maxabs(fa), maxabs(fb), scale)
  for i = 1, #fa do
    local err = math.abs(fa[i] - fb[i])
    if not (err <= tol * s) then
      finding(kind, fmt("%s: component %d differs by %.3g (%.3g relative to %.3g; tolerance %g)", what, i, err, err / s, s, tol),
              pt_s, fmt("%s = %s, %s = %s", names[1], show(a), names[2], show(b)))
      return false
    end
  end
  return true
end

-- The point with every argument moved by about 1e-13 relative (rotations by exp of 1e-13 rad, so
-- that they stay rotations): the plain value there shows how much rounding the function amplifies.
local function nudged(pt)
  local q = {}
  for i, a in ipairs(pt) do
    if type(a) == "number" then q[i] = a * (1 + 1e-13) + 1e-13
    elseif getmetatable(a) == getmetatable(lf.mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}) then
      q[i] = lf.so3.is_rotation(a, 1e-12) and a * lf.so3.exp{1e-13, -1e-13, 1e-13} or a * (1 + 1e-13)
    elseif getmetatable(a) == getmetatable(lf.vec3{0, 0, 0}) then
      q[i] = a * (1 + 1e-13)
    elseif type(a) == "table" then
      q[i] = {}
      for k, x in ipairs(a) do q[i][k] = x * (1 + 1e-13) + 1e-13 end
    else q[i] = a end
  end
  return q
end

-- compiled against plain Lua: a difference beyond the tolerance counts unless the function is so
-- ill-conditioned at the point that moving the arguments by 1e-13 moves the plain value by a tenth
-- of that difference (chaotic loops: 42 iterations of t = t/2 + sin(c t) amplify rounding to 1e-8,
-- seed 407, program 1441); such points are counted as ill-conditioned
local function compare_plain(prog, P, pt, vt, vref, scale, pt_s)
  local fa, fb = flatten(vt), flatten(vref)
  local s, worst = math.max(1, maxabs(fa), maxabs(fb), scale), 0
  for i = 1, math.min(#fa, #fb) do worst = math.max(worst, math.abs(fa[i] - fb[i])) end
  if #fa == #fb and worst > TOL_PLAIN * s then
    local vn = plain_value(prog, nudged(pt), P)
    local fn = vn and flatten(vn)
    if fn and #fn == #fb then
      local moved = 0
      for i = 1, #fb do moved = math.max(moved, math.abs(fn[i] - fb[i])) end
      if moved >= 0.1 * worst then stats.ill = stats.ill + 1 return end
    end
  end
  compare_tol("value vs plain Lua", vt, vref, TOL_PLAIN, scale, pt_s, "value", {"compiled", "plain"})
end

-- a compile: the compiled function, or nil and the message (a clean message is checked here)
local function compile(prog, backend, at)
  local fn = instantiate(prog)
  local ok, f = pcall(lf.compile, fn, {args = prog.args, params = params_of(prog), backend = backend, at = at})
  if ok then return f end
  local why = unclean(f)
  if why then finding("raw error", fmt("lf.compile (%s) raised %s: %s", backend, why, tostring(f)), at and show_point(prog, at)) end
  return nil, tostring(f)
end

-- directions for central differences: {apply = function(pt, h) -> pt', deriv = function(grads) -> number}
local function hat(y) return lf.so3.hat(y) end
local function directions(prog, pt, r)
  local dirs = {}
  for i, t in ipairs(prog.argt) do
    if t == "N" then
      dirs[#dirs + 1] = {apply = function(p, h) local q = copy_point(p) q[i] = p[i] + h return q end,
                         deriv = function(g) return g[i] end}
    elseif t == "array" then
      for k = 1, prog.args[i] do
        dirs[#dirs + 1] = {apply = function(p, h) local q = copy_point(p) q[i][k] = p[i][k] + h return q end,
                           deriv = function(g) return flatten(g[i])[k] end}
      end
    elseif t == "V" then
      for k = 1, 3 do
        local e = {0, 0, 0}
        e[k] = 1
        e = lf.vec3(e)
        dirs[#dirs + 1] = {apply = function(p, h) local q = copy_point(p) q[i] = p[i] + h * e return q end,
                           deriv = function(g) return g[i][k] end}
      end
    elseif t == "U" then   -- geodesics u cos h + w sin h, w tangent
      local u = pt[i]
      local a = math.abs(u.x) < 0.6 and lf.vec3{1, 0, 0} or lf.vec3{0, 1, 0}
      local w1 = (a - a:dot(u) * u):normalized()
      local w2 = u:cross(w1)
      for _, w in ipairs{w1, w2} do
        dirs[#dirs + 1] = {apply = function(p, h) local q = copy_point(p) q[i] = math.cos(h) * p[i] + math.sin(h) * w return q end,
                           deriv = function(g) return g[i]:dot(w) end}
      end
    elseif t == "M" then
      for k = 1, 9 do
        local rr, cc = (k - 1) // 3 + 1, (k - 1) % 3 + 1
        dirs[#dirs + 1] = {apply = function(p, h)
                             local q = copy_point(p)
                             local m = p[i]:totable()
                             m[rr][cc] = m[rr][cc] + h
                             q[i] = lf.mat3(m)
                             return q
                           end,
                           deriv = function(g) return g[i][rr][cc] end}
      end
    elseif t == "R" then   -- R exp(h hat(y)): d/dh = <G, R hat(y)>
      for k = 1, 3 do
        local y = {0, 0, 0}
        y[k] = 1
        y = lf.vec3(y)
        dirs[#dirs + 1] = {apply = function(p, h) local q = copy_point(p) q[i] = p[i] * lf.so3.exp(h * y) return q end,
                           deriv = function(g)
                             local D, s = pt[i] * hat(y), 0
                             for a = 1, 3 do for b = 1, 3 do s = s + g[i][a][b] * D[a][b] end end
                             return s
                           end}
      end
    end
  end
  -- a few of them
  local pickd = {}
  for _ = 1, math.min(4, #dirs) do pickd[#pickd + 1] = table.remove(dirs, r:int_in(1, #dirs)) end
  return pickd
end

-- central differences along a few directions, with steps h, h/2, h/4 and Richardson extrapolation
-- (error O(h^4)). A kink of select, abs, min or max within h of the point makes them meaningless:
-- such a point is skipped when the second differences at h and h/4 disagree (near a kink they grow
-- like 1/h) or the two extrapolations disagree.
local function check_fd(prog, f, pt, P, grads, scale, r, pt_s)
  local function val(p)
    local ok, v = pcall(call, f, prog, p, P)
    if ok and finite(v) then return v end
  end
  local f0 = val(pt)
  if not f0 then return end
  for _, d in ipairs(directions(prog, pt, r)) do
    local h, est, sec = 1e-3, {}, {}
    for k = 1, 3 do
      local fp, fm = val(d.apply(pt, h)), val(d.apply(pt, -h))
      if not (fp and fm) then break end
      est[k] = (fp - fm) / (2 * h)
      sec[k] = (fp + fm - 2 * f0) / (h * h)
      h = h / 2
    end
    if #est < 3 then stats.fd_skipped = stats.fd_skipped + 1 goto next end
    do
      local r1, r2 = (4 * est[2] - est[1]) / 3, (4 * est[3] - est[2]) / 3
      local an = d.deriv(grads)
      local s = math.max(1, math.abs(an), math.abs(r2), scale)
      -- (whether the differences agree among themselves is judged on their own scale, not on the
      -- derivative's: a huge derivative of a function that oscillates faster than h would otherwise
      -- make any disagreement look small; seed 203, program 230: 1.5e36 against 145 and 3898)
      local sd = math.max(1, math.abs(r1), math.abs(r2), scale)
      if math.abs(r1 - r2) > 0.5 * TOL_FD * sd or
         math.abs(sec[1] - sec[3]) > 0.1 * math.max(math.abs(sec[1]), math.abs(sec[3])) + 1e-4 * sd then
        stats.fd_skipped = stats.fd_skipped + 1
        goto next
      end
      stats.fd = stats.fd + 1
      if not (math.abs(r2 - an) <= TOL_FD * s) then
        finding("gradient vs differences",
                fmt("directional derivative %.17g, central differences %.17g (h = 1e-3, 5e-4, 2.5e-4: %.17g, %.17g, %.17g)",
                    an, r2, est[1], est[2], est[3]),
                pt_s, fmt("tape gradient = %s", show(grads)))
        return
      end
    end
    ::next::
  end
end

-- potentials in lf.rigidbody with compile = "native", "tape", false (the interpreted reference)
local function bodies_at(prog, sys, pts, P, use_native, note)
  for _, pt in ipairs(pts) do
    local R = pt[1]
    local pt_s = show_point(prog, pt) .. note
    local res = {}   -- per system: {U =, tau =}, or the error message
    for j, s in ipairs(sys) do
      local ok1, U = pcall(s.b.potential, s.b, R)
      local ok2, tau = pcall(s.b.torque, s.b, R)
      if ok1 and ok2 then res[j] = {U = U, tau = tau}
      else
        local msg = ok1 and tau or U
        if unclean(msg) then finding("raw error", fmt("rigidbody (compile = %s): %s", tostring(s.c), tostring(msg)), pt_s) end
        res[j] = tostring(msg)
      end
    end
    local ref = res[#res]
    local vplain, scale = plain_value(prog, pt, P)
    if type(ref) == "table" and vplain ~= nil then
      for j = 1, #sys - 1 do
        local x, c = res[j], sys[j].c
        if type(x) == "string" then
          finding("rigidbody error", fmt("compile = %s raised where compile = false runs: %s", c, x), pt_s)
        else
          compare_tol("rigidbody potential", x.U, ref.U, TOL_PLAIN, scale, pt_s, "sys:potential(R), compile = " .. c, {c, "interpreted"})
          compare_tol("rigidbody torque", x.tau, ref.tau, TOL_REVERSE, scale, pt_s, "sys:torque(R), compile = " .. c, {c, "interpreted"})
        end
      end
      if use_native and type(res[1]) == "table" and type(res[2]) == "table" then
        compare_bits("rigidbody native/tape bits", res[1].U, res[2].U, pt_s, "sys:potential(R)")
        compare_bits("rigidbody native/tape bits", res[1].tau, res[2].tau, pt_s, "sys:torque(R)")
      end
    end
  end
end

local function check_bodies(prog, pts, use_native)
  local sys = {}
  local backends = use_native and {"native", "tape", false} or {"tape", false}
  for _, c in ipairs(backends) do
    local ok, b = pcall(lf.rigidbody, {inertia = {1, 2, 2.5}, potential = instantiate(prog), compile = c, params = params_of(prog)})
    local too_large = not ok and c == "native" and (tostring(b):find("more than the %d+ compiled natively") or
                                                    tostring(b):find("C compiler timed out"))
    if not ok and not too_large then -- (native impossible for this size: compared without it)
      finding(unclean(b) and "raw error" or "rigidbody refused", fmt("lf.rigidbody{compile = %s}: %s", tostring(c), tostring(b)))
      return
    end
    if ok then sys[#sys + 1] = {c = tostring(c), b = b} end
  end
  stats.bodies = stats.bodies + 1
  use_native = sys[1].c == "native"
  bodies_at(prog, sys, pts, params_of(prog), use_native, "")
  -- again after sys:set_params: parameters stay inputs of the compiled code (a value baked into
  -- it would differ from the interpreted one)
  if prog.params then
    local P = params_of(prog)
    local P2 = {k = -0.7 * P.k + 0.3, c = 1.3 * P.c, B = lf.vec3{0.1, 0.2, 0.3} - P.B}
    for _, s in ipairs(sys) do
      local ok, err = pcall(s.b.set_params, s.b, {k = P2.k, c = P2.c, B = lf.vec3(P2.B)})
      if not ok then
        finding(unclean(err) and "raw error" or "rigidbody set_params", fmt("sys:set_params (compile = %s): %s", s.c, tostring(err)))
        return
      end
    end
    bodies_at(prog, sys, pts, P2, use_native, ", after sys:set_params" .. show(P2))
  end
end

-- ------------------------------------------------------------------ potentials of bodies that translate
-- Programs U(x1, R1), U(x1, R1, x2, R2) and pair kernels u(R1, R2, r3) go into bodies with a mass:
-- lf.rigidbody{mass =, potential = U}, lf.bodies{..., potential = function(xs, Rs) return U(xs[1], Rs[1],
-- xs[2], Rs[2]) end}, lf.bodies{3 bodies, pair = u, cutoff =} (r3 = x_j - x_i of bodies i < j), each
-- with compile = "native", "tape" and false. At each configuration, sys:potential(x, R), sys:force and
-- sys:torque of every backend (native and tape bit for bit) against the program itself: U against the
-- plain call (the sum over the pairs within the cutoff), F = -dU/dx and tau_k = -<dU/dR, R hat(e_k)>
-- from the compiled program's gradient (f:gradient, checked against the interpreted point trace and
-- differences above); and the compiled backends against the interpreted one (compile = false: the
-- potential called as Lua, one reverse sweep for the forces and torques).

-- -<G, R hat(e_k)>, k = 1..3: the torque of a Euclidean gradient G of U in R
local function torque_of(G, R)
  local t = {}
  for k = 1, 3 do
    local y = {0, 0, 0}
    y[k] = 1
    local D, s = R * lf.so3.hat(lf.vec3(y)), 0
    for a = 1, 3 do for b = 1, 3 do s = s + G[a][b] * D[a][b] end end
    t[k] = -s
  end
  return lf.vec3(t)
end

-- the program's calls that make U at configuration cf ({x = {...}, R = {...}, cutoff =}): {pt, bodies}
local function body_terms(prog, cf)
  if prog.mode == "potential_x" then return {{pt = {cf.x[1], cf.R[1]}, b = {1}}} end
  if prog.mode == "potential_xs" then return {{pt = {cf.x[1], cf.R[1], cf.x[2], cf.R[2]}, b = {1, 2}}} end
  local terms = {}
  for i = 1, #cf.x do
    for j = i + 1, #cf.x do
      local rij = cf.x[j] - cf.x[i]
      if rij:dot(rij) < cf.cutoff * cf.cutoff then terms[#terms + 1] = {pt = {cf.R[i], cf.R[j], rij}, b = {i, j}} end
    end
  end
  return terms
end

-- U (plain calls), F and tau (the compiled program's gradient) at cf, and the scale of the plain calls;
-- nil and why when a plain call raises, is not finite or sits at a condition's tie, or the gradient raises
local function body_reference(prog, ft, cf, P)
  local n = #cf.x
  local U, scale, F, tau = 0, 0, {}, {}
  for i = 1, n do F[i], tau[i] = lf.vec3{0, 0, 0}, lf.vec3{0, 0, 0} end
  for _, t in ipairs(body_terms(prog, cf)) do
    local v, s, why = plain_value(prog, t.pt, P)
    if v == nil then return nil, 0, why end
    U, scale = U + v, math.max(scale, s)
    local g = table.pack(pcall(ft.gradient, ft, argv(prog, t.pt, P)))
    if not g[1] then return nil, 0, "the gradient raised" end
    if prog.mode == "pair_x" then
      local i, j = t.b[1], t.b[2]
      tau[i], tau[j] = tau[i] + torque_of(g[3], cf.R[i]), tau[j] + torque_of(g[4], cf.R[j])
      F[i], F[j] = F[i] + g[5], F[j] - g[5]
    else
      for k, b in ipairs(t.b) do -- the arguments (x, R) of body b are the program's 2k-1 and 2k
        F[b] = F[b] - g[2 * k + 1]
        tau[b] = tau[b] + torque_of(g[2 * k + 2], cf.R[b])
      end
    end
  end
  return {U = U, F = F, tau = tau}, scale
end

-- the plain U at cf with every argument of every call moved by about 1e-13 (nudged): how much rounding
-- the program amplifies there
local function body_u_nudged(prog, cf, P)
  local U = 0
  for _, t in ipairs(body_terms(prog, cf)) do
    local v = plain_value(prog, nudged(t.pt), P)
    if v == nil then return nil end
    U = U + v
  end
  return U
end

local function show_conf(cf)
  return fmt("xs = %s, Rs = %s%s", show(cf.x), show(cf.R), cf.cutoff < math.huge and ", cutoff = " .. num(cf.cutoff) or "")
end

local function bodies_x_at(prog, ft, sys, confs, P, use_native, note)
  for _, cf in ipairs(confs) do
    local pt_s = show_conf(cf) .. note
    local one = #cf.x == 1
    local xa, Ra = one and cf.x[1] or cf.x, one and cf.R[1] or cf.R
    local res = {} -- per system: {U =, F = {...}, tau = {...}}, or the error message
    for j, s in ipairs(sys) do
      local ok1, U = pcall(s.b.potential, s.b, xa, Ra)
      local ok2, F = pcall(s.b.force, s.b, xa, Ra)
      local ok3, tau = pcall(s.b.torque, s.b, xa, Ra)
      if ok1 and ok2 and ok3 then res[j] = {U = U, F = one and {F} or F, tau = one and {tau} or tau}
      else
        local msg = not ok1 and U or not ok2 and F or tau
        if unclean(msg) then finding("raw error", fmt("%s (compile = %s): %s", prog.mode, s.c, tostring(msg)), pt_s) end
        res[j] = tostring(msg)
      end
    end
    local ref, scale, why = body_reference(prog, ft, cf, P)
    if not ref then
      stats.bodies_skipped = stats.bodies_skipped + 1
      if why == "a condition near its tie" then stats.ties = stats.ties + 1 end
    else
      stats.body_points = stats.body_points + 1
      local gscale = math.max(scale, maxabs(flatten(ref.F)), maxabs(flatten(ref.tau)))
      local interp = res[#res]
      for j, s in ipairs(sys) do
        local x = res[j]
        if type(x) == "string" then
          finding("bodies error", fmt("%s, compile = %s raised where the program and its gradient run: %s", prog.mode, s.c, x), pt_s)
        else
          local names = {s.c, "program"}
          -- U: an ill-conditioned configuration (the plain U moves as much when nudged) is counted
          local du = math.abs(x.U - ref.U)
          local un = du > TOL_PLAIN * math.max(1, math.abs(ref.U), scale) and body_u_nudged(prog, cf, P)
          if un and math.abs(un - ref.U) >= 0.1 * du then stats.ill = stats.ill + 1
          else compare_tol("bodies potential", x.U, ref.U, TOL_PLAIN, scale, pt_s, prog.mode .. " sys:potential, compile = " .. s.c, names) end
          compare_tol("bodies force", x.F, ref.F, TOL_REVERSE, gscale, pt_s, prog.mode .. " sys:force vs -dU/dx of the compiled program, compile = " .. s.c, names)
          compare_tol("bodies torque", x.tau, ref.tau, TOL_REVERSE, gscale, pt_s, prog.mode .. " sys:torque vs -dU/dR of the compiled program, compile = " .. s.c, names)
          if j < #sys and type(interp) == "table" then -- compiled against interpreted
            compare_tol("bodies force", x.F, interp.F, TOL_REVERSE, gscale, pt_s, prog.mode .. " sys:force, compile = " .. s.c, {s.c, "interpreted"})
            compare_tol("bodies torque", x.tau, interp.tau, TOL_REVERSE, gscale, pt_s, prog.mode .. " sys:torque, compile = " .. s.c, {s.c, "interpreted"})
          end
        end
      end
      if use_native and type(res[1]) == "table" and type(res[2]) == "table" then
        compare_bits("bodies native/tape bits", res[1].U, res[2].U, pt_s, prog.mode .. " sys:potential")
        compare_bits("bodies native/tape bits", res[1].F, res[2].F, pt_s, prog.mode .. " sys:force")
        compare_bits("bodies native/tape bits", res[1].tau, res[2].tau, pt_s, prog.mode .. " sys:torque")
      end
    end
  end
end

local function check_bodies_x(prog, ft, pts, use_native)
  local r = new_rng(opt.seed, 2000003 + prog.index) -- the bodies' own stream
  local lim = prog.wide and 3.0 or 1.2
  local function rot()
    local w = rand_vec(r, lim)
    if w:norm() > lim then w = w * (lim / w:norm()) end
    return lf.so3.exp(w)
  end
  -- the configurations: the program's points, or (pair kernels) three bodies at least 0.3 apart
  local confs = {}
  if prog.mode == "pair_x" then
    for _ = 1, 3 do
      local cf = {x = {}, R = {}, cutoff = math.huge}
      for i = 1, 3 do
        local x
        repeat
          x = rand_vec(r, 1.5)
          local near = false
          for k = 1, i - 1 do if (x - cf.x[k]):norm() < 0.3 then near = true end end
        until not near
        cf.x[i], cf.R[i] = x, rot()
      end
      confs[#confs + 1] = cf
    end
    if r:chance(0.4) then -- a cutoff between two of the first configuration's distances
      local d = {}
      for i = 1, 3 do for j = i + 1, 3 do d[#d + 1] = (confs[1].x[j] - confs[1].x[i]):norm() end end
      table.sort(d)
      local k = r:int_in(1, 2)
      local cutoff = 0.5 * (d[k] + d[k + 1])
      local keep = {}
      for _, cf in ipairs(confs) do -- (a pair at its cutoff could go either way: not compared)
        local tie = false
        for i = 1, 3 do
          for j = i + 1, 3 do if math.abs((cf.x[j] - cf.x[i]):norm() - cutoff) < 1e-9 * cutoff then tie = true end end
        end
        cf.cutoff = cutoff
        if not tie then keep[#keep + 1] = cf end
      end
      confs = keep
    end
  else
    for _, pt in ipairs(pts) do
      if prog.mode == "potential_x" then confs[#confs + 1] = {x = {pt[1]}, R = {pt[2]}, cutoff = math.huge}
      else confs[#confs + 1] = {x = {pt[1], pt[3]}, R = {pt[2], pt[4]}, cutoff = math.huge} end
    end
  end
  if #confs == 0 then return end
  local inertia = {{1, 2, 2.5}, {0.5, 0.5, 0.8}, {2, 1, 1.5}}
  local function make(c)
    local f = instantiate(prog)
    local t = {compile = c, params = params_of(prog)}
    if prog.mode == "potential_x" then
      t.mass, t.inertia, t.potential = r:range(0.3, 3), inertia[1], f
      return lf.rigidbody(t)
    end
    local nb = prog.mode == "potential_xs" and 2 or 3
    for i = 1, nb do t[i] = {mass = 0.5 + i, inertia = inertia[i], x = confs[1].x[i], R = confs[1].R[i]} end
    if prog.mode == "potential_xs" then
      t.potential = prog.params and function(xs, Rs, p) return f(xs[1], Rs[1], xs[2], Rs[2], p) end
                                 or function(xs, Rs) return f(xs[1], Rs[1], xs[2], Rs[2]) end
    else
      t.pair = f
      if confs[1].cutoff < math.huge then t.cutoff = confs[1].cutoff end
    end
    return lf.bodies(t)
  end
  local sys = {}
  for _, c in ipairs(use_native and {"native", "tape", false} or {"tape", false}) do
    local ok, b = pcall(make, c)
    local too_large = not ok and c == "native" and (tostring(b):find("more than the %d+ compiled natively") or
                                                    tostring(b):find("C compiler timed out"))
    if not ok and not too_large then
      finding(unclean(b) and "raw error" or "bodies refused", fmt("%s with compile = %s: %s", prog.mode, tostring(c), tostring(b)))
      return
    end
    if ok then sys[#sys + 1] = {c = tostring(c), b = b} end
  end
  stats.bodies = stats.bodies + 1
  use_native = sys[1].c == "native"
  bodies_x_at(prog, ft, sys, confs, params_of(prog), use_native, "")
  if prog.params then -- again after sys:set_params (parameters stay inputs of the compiled code)
    local P = params_of(prog)
    local P2 = {k = -0.7 * P.k + 0.3, c = 1.3 * P.c, B = lf.vec3{0.1, 0.2, 0.3} - P.B}
    for _, s in ipairs(sys) do
      local ok, err = pcall(s.b.set_params, s.b, {k = P2.k, c = P2.c, B = lf.vec3(P2.B)})
      if not ok then
        finding(unclean(err) and "raw error" or "bodies set_params", fmt("%s sys:set_params (compile = %s): %s", prog.mode, s.c, tostring(err)))
        return
      end
    end
    -- (the compiled program's params are fixed when it is compiled: the reference is compiled again with P2)
    local ok, ft2 = pcall(lf.compile, instantiate(prog), {args = prog.args, params = {k = P2.k, c = P2.c, B = lf.vec3(P2.B)},
                                                          backend = "tape"})
    if not ok then
      finding(unclean(ft2) and "raw error" or "refused", "lf.compile (tape) with the params of sys:set_params: " .. tostring(ft2))
      return
    end
    bodies_x_at(prog, ft2, sys, confs, P2, use_native, ", after sys:set_params" .. show(P2))
  end
end

-- ------------------------------------------------------------------ forcings
-- Programs tau(t, R1, w1 [, x1, v1] [, p]) (a vec3) become the forcing of a rigid body, and of a body
-- that translates (torque tau, force 0.1 tau - 0.2 v), squashed to |tau| < 0.5 so that the steps stay
-- tame: function(t, s [, p]) return {torque = 0.5 tau / (1 + |tau|), ...} end, with compile = "native",
-- "tape" and false (the interpreted reference: called as Lua at each evaluation, differences for the
-- Jacobian in the velocities). From a program's point (t0, R, omega [, x, v]), a few steps of methods
-- that take a forcing (explicit kicks, implicit ones with the compiled Jacobian or differences, the
-- generic rkmk4): native and tape bit for bit, compiled against interpreted within 1e-9 relative (a
-- failure of one where the other runs is a finding unless it is Newton's convergence, which differs
-- between an exact Jacobian and differences), also after sys:set_params.
local FORCING_METHODS = {"vlv", "lgvi", "no_squish", "dlm", "split_exact", "rkmk4"}
local TOL_FORCING = 1e-9
local function forcing_state(it)
  local st = it:state()
  local out = {}
  for _, k in ipairs{"R", "omega", "x", "v"} do if st[k] then out[#out + 1] = st[k] end end
  out[#out + 1] = it.t
  return out
end
local function forcing_run(sys, method, pt, h, n)
  local ok, it = pcall(lf.integrator, method, sys, {h = h, t0 = pt[1]})
  if not ok then return nil, tostring(it) end
  local ok2, err = pcall(it.step, it, n)
  if not ok2 then return nil, tostring(err) end
  return forcing_state(it)
end
local function check_forcing(prog, pts, use_native)
  local r = new_rng(opt.seed, 3000017 + prog.index) -- the forcing's own stream
  local trans = prog.mode == "forcing_x"
  local function make(c, pt)
    local f = instantiate(prog)
    local function tame(tau) return tau * (0.5 / (1 + tau:norm())) end
    local t = {inertia = {1, 2, 2.5}, R = pt[2], omega = pt[3], compile = c, params = params_of(prog)}
    if trans then
      t.mass, t.x, t.v = 1.5, pt[4], pt[5]
      t.forcing = prog.params and function(tt, s, p) local tau = tame(f(tt, s.R, s.omega, s.x, s.v, p))
                                                      return {torque = tau, force = 0.1 * tau - 0.2 * s.v} end
                               or function(tt, s) local tau = tame(f(tt, s.R, s.omega, s.x, s.v))
                                                   return {torque = tau, force = 0.1 * tau - 0.2 * s.v} end
    else
      t.forcing = prog.params and function(tt, s, p) return {torque = tame(f(tt, s.R, s.omega, p))} end
                               or function(tt, s) return {torque = tame(f(tt, s.R, s.omega))} end
    end
    return lf.rigidbody(t)
  end
  local methods = {r:pick(FORCING_METHODS), r:pick(FORCING_METHODS)}
  local h, n = r:pick{0.01, 0.05, -0.02}, r:int_in(2, 6)
  local function at(P2)
    for k = 1, 2 do
      local pt = pts[k]
      local pt_s = show_point(prog, pt) .. (P2 and ", after sys:set_params" .. show(P2) or "")
      local sys = {}
      for _, c in ipairs(use_native and {"native", "tape", false} or {"tape", false}) do
        local ok, b = pcall(make, c, pt)
        local too_large = not ok and c == "native" and (tostring(b):find("more than the %d+ compiled natively") or
                                                        tostring(b):find("C compiler timed out"))
        if not ok and not too_large then
          if unclean(b) then finding("raw error", fmt("%s (compile = %s): %s", prog.mode, tostring(c), tostring(b)), pt_s)
          elseif c ~= false or not tostring(b):find("forcing") then
            finding("forcing refused", fmt("%s with compile = %s: %s", prog.mode, tostring(c), tostring(b)), pt_s)
          else stats.forcing_skipped = stats.forcing_skipped + 1 end -- the interpreted call raises here: skipped
          return
        end
        if ok then
          if P2 then
            local okp, err = pcall(b.set_params, b, {k = P2.k, c = P2.c, B = lf.vec3(P2.B)})
            if not okp then
              finding(unclean(err) and "raw error" or "forcing set_params", fmt("sys:set_params (compile = %s): %s", tostring(c), tostring(err)), pt_s)
              return
            end
          end
          sys[#sys + 1] = {c = tostring(c), b = b}
        end
      end
      for _, m in ipairs(methods) do
        local res, errs = {}, {}
        for j, s in ipairs(sys) do res[j], errs[j] = forcing_run(s.b, m, pt, h, n) end
        local ref = res[#sys]
        local what = fmt("%s, %d steps of h = %g from t0 = %s", m, n, h, num(pt[1]))
        for j, s in ipairs(sys) do
          if errs[j] and unclean(errs[j]) then finding("raw error", fmt("%s, compile = %s: %s", what, s.c, errs[j]), pt_s) end
        end
        if (ref == nil) ~= (res[1] == nil) or (ref == nil) ~= (res[#sys - 1] == nil) then
          local msgs = {}
          for j, s in ipairs(sys) do msgs[#msgs + 1] = fmt("compile = %s: %s", s.c, errs[j] or "runs") end
          local all = table.concat(msgs, "; ")
          if all:find("did not converge") or all:find("newton") then stats.forcing_skipped = stats.forcing_skipped + 1
          else finding("forcing error", what .. ": one backend fails where another runs: " .. all, pt_s) end
        elseif ref ~= nil then
          stats.forcing_runs = stats.forcing_runs + 1
          for j = 1, #sys - 1 do
            compare_tol("forcing state", res[j], ref, TOL_FORCING, 0, pt_s, what .. ", compile = " .. sys[j].c,
                        {sys[j].c, "interpreted"})
          end
          if #sys == 3 then compare_bits("forcing native/tape bits", res[1], res[2], pt_s, what) end
        end
      end
    end
  end
  stats.forcings = stats.forcings + 1
  at(nil)
  if prog.params then
    local P = params_of(prog)
    at({k = -0.7 * P.k + 0.3, c = 1.3 * P.c, B = lf.vec3{0.1, 0.2, 0.3} - P.B})
  end
end

local function check_program(prog, use_native)
  local r = new_rng(opt.seed, 1000003 + prog.index)   -- the points' own stream
  local P = params_of(prog)
  local at = rand_point(r, prog)
  local has_unit = false
  for _, t in ipairs(prog.argt) do if t == "U" then has_unit = true end end
  local trace_at = (has_unit or r:chance(0.7)) and at or nil
  local pts = {}
  for j = 1, 4 do pts[j] = rand_point(r, prog) end

  -- a program that must be refused
  if prog.mode == "refuse" then
    for _, backend in ipairs{"tape", use_native and "native" or nil} do
      local f, msg = compile(prog, backend, at)
      if f then
        finding("not refused", fmt("lf.compile (%s) accepted a program that %s", backend, prog.expect:gsub("%%", "")))
      elseif not (msg:find(prog.expect) and msg:find("^prog" .. prog.index .. ":%d+: ")) then
        finding("refusal message", fmt("lf.compile (%s) refused with an unexpected message (expected %q at the program's line): %s",
                                       backend, prog.expect:gsub("%%", ""), msg))
      else
        stats.refused = stats.refused + 1
      end
    end
    return
  end

  local ft, msg = compile(prog, "tape", trace_at)
  if not ft then
    -- refused: a finding when the plain call runs at the trace point (the generator writes valid programs)
    local v = plain_value(prog, at, P)
    if v ~= nil then finding("refused", "lf.compile (tape) refused a program the plain call runs: " .. msg, show_point(prog, at))
    else stats.invalid = stats.invalid + 1 end
    return
  end
  local fnat
  if use_native then
    local m2
    fnat, m2 = compile(prog, "native", trace_at)
    -- backend = "native" raises when it cannot compile: a graph beyond the native limit or a
    -- compiler timeout on a loaded machine are expected, anything else (the generated C failing
    -- to compile) is a finding
    if not fnat then
      if tostring(m2):find("more than the %d+ compiled natively") then stats.too_large = stats.too_large + 1
      elseif tostring(m2):find("C compiler timed out") then
        stats.cc_timeout = stats.cc_timeout + 1
        io.stderr:write(fmt("graph_fuzz: program %d on the tape only: %s\n", cur.index, tostring(m2)))
      else finding("native refused", "lf.compile (native) failed where the tape compiled: " .. tostring(m2)) end
    else
      stats.native = stats.native + 1
      if fnat.backend ~= "native" then
        finding("native backend", "backend = \"native\" gave " .. tostring(fnat.backend) .. ": " .. tostring(fnat.report))
        fnat = nil
      end
      if fnat and fnat.nodes ~= ft.nodes then
        finding("native/tape operations", fmt("native %s operations, tape %s", tostring(fnat.nodes), tostring(ft.nodes)))
      end
    end
  end
  stats.nodes = stats.nodes + ft.nodes
  if ft.nodes > stats.max_nodes then stats.max_nodes = ft.nodes end
  if ft.backend ~= "tape" then finding("tape backend", "backend = \"tape\" gave " .. tostring(ft.backend)) end

  -- the same program traced at another point: the graph must not depend on the trace point
  local ft2
  do
    local at2 = (has_unit or trace_at == nil) and rand_point(r, prog) or nil
    ft2 = compile(prog, "tape", at2)
    if not ft2 then finding("trace point", "lf.compile (tape) refused at another trace point", at2 and show_point(prog, at2))
    elseif ft2.nodes ~= ft.nodes then
      finding("trace point", fmt("traced at another point: %d operations, %d before", ft2.nodes, ft.nodes), at2 and show_point(prog, at2))
    end
  end

  local first_value, first_native = {}, nil
  for j, pt in ipairs(pts) do
    stats.points = stats.points + 1
    local pt_s = show_point(prog, pt)
    local okt, vt = pcall(call, ft, prog, pt, P)
    local vref, scale, plain_why = plain_value(prog, pt, P)
    if not okt then
      local why = unclean(vt)
      if why then finding("raw error", "the tape function raised " .. why .. ": " .. tostring(vt), pt_s)
      elseif vref ~= nil then
        finding("compiled error", "the tape function raised where the plain call gives " .. show(vref) .. ": " .. tostring(vt), pt_s)
      end
      goto next_point
    end
    first_value[j] = vt
    if ft2 then
      local ok2, v2 = pcall(call, ft2, prog, pt, P)
      if not ok2 then finding("trace point", "traced at another point, the tape function raised: " .. tostring(v2), pt_s)
      else compare_bits("trace point", v2, vt, pt_s, "value", {"traced elsewhere", "tape"}) end
    end
    if fnat then
      local okn, vn = pcall(call, fnat, prog, pt, P)
      if not okn then finding("native/tape error", "the native function raised where the tape gives " .. show(vt) .. ": " .. tostring(vn), pt_s)
      else
        if j == 1 then first_native = vn end
        compare_bits("native/tape bits", vn, vt, pt_s, "value")
      end
    end
    -- against plain Lua
    if vref == nil then stats.plain_skipped = stats.plain_skipped + 1   -- plain raised, not finite, or a tie
    else
      if shape(vref) ~= shape(vt) then finding("result shape", fmt("plain %s, compiled %s", shape(vref), shape(vt)), pt_s)
      else compare_plain(prog, P, pt, vt, vref, scale, pt_s) end
    end
    -- gradients
    if prog.result == "N" then
      local gt = table.pack(pcall(ft.gradient, ft, argv(prog, pt, P)))
      local gn = fnat and table.pack(pcall(fnat.gradient, fnat, argv(prog, pt, P)))
      -- the interpreted reverse sweep (params appended by a wrapper: p is no argument of it)
      local fr = instantiate(prog)
      local wrapper = function(...)
        local a = table.pack(...)
        if P then a[a.n + 1] = P a.n = a.n + 1 end
        return fr(table.unpack(a, 1, a.n))
      end
      local rv = table.pack(pcall(lf.autodiff.reverse.gradient, wrapper, table.unpack(copy_point(pt), 1, #prog.args)))
      if not rv[1] and unclean(rv[2]) then
        finding("raw error", "lf.autodiff.reverse.gradient raised " .. unclean(rv[2]) .. ": " .. tostring(rv[2]), pt_s)
      end
      if not gt[1] then
        local why = unclean(gt[2])
        if why then finding("raw error", "tape gradient raised " .. why .. ": " .. tostring(gt[2]), pt_s)
        elseif rv[1] then
          finding("compiled gradient not finite", "f:gradient raised where lf.autodiff.reverse.gradient gives " ..
                  show({table.unpack(rv, 3, rv.n)}) .. ": " .. tostring(gt[2]), pt_s)
        end
        if gn and gn[1] then finding("native/tape error", "the native gradient runs where the tape's raised: " .. tostring(gt[2]), pt_s) end
        goto next_point
      end
      local grads = {table.unpack(gt, 3, gt.n)}
      if not bits(gt[2], vt) then finding("value vs gradient's value", fmt("f() = %s, f:gradient() = %s", num(vt), num(gt[2])), pt_s) end
      for i, g in ipairs(grads) do
        local want = prog.argt[i] == "N" and "number" or prog.argt[i] == "array" and "table" .. prog.args[i] or
                     (prog.args[i] == "vec3" and "vec3" or "mat3")
        if shape(g) ~= want then
          finding("gradient shape", fmt("gradient %d is a %s, expected a %s (the argument's shape)", i, shape(g), want), pt_s)
        end
      end
      if gn then
        if not gn[1] then finding("native/tape error", "the native gradient raised where the tape's runs: " .. tostring(gn[2]), pt_s)
        else
          compare_bits("native/tape bits", gn[2], gt[2], pt_s, "gradient's value")
          for i = 1, #grads do compare_bits("native/tape bits", gn[2 + i], grads[i], pt_s, "gradient " .. i) end
        end
      end
      if not rv[1] then
        if vref ~= nil and not unclean(rv[2]) then
          finding("reverse error", "lf.autodiff.reverse.gradient raised where the compiled gradient is " .. show(grads) ..
                  ": " .. tostring(rv[2]), pt_s)
        end
        stats.reverse_skipped = stats.reverse_skipped + 1
      else
        local gscale = math.max(scale or 0, maxabs(flatten(grads)))
        compare_tol("value vs reverse", gt[2], rv[2], TOL_REVERSE, scale or 0, pt_s, "value", {"compiled", "reverse.gradient"})
        for i = 1, #grads do
          compare_tol("gradient vs reverse", grads[i], rv[2 + i], TOL_REVERSE, gscale, pt_s, "gradient " .. i, {"compiled", "reverse.gradient"})
        end
      end
      -- central differences (every 2nd program, two points: cheap on the tape)
      -- (not where a condition sits at its tie: an equality may hold at the point alone, and the
      -- differences see the other branch on both sides; seed 501, program 1658)
      if prog.index % 2 == 0 and j <= 2 and plain_why ~= "a condition near its tie" then
        check_fd(prog, ft, pt, P, grads, scale or 0, r, pt_s)
      end
    end
    ::next_point::
  end
  -- evaluations leave no state behind: the first point again gives the same bits
  if first_value[1] ~= nil then
    local ok, v = pcall(call, ft, prog, pts[1], P)
    if ok then compare_bits("repeat", v, first_value[1], show_point(prog, pts[1]), "value", {"again", "first"}) end
    if fnat then
      ok, v = pcall(call, fnat, prog, pts[1], P)
      if ok and first_native then compare_bits("repeat", v, first_native, show_point(prog, pts[1]), "value", {"native again", "native first"}) end
    end
  end
  if prog.mode == "potential" then check_bodies(prog, pts, fnat ~= nil)
  elseif BODY_ARGS[prog.mode] then check_bodies_x(prog, ft, pts, fnat ~= nil)
  elseif FORCING_ARGS[prog.mode] then check_forcing(prog, pts, fnat ~= nil) end
end

-- ------------------------------------------------------------------ the run
local log = opt.log and assert(io.open(opt.log, "w"))
if log then
  log:setvbuf("line")
  log:write(fmt("-- graph_fuzz log, seed %d (each program before it is checked)\n", opt.seed))
end
cur.log = log
local first, last = 1, opt.programs
if opt.only then first, last = opt.only, opt.only end
local i = first
while i <= last do
  if clock() - t_start > opt.seconds then break end
  local prog = generate(i)
  local use_native = have_native and (opt.only ~= nil or i % opt.native_every == 1 % opt.native_every)
  cur.index, cur.src = i, prog.src
  if log then log:write(fmt("-- program %d (%s%s)\n%s\n", i, prog.mode, use_native and ", native" or "", prog.src)) end
  if opt.verbose or opt.only then
    io.stderr:write(fmt("program %d (%s, args %s%s):\n%s\n", i, prog.mode, show(prog.args),
                        prog.params and ", params " .. show(prog.params) or "", prog.src))
  end
  stats.programs = stats.programs + 1
  local ok, err = xpcall(check_program, debug.traceback, prog, use_native)
  if not ok then finding("fuzzer error", "the fuzzer itself failed (a bug in graph_fuzz.lua or an unexpected value): " .. tostring(err)) end
  i = i + 1
end
if log then log:close() end

if nfindings > MAX_PRINTED then print(fmt("(%d more findings not printed)", nfindings - MAX_PRINTED)) end
local kinds = {}
for k, n in pairs(bykind) do kinds[#kinds + 1] = fmt("%s: %d", k, n) end
table.sort(kinds)
io.stderr:write(fmt("graph_fuzz: %d native compiles (%d too large, %d compiler timeouts), %d refusals as expected, " ..
                    "%d invalid programs, %d bodies (%d configurations of bodies that translate compared, %d skipped), " ..
                    "%d forcings (%d runs compared, %d skipped), " ..
                    "%d gradient checks by differences (%d skipped), plain comparisons " ..
                    "skipped at %d points (%d near a tie, %d ill-conditioned), operations %d (largest %d), %.1f s%s\n",
                    stats.native, stats.too_large, stats.cc_timeout, stats.refused, stats.invalid, stats.bodies,
                    stats.body_points, stats.bodies_skipped, stats.forcings, stats.forcing_runs, stats.forcing_skipped, stats.fd,
                    stats.fd_skipped, stats.plain_skipped, stats.ties, stats.ill,
                    stats.nodes, stats.max_nodes,
                    clock() - t_start, #kinds > 0 and "; findings: " .. table.concat(kinds, ", ") or ""))
local known = {}
for id, n in pairs(known_count) do known[#known + 1] = fmt("%s %d", id, n) end
table.sort(known)
print(fmt("graph_fuzz: seed %d, %d programs, %d points, %s, %d finding(s)%s", opt.seed, stats.programs, stats.points,
          have_native and "native" or "tape-only", nfindings,
          #known > 0 and " (known bugs, not counted: " .. table.concat(known, ", ") .. ")" or ""))
os.exit(nfindings > 0 and 1 or 0)
