-- lieflow.reverse — reverse-mode automatic differentiation: a tape over one evaluation of a function,
-- then one backward sweep gives its gradient with respect to all its arguments at once.
--
-- Why: forward mode (lieflow.autodiff) carries three directions and re-evaluates U once per body, so
-- the torques of a pair potential of n bodies cost O(n) evaluations of U. Reverse mode records one
-- evaluation on a tape and sweeps it backward once: every body's torque for a small constant times
-- one evaluation of U, for any n.
--
-- Tape values have the granularity of the user's types: a tape scalar, a tape vec3, a tape mat3 (not
-- one node per entry). Each operation computes its value, appends one node to the current tape and
-- has a backward rule that adds its adjoint into its arguments' adjoints (C = A B: gA += gC B^T,
-- gB += A^T gC; y = A x: gA += g x^T, gx += A^T g; ...). The surface is that of the forward-mode
-- duals and of the C lf.vec3 / lf.mat3 userdata: indexing v[i], v.x, M[i][j], the methods dot cross
-- norm normalized T det trace inv totable row col copy, arithmetic with numbers, tape values, C
-- userdata and plain Lua tables, the math functions of lf.math (rev.math) and so3.exp / log / cay /
-- hat / vee / dist / angle (through the C functions, which hand tape values to the table in the
-- metatables' field __lf_dual).
--
-- A node is one Lua table with an array part; values and adjoints are Lua numbers inside it. Measured
-- on this project's machine, a call from Lua into C costs 50-200 ns, more than the few flops of a 3x3
-- operation in Lua, and every C result allocates a userdata: nodes holding C values made the backward
-- sweep alone cost 6-11 plain evaluations of U, nodes of numbers 1-2 (see bench/autodiff.lua). Nodes
-- are chained (each holds the previous node of its tape and its backward rule), so recording is one
-- table constructor per operation and the sweep walks the chain from the last node.
-- Layouts (slots 1..3 of vectors and matrices stay empty, so that v[i] and M[i] reach __index; they
-- then cache the component / row node there):
--   scalar: {value, adjoint, owner, prev, backward, operands and partial derivatives from 6}
--   vec3:   {_, _, _, prev, backward, x1 x2 x3 (6..8), g1 g2 g3 (9..11), owner (12), extras from 13}
--   mat3:   {_, _, _, prev, backward, m11 .. m33 (6..14, row-major), g11 .. g33 (15..23), owner (24),
--            extras from 25}
-- `owner` is the tape the node belongs to: a node used outside its evaluation is an error, not a
-- wrong derivative. Adjoints start at 0; a node whose adjoint is still 0 is skipped by the sweep.
--
-- Tape values are immutable (assigning v.x = ... is an error: build a new vector). Comparisons
-- (<, <=) compare values; `s == 0` for a tape scalar s is false, as for forward-mode duals.
-- Singular points: where a partial derivative is infinite (sqrt and |v| at 0, asin/acos at +-1,
-- x^b with b < 1 at 0) the rule propagates 0, a subgradient; forward mode does the same along the
-- directions in which the argument does not change. Everything else non-finite reaches the result,
-- where it is an error.

local core = require "lieflow.core"

local type, getmetatable, setmetatable, rawget, rawset, rawlen, error, tostring, pcall, select =
    type, getmetatable, setmetatable, rawget, rawset, rawlen, error, tostring, pcall, select
local msqrt, mexp, mlog, msin, mcos, mtan, masin, macos, matan, mabs =
    math.sqrt, math.exp, math.log, math.sin, math.cos, math.tan, math.asin, math.acos, math.atan, math.abs
local fmt = string.format
local huge = math.huge

local cvec3, cmat3 = core.vec3, core.mat3
local VEC3_MT = getmetatable(cvec3 { 0, 0, 0 })
local MAT3_MT = getmetatable(cmat3())
local vtotable, mtotable = VEC3_MT.methods.totable, MAT3_MT.methods.totable

local RS = { __name = "lf.reverse" }      -- scalar
local RV = { __name = "lf.reverse.vec3" } -- vec3
local RM = { __name = "lf.reverse.mat3" } -- mat3
local DISPATCH = {}                       -- what the C functions call with tape arguments
RS.__lf_dual, RV.__lf_dual, RM.__lf_dual = DISPATCH, DISPATCH, DISPATCH

-- Slots (see the layouts above). Scalars: value, adjoint, owner; every node: prev, backward.
local VAL <const>, ADJ <const>, OWN <const>, PREV <const>, BACK <const> = 1, 2, 3, 4, 5
local SA <const>, SDA <const>, SB <const>, SDB <const> = 6, 7, 8, 9 -- unary / binary scalar operations
local VX <const>, VG <const>, VOWN <const>, VE <const> = 6, 9, 12, 13 -- vec3 value, adjoint, owner, extras
local MX <const>, MG <const>, MOWN <const>, ME <const> = 6, 15, 24, 25 -- mat3 (entry (i,j): MX + 3(i-1) + j-1)

-- The tape being recorded: its owner token and its last node (false: none yet; never nil, so that
-- reading the slot `prev` of a first node does not reach __index).
local cur, last = nil, false

local rev = {}

-- ================================================================ errors

local function typename(x)
    local mt = getmetatable(x)
    if type(mt) == "table" and type(rawget(mt, "__name")) == "string" then return mt.__name end
    return type(x)
end

local function is_forward(x)
    local mt = getmetatable(x)
    return type(x) == "table" and type(mt) == "table" and rawget(mt, "__lf_dual") == true
end

local function stale()
    if cur == nil then
        error("a reverse-mode autodiff value was used after its evaluation ended (was a value computed from " ..
            "U's arguments kept after U returned?)", 3)
    end
    error("a reverse-mode autodiff value of another evaluation was used (kept from an earlier call of U, or " ..
        "from an outer gradient computation)", 3)
end

-- The owner slot of a node made outside any evaluation (an operation called by hand on plain values,
-- e.g. getmetatable(v).__mul(lf.vec3{...}, lf.vec3{...})) is empty: reading it reaches __index, which
-- reports this (level 3: the caller of the operation that read it).
local function outside()
    error("a reverse-mode autodiff value made outside an evaluation of U (an operation called by hand on plain " ..
        "values) cannot be used: reverse-mode values exist only while their function is being differentiated", 3)
end

local function operr(op, a, b)
    if is_forward(a) or is_forward(b) then
        error(fmt("cannot mix forward-mode and reverse-mode autodiff values ('%s' on %s and %s)", op, typename(a),
            typename(b)), 3)
    end
    error(fmt("attempt to perform '%s' on %s and %s (numbers, vec3 or mat3 expected)", op, typename(a),
        typename(b)), 3)
end

-- ================================================================ scalars

-- scalar node {value, adjoint, owner, prev, back, a, da [, b, db]}: a unary / binary function with its
-- partial derivatives da, db at the value (numbers), a and b tape scalars
local function back1(nd)
    local g = nd[ADJ]
    if g ~= 0 then
        local a = nd[SA]
        a[ADJ] = a[ADJ] + g * nd[SDA]
    end
end

local function back2(nd)
    local g = nd[ADJ]
    if g ~= 0 then
        local a, b = nd[SA], nd[SB]
        a[ADJ] = a[ADJ] + g * nd[SDA]
        b[ADJ] = b[ADJ] + g * nd[SDB]
    end
end

local function unary(a, v, da)
    local nd = setmetatable({ v, 0, cur, last, back1, a, da }, RS)
    last = nd
    return nd
end

local function binary(a, b, v, da, db)
    local nd = setmetatable({ v, 0, cur, last, back2, a, da, b, db }, RS)
    last = nd
    return nd
end

-- The value of a scalar operand (number or tape scalar of this tape), or nil if it is neither.
local function sval(x)
    if type(x) == "number" then return x end
    if getmetatable(x) == RS then
        if x[OWN] ~= cur then stale() end
        return x[VAL]
    end
    return nil
end

-- f(a) with f(a) = v, f'(a) = d for a tape scalar a; a number a gives v. A partial derivative that
-- is infinite at a singular point becomes 0 (see the header).
local function lift(a, v, d)
    if type(a) == "number" then return v end
    return unary(a, v, d)
end

local function lift_singular(a, v, d)
    if d == huge or d == -huge then d = 0 end
    return lift(a, v, d)
end

-- ================================================================ reading operands

-- kind: 1 scalar, 3 vec3-like, 9 mat3-like, false for a forward-mode value, nil otherwise.
local function kind(x)
    local tx = type(x)
    if tx == "number" then return 1 end
    local mt = getmetatable(x)
    if mt == RS then return 1 end
    if mt == RV or mt == VEC3_MT then return 3 end
    if mt == RM or mt == MAT3_MT then return 9 end
    if tx == "table" then
        if type(mt) == "table" and rawget(mt, "__lf_dual") ~= nil then return false end
        local n = rawlen(x)
        if n == 3 then
            local f = rawget(x, 1)
            if type(f) == "number" or getmetatable(f) == RS then return 3 end
            return 9
        elseif n == 9 then
            return 9
        end
    end
    return nil
end

-- An error reported at the user's line: the first stack level outside the autodiff modules and C
-- (an operation on tape values runs inside this file, autodiff.lua or a C function that dispatched
-- to it). lieflow.autodiff uses it too.
local function raise_at_caller(msg)
    local level = 2
    while true do
        local info = debug.getinfo(level, "S")
        if not info then
            level = 0
            break
        end
        if info.what ~= "C" and not info.source:find("lieflow/autodiff%.lua$") and
            not info.source:find("lieflow/reverse%.lua$") then
            break
        end
        level = level + 1
    end
    error(msg, level)
end

-- Like lf.vec3 and lf.mat3, tape vectors and matrices hold finite values only: an operation whose
-- result overflows (or is NaN) is an error, as it is for the C values (x - x is 0 only for finite x).
-- Tape scalars follow Lua's numbers; dot, det and trace refuse an overflow as the C methods do.
local function nonfinite(what)
    raise_at_caller(fmt("%s: the result has a non-finite component; vec3 and mat3 of autodiff values hold " ..
        "finite numbers only, as lf.vec3 and lf.mat3 do", what))
end
local function finite_result(v, what)
    if v - v ~= 0 then raise_at_caller(fmt("%s: the result overflows (%s)", what, tostring(v))) end
end

-- a vec3 node with value (v1, v2, v3), backward rule bw and extra slots
local function vnew(v1, v2, v3, bw, ...)
    if (v1 - v1) + (v2 - v2) + (v3 - v3) ~= 0 then nonfinite("lf.reverse.vec3") end
    local nd = setmetatable({ nil, nil, nil, last, bw, v1, v2, v3, 0, 0, 0, cur, ... }, RV)
    last = nd
    return nd
end

local function mnew(m1, m2, m3, m4, m5, m6, m7, m8, m9, bw, ...)
    if (m1 - m1) + (m2 - m2) + (m3 - m3) + (m4 - m4) + (m5 - m5) + (m6 - m6) + (m7 - m7) + (m8 - m8) + (m9 - m9) ~= 0 then
        nonfinite("lf.reverse.mat3")
    end
    local nd = setmetatable({ nil, nil, nil, last, bw, m1, m2, m3, m4, m5, m6, m7, m8, m9,
        0, 0, 0, 0, 0, 0, 0, 0, 0, cur, ... }, RM)
    last = nd
    return nd
end

-- vec3 built from three scalars: extras s1, s2, s3 (tape scalars or false)
local function back_pack3(nd)
    local g1, g2, g3 = nd[VG], nd[VG + 1], nd[VG + 2]
    if g1 == 0 and g2 == 0 and g3 == 0 then return end
    local s = nd[VE]
    if s then s[ADJ] = s[ADJ] + g1 end
    s = nd[VE + 1]
    if s then s[ADJ] = s[ADJ] + g2 end
    s = nd[VE + 2]
    if s then s[ADJ] = s[ADJ] + g3 end
end

local function scalar_entry(e, i, what)
    if type(e) == "number" then return e, false end
    if getmetatable(e) == RS then
        if e[OWN] ~= cur then stale() end
        return e[VAL], e
    end
    if is_forward(e) then
        error(fmt("%s: cannot mix forward-mode and reverse-mode autodiff values (entry %d is %s)", what, i,
            typename(e)), 4)
    end
    error(fmt("%s: entry %d is %s, expected a number", what, i, typename(e)), 4)
end

-- the node (nil if all three are numbers) and values of a vector of three scalars
local function pack3(a, b, c, what)
    local v1, s1 = scalar_entry(a, 1, what)
    local v2, s2 = scalar_entry(b, 2, what)
    local v3, s3 = scalar_entry(c, 3, what)
    if not (s1 or s2 or s3) then return nil, v1, v2, v3 end
    return vnew(v1, v2, v3, back_pack3, s1, s2, s3), v1, v2, v3
end

-- A vec3 operand: its node (nil for a constant) and its three values.
local function vread(x, what)
    local mt = getmetatable(x)
    if mt == RV then
        if x[VOWN] ~= cur then stale() end
        return x, x[VX], x[VX + 1], x[VX + 2]
    elseif mt == VEC3_MT then
        local t = vtotable(x)
        return nil, t[1], t[2], t[3]
    elseif type(x) == "table" and (type(mt) ~= "table" or rawget(mt, "__lf_dual") == nil) and rawlen(x) == 3 then
        local a, b, c = rawget(x, 1), rawget(x, 2), rawget(x, 3)
        if type(a) == "number" and type(b) == "number" and type(c) == "number" then return nil, a, b, c end
        return pack3(a, b, c, what or "vec3")
    end
    if is_forward(x) then
        error(fmt("%s: cannot mix forward-mode and reverse-mode autodiff values (got %s)", what or "vec3",
            typename(x)), 3)
    end
    error(fmt("%s: vec3 or table of 3 numbers expected, got %s", what or "vec3", typename(x)), 3)
end

-- mat3 built from three rows: extras r1, r2, r3 (vec3 nodes or false)
local function back_packrows(nd)
    for i = 0, 2 do
        local r = nd[ME + i]
        if r then
            local o = MG + 3 * i
            r[VG], r[VG + 1], r[VG + 2] = r[VG] + nd[o], r[VG + 1] + nd[o + 1], r[VG + 2] + nd[o + 2]
        end
    end
end

-- A mat3 operand: its node (nil for a constant) and its nine values (row-major).
local function mread(x, what)
    local mt = getmetatable(x)
    if mt == RM then
        if x[MOWN] ~= cur then stale() end
        return x, x[MX], x[MX + 1], x[MX + 2], x[MX + 3], x[MX + 4], x[MX + 5], x[MX + 6], x[MX + 7], x[MX + 8]
    elseif mt == MAT3_MT then
        local t = mtotable(x)
        local r1, r2, r3 = t[1], t[2], t[3]
        return nil, r1[1], r1[2], r1[3], r2[1], r2[2], r2[3], r3[1], r3[2], r3[3]
    elseif type(x) == "table" and (type(mt) ~= "table" or rawget(mt, "__lf_dual") == nil) then
        what = what or "mat3"
        local n = rawlen(x)
        local rows = x
        if n == 9 then
            rows = { { x[1], x[2], x[3] }, { x[4], x[5], x[6] }, { x[7], x[8], x[9] } }
        elseif n ~= 3 then
            error(fmt("%s: mat3, 9 numbers or 3 rows of 3 expected, got a table of length %d", what, n), 3)
        end
        local A1, a1, a2, a3 = vread(rows[1], what .. " row 1")
        local A2, a4, a5, a6 = vread(rows[2], what .. " row 2")
        local A3, a7, a8, a9 = vread(rows[3], what .. " row 3")
        if not (A1 or A2 or A3) then return nil, a1, a2, a3, a4, a5, a6, a7, a8, a9 end
        return mnew(a1, a2, a3, a4, a5, a6, a7, a8, a9, back_packrows, A1 or false, A2 or false, A3 or false),
            a1, a2, a3, a4, a5, a6, a7, a8, a9
    end
    if is_forward(x) then
        error(fmt("%s: cannot mix forward-mode and reverse-mode autodiff values (got %s)", what or "mat3",
            typename(x)), 3)
    end
    error(fmt("%s: mat3 or table (9 numbers or 3 rows) expected, got %s", what or "mat3", typename(x)), 3)
end

-- ================================================================ vector and matrix operations

-- A + s B for two vectors: extras A, B (nodes or false), s
local function back_vlin(nd)
    local g1, g2, g3 = nd[VG], nd[VG + 1], nd[VG + 2]
    if g1 == 0 and g2 == 0 and g3 == 0 then return end
    local A, B = nd[VE], nd[VE + 1]
    if A then A[VG], A[VG + 1], A[VG + 2] = A[VG] + g1, A[VG + 1] + g2, A[VG + 2] + g3 end
    if B then
        local s = nd[VE + 2]
        B[VG], B[VG + 1], B[VG + 2] = B[VG] + s * g1, B[VG + 1] + s * g2, B[VG + 2] + s * g3
    end
end

-- the same for two matrices
local function back_mlin(nd)
    local A, B, s = nd[ME], nd[ME + 1], nd[ME + 2]
    for k = MG, MG + 8 do
        local g = nd[k]
        if g ~= 0 then
            if A then A[k] = A[k] + g end
            if B then B[k] = B[k] + s * g end
        end
    end
end

-- x + s y (s = 1 or -1) for vectors or matrices
local function lin(x, y, s, op)
    local mx, my = getmetatable(x), getmetatable(y)
    if mx == RV and my == RV then -- the common case first
        if x[VOWN] ~= cur or y[VOWN] ~= cur then stale() end
        local v1, v2, v3 = x[VX] + s * y[VX], x[VX + 1] + s * y[VX + 1], x[VX + 2] + s * y[VX + 2]
        if (v1 - v1) + (v2 - v2) + (v3 - v3) ~= 0 then nonfinite(s > 0 and "'+'" or "'-'") end
        local nd = setmetatable({ nil, nil, nil, last, back_vlin, v1, v2, v3, 0, 0, 0, cur, x, y, s }, RV)
        last = nd
        return nd
    end
    local kx, ky = kind(x), kind(y)
    if kx == 3 and ky == 3 then
        local A, a1, a2, a3 = vread(x)
        local B, b1, b2, b3 = vread(y)
        return vnew(a1 + s * b1, a2 + s * b2, a3 + s * b3, back_vlin, A or false, B or false, s)
    elseif kx == 9 and ky == 9 then
        local A, a1, a2, a3, a4, a5, a6, a7, a8, a9 = mread(x)
        local B, b1, b2, b3, b4, b5, b6, b7, b8, b9 = mread(y)
        return mnew(a1 + s * b1, a2 + s * b2, a3 + s * b3, a4 + s * b4, a5 + s * b5, a6 + s * b6, a7 + s * b7,
            a8 + s * b8, a9 + s * b9, back_mlin, A or false, B or false, s)
    end
    if kx and ky then
        error(fmt("attempt to perform '%s' on %s and %s (operands must both be vec3 or both mat3)", op,
            typename(x), typename(y)), 3)
    end
    operr(op, x, y)
end

-- s x for a scalar s and a vector x: extras S, X (nodes or false), s, x1, x2, x3
local function back_vscale(nd)
    local g1, g2, g3 = nd[VG], nd[VG + 1], nd[VG + 2]
    if g1 == 0 and g2 == 0 and g3 == 0 then return end
    local S, X, s = nd[VE], nd[VE + 1], nd[VE + 2]
    if X then X[VG], X[VG + 1], X[VG + 2] = X[VG] + s * g1, X[VG + 1] + s * g2, X[VG + 2] + s * g3 end
    if S then S[ADJ] = S[ADJ] + g1 * nd[VE + 3] + g2 * nd[VE + 4] + g3 * nd[VE + 5] end
end

-- s X for a matrix: extras S, X, s, x11 .. x33
local function back_mscale(nd)
    local S, X, s = nd[ME], nd[ME + 1], nd[ME + 2]
    local gs = 0
    for k = 0, 8 do
        local g = nd[MG + k]
        if g ~= 0 then
            if X then X[MG + k] = X[MG + k] + s * g end
            gs = gs + g * nd[ME + 3 + k]
        end
    end
    if S then S[ADJ] = S[ADJ] + gs end
end

local function scale(s, x, kx)
    local sv = sval(s)
    local S = type(s) ~= "number" and s or false
    if kx == 3 then
        local X, x1, x2, x3 = vread(x)
        return vnew(sv * x1, sv * x2, sv * x3, back_vscale, S, X or false, sv, x1, x2, x3)
    end
    local X, a1, a2, a3, a4, a5, a6, a7, a8, a9 = mread(x)
    return mnew(sv * a1, sv * a2, sv * a3, sv * a4, sv * a5, sv * a6, sv * a7, sv * a8, sv * a9, back_mscale,
        S, X or false, sv, a1, a2, a3, a4, a5, a6, a7, a8, a9)
end

-- y = A x: extras A, X (nodes or false), a11 .. a33, x1 x2 x3; gA_ij += g_i x_j, gx += A^T g
local function back_matvec(nd)
    local g1, g2, g3 = nd[VG], nd[VG + 1], nd[VG + 2]
    if g1 == 0 and g2 == 0 and g3 == 0 then return end
    local A, X = nd[VE], nd[VE + 1]
    local a = VE + 2 -- a_ij at a + 3(i-1) + j-1
    if A then
        local x1, x2, x3 = nd[a + 9], nd[a + 10], nd[a + 11]
        A[MG], A[MG + 1], A[MG + 2] = A[MG] + g1 * x1, A[MG + 1] + g1 * x2, A[MG + 2] + g1 * x3
        A[MG + 3], A[MG + 4], A[MG + 5] = A[MG + 3] + g2 * x1, A[MG + 4] + g2 * x2, A[MG + 5] + g2 * x3
        A[MG + 6], A[MG + 7], A[MG + 8] = A[MG + 6] + g3 * x1, A[MG + 7] + g3 * x2, A[MG + 8] + g3 * x3
    end
    if X then
        X[VG] = X[VG] + nd[a] * g1 + nd[a + 3] * g2 + nd[a + 6] * g3
        X[VG + 1] = X[VG + 1] + nd[a + 1] * g1 + nd[a + 4] * g2 + nd[a + 7] * g3
        X[VG + 2] = X[VG + 2] + nd[a + 2] * g1 + nd[a + 5] * g2 + nd[a + 8] * g3
    end
end

local function matvec(a, x)
    local A, a1, a2, a3, a4, a5, a6, a7, a8, a9 = mread(a)
    local X, x1, x2, x3 = vread(x)
    return vnew(a1 * x1 + a2 * x2 + a3 * x3, a4 * x1 + a5 * x2 + a6 * x3, a7 * x1 + a8 * x2 + a9 * x3,
        back_matvec, A or false, X or false, a1, a2, a3, a4, a5, a6, a7, a8, a9, x1, x2, x3)
end

-- y = x^T A (row vector times matrix), y_j = sum_i x_i A_ij: extras X, A, x1 x2 x3, a11 .. a33;
-- gx += A g, gA_ij += x_i g_j
local function back_vecmat(nd)
    local g1, g2, g3 = nd[VG], nd[VG + 1], nd[VG + 2]
    if g1 == 0 and g2 == 0 and g3 == 0 then return end
    local X, A = nd[VE], nd[VE + 1]
    local a = VE + 5
    if X then
        X[VG] = X[VG] + nd[a] * g1 + nd[a + 1] * g2 + nd[a + 2] * g3
        X[VG + 1] = X[VG + 1] + nd[a + 3] * g1 + nd[a + 4] * g2 + nd[a + 5] * g3
        X[VG + 2] = X[VG + 2] + nd[a + 6] * g1 + nd[a + 7] * g2 + nd[a + 8] * g3
    end
    if A then
        for i = 0, 2 do
            local xi, o = nd[VE + 2 + i], MG + 3 * i
            A[o], A[o + 1], A[o + 2] = A[o] + xi * g1, A[o + 1] + xi * g2, A[o + 2] + xi * g3
        end
    end
end

local function vecmat(x, a)
    local X, x1, x2, x3 = vread(x)
    local A, a1, a2, a3, a4, a5, a6, a7, a8, a9 = mread(a)
    return vnew(x1 * a1 + x2 * a4 + x3 * a7, x1 * a2 + x2 * a5 + x3 * a8, x1 * a3 + x2 * a6 + x3 * a9,
        back_vecmat, X or false, A or false, x1, x2, x3, a1, a2, a3, a4, a5, a6, a7, a8, a9)
end

-- C = A B: extras A, B, a11 .. a33, b11 .. b33; gA += G B^T, gB += A^T G
local function back_matmul(nd)
    local A, B = nd[ME], nd[ME + 1]
    local a, b = ME + 2, ME + 11 -- entry (i,k) at a + 3i + k (0-based i, k)
    for i = 0, 2 do
        for j = 0, 2 do
            local g = nd[MG + 3 * i + j]
            if g ~= 0 then
                -- C_ij = sum_k A_ik B_kj
                for k = 0, 2 do
                    if A then
                        local s = MG + 3 * i + k
                        A[s] = A[s] + g * nd[b + 3 * k + j]
                    end
                    if B then
                        local s = MG + 3 * k + j
                        B[s] = B[s] + nd[a + 3 * i + k] * g
                    end
                end
            end
        end
    end
end

local function matmul(a, b)
    local A, a1, a2, a3, a4, a5, a6, a7, a8, a9 = mread(a)
    local B, b1, b2, b3, b4, b5, b6, b7, b8, b9 = mread(b)
    return mnew(a1 * b1 + a2 * b4 + a3 * b7, a1 * b2 + a2 * b5 + a3 * b8, a1 * b3 + a2 * b6 + a3 * b9,
        a4 * b1 + a5 * b4 + a6 * b7, a4 * b2 + a5 * b5 + a6 * b8, a4 * b3 + a5 * b6 + a6 * b9,
        a7 * b1 + a8 * b4 + a9 * b7, a7 * b2 + a8 * b5 + a9 * b8, a7 * b3 + a8 * b6 + a9 * b9,
        back_matmul, A or false, B or false, a1, a2, a3, a4, a5, a6, a7, a8, a9, b1, b2, b3, b4, b5, b6, b7, b8, b9)
end

-- a . b: scalar {v, g, owner, prev, back, A, B, a1 a2 a3, b1 b2 b3}
local function back_dot(nd)
    local g = nd[ADJ]
    if g == 0 then return end
    local A, B = nd[6], nd[7]
    if A then A[VG], A[VG + 1], A[VG + 2] = A[VG] + g * nd[11], A[VG + 1] + g * nd[12], A[VG + 2] + g * nd[13] end
    if B then B[VG], B[VG + 1], B[VG + 2] = B[VG] + g * nd[8], B[VG + 1] + g * nd[9], B[VG + 2] + g * nd[10] end
end

local function dot(a, b)
    local A, a1, a2, a3, B, b1, b2, b3
    if getmetatable(a) == RV then -- the common case v:dot(w) without vread's calls
        if a[VOWN] ~= cur then stale() end
        A, a1, a2, a3 = a, a[VX], a[VX + 1], a[VX + 2]
    else
        A, a1, a2, a3 = vread(a, "dot")
    end
    local mb = getmetatable(b)
    if mb == RV then
        if b[VOWN] ~= cur then stale() end
        B, b1, b2, b3 = b, b[VX], b[VX + 1], b[VX + 2]
    elseif mb == VEC3_MT then
        local t = vtotable(b)
        b1, b2, b3 = t[1], t[2], t[3]
    else
        B, b1, b2, b3 = vread(b, "dot")
    end
    local v = a1 * b1 + a2 * b2 + a3 * b3
    finite_result(v, "vec3:dot")
    if not (A or B) then return v end
    local nd = setmetatable({ v, 0, cur, last, back_dot, A or false, B or false, a1, a2, a3, b1, b2, b3 }, RS)
    last = nd
    return nd
end

-- a x b: extras A, B, a1 a2 a3, b1 b2 b3; ga += b x g, gb += g x a
local function back_cross(nd)
    local g1, g2, g3 = nd[VG], nd[VG + 1], nd[VG + 2]
    if g1 == 0 and g2 == 0 and g3 == 0 then return end
    local A, B = nd[VE], nd[VE + 1]
    if A then
        local b1, b2, b3 = nd[VE + 5], nd[VE + 6], nd[VE + 7]
        A[VG], A[VG + 1], A[VG + 2] = A[VG] + (b2 * g3 - b3 * g2), A[VG + 1] + (b3 * g1 - b1 * g3),
            A[VG + 2] + (b1 * g2 - b2 * g1)
    end
    if B then
        local a1, a2, a3 = nd[VE + 2], nd[VE + 3], nd[VE + 4]
        B[VG], B[VG + 1], B[VG + 2] = B[VG] + (g2 * a3 - g3 * a2), B[VG + 1] + (g3 * a1 - g1 * a3),
            B[VG + 2] + (g1 * a2 - g2 * a1)
    end
end

local function cross(a, b)
    local A, a1, a2, a3 = vread(a, "cross")
    local B, b1, b2, b3 = vread(b, "cross")
    return vnew(a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1, back_cross, A or false, B or false,
        a1, a2, a3, b1, b2, b3)
end

-- |x| (vec3) and the Frobenius norm (mat3): scalar {n, g, owner, prev, back, X, x/n ...}; at x = 0 the
-- gradient is 0 (a subgradient)
local function back_vnorm(nd)
    local g = nd[ADJ]
    if g == 0 then return end
    local X = nd[6]
    X[VG], X[VG + 1], X[VG + 2] = X[VG] + g * nd[7], X[VG + 1] + g * nd[8], X[VG + 2] + g * nd[9]
end

local function back_mnorm(nd)
    local g = nd[ADJ]
    if g == 0 then return end
    local X = nd[6]
    for k = 0, 8 do X[MG + k] = X[MG + k] + g * nd[7 + k] end
end

-- The scale of entries whose squares would overflow (beyond 1e150) or underflow (below 1e-150, but not
-- 0): their largest magnitude, which the norms below divide by first, as C's scaled norm does; else 1.
local function norm_scale(...)
    local m = 0
    for i = 1, select("#", ...) do
        local x = mabs((select(i, ...)))
        if x > m then m = x end
    end
    if m > 1e150 or (m > 0 and m < 1e-150) then return m end
    return 1
end

local function vnorm(x)
    local X, x1, x2, x3 = vread(x, "norm")
    local n = msqrt(x1 * x1 + x2 * x2 + x3 * x3)
    local s = 1
    if not (n > 1e-150 and n < 1e150) then
        s = norm_scale(x1, x2, x3)
        if s ~= 1 then
            x1, x2, x3 = x1 / s, x2 / s, x3 / s
            n = msqrt(x1 * x1 + x2 * x2 + x3 * x3) -- of the scaled entries; the norm is s n
        end
    end
    if not X then return s * n end
    local r = n > 0 and 1 / n or 0 -- d|x| = x/|x| (scaled or not: the same unit vector)
    local nd = setmetatable({ s * n, 0, cur, last, back_vnorm, X, x1 * r, x2 * r, x3 * r }, RS)
    last = nd
    return nd
end

local function mnorm(x)
    local X, a1, a2, a3, a4, a5, a6, a7, a8, a9 = mread(x, "norm")
    -- the squares summed in row-major order, as in C
    local n = msqrt(a1 * a1 + a2 * a2 + a3 * a3 + a4 * a4 + a5 * a5 + a6 * a6 + a7 * a7 + a8 * a8 + a9 * a9)
    local s = 1
    if not (n > 1e-150 and n < 1e150) then
        s = norm_scale(a1, a2, a3, a4, a5, a6, a7, a8, a9)
        if s ~= 1 then
            a1, a2, a3, a4, a5, a6, a7, a8, a9 = a1 / s, a2 / s, a3 / s, a4 / s, a5 / s, a6 / s, a7 / s, a8 / s, a9 / s
            n = msqrt(a1 * a1 + a2 * a2 + a3 * a3 + a4 * a4 + a5 * a5 + a6 * a6 + a7 * a7 + a8 * a8 + a9 * a9)
        end
    end
    if not X then return s * n end
    local r = n > 0 and 1 / n or 0
    local nd = setmetatable({ s * n, 0, cur, last, back_mnorm, X, a1 * r, a2 * r, a3 * r, a4 * r, a5 * r, a6 * r,
        a7 * r, a8 * r, a9 * r }, RS)
    last = nd
    return nd
end

local function norm(x)
    local k = kind(x)
    if k == 3 then return vnorm(x) end
    if k == 9 then return mnorm(x) end
    error(fmt("norm: vec3 or mat3 expected, got %s", typename(x)), 2)
end

-- A^T: extras A
local function back_transpose(nd)
    local A = nd[ME]
    for i = 0, 2 do
        for j = 0, 2 do
            local g = nd[MG + 3 * i + j]
            if g ~= 0 then
                local s = MG + 3 * j + i
                A[s] = A[s] + g
            end
        end
    end
end

local function transpose(a)
    local A, a1, a2, a3, a4, a5, a6, a7, a8, a9 = mread(a, "T")
    if not A then return cmat3 { a1, a4, a7, a2, a5, a8, a3, a6, a9 } end
    return mnew(a1, a4, a7, a2, a5, a8, a3, a6, a9, back_transpose, A)
end

-- det A: scalar {d, g, owner, prev, back, A, cofactors c11 .. c33}; d det / d a_ij = c_ij
local function back_det(nd)
    local g = nd[ADJ]
    if g == 0 then return end
    local A = nd[6]
    for k = 0, 8 do A[MG + k] = A[MG + k] + g * nd[7 + k] end
end

local function det(a)
    local A, a0, a1, a2, a3, a4, a5, a6, a7, a8 = mread(a, "det")
    -- a0 (a4 a8 - a5 a7) - a1 (a3 a8 - a5 a6) + a2 (a3 a7 - a4 a6), as in C
    local d = a0 * (a4 * a8 - a5 * a7) - a1 * (a3 * a8 - a5 * a6) + a2 * (a3 * a7 - a4 * a6)
    finite_result(d, "mat3:det")
    if not A then return d end
    local nd = setmetatable({ d, 0, cur, last, back_det, A,
        a4 * a8 - a5 * a7, a5 * a6 - a3 * a8, a3 * a7 - a4 * a6,
        a2 * a7 - a1 * a8, a0 * a8 - a2 * a6, a1 * a6 - a0 * a7,
        a1 * a5 - a2 * a4, a2 * a3 - a0 * a5, a0 * a4 - a1 * a3 }, RS)
    last = nd
    return nd
end

-- tr A: scalar {t, g, owner, prev, back, A}
local function back_trace(nd)
    local g = nd[ADJ]
    if g == 0 then return end
    local A = nd[6]
    A[MG], A[MG + 4], A[MG + 8] = A[MG] + g, A[MG + 4] + g, A[MG + 8] + g
end

local function trace(a)
    local A, a1, _, _, _, a5, _, _, _, a9 = mread(a, "trace")
    finite_result(a1 + a5 + a9, "mat3:trace")
    if not A then return a1 + a5 + a9 end
    local nd = setmetatable({ a1 + a5 + a9, 0, cur, last, back_trace, A }, RS)
    last = nd
    return nd
end

-- X = A^-1: extras A; dX = -X dA X, so gA = -X^T G X^T (X the node's own value)
local function back_inv(nd)
    local any = false
    for k = MG, MG + 8 do
        if nd[k] ~= 0 then any = true end
    end
    if not any then return end
    local A = nd[ME]
    for i = 0, 2 do
        for j = 0, 2 do
            -- (X^T G X^T)_ij = sum_kl X_ki G_kl X_jl
            local s = 0
            for k = 0, 2 do
                local xki = nd[MX + 3 * k + i]
                for l = 0, 2 do s = s + xki * nd[MG + 3 * k + l] * nd[MX + 3 * j + l] end
            end
            local o = MG + 3 * i + j
            A[o] = A[o] - s
        end
    end
end

local function inv(a)
    local A, a0, a1, a2, a3, a4, a5, a6, a7, a8 = mread(a, "inv")
    if not A then return cmat3 { a0, a1, a2, a3, a4, a5, a6, a7, a8 }:inv() end
    local d = a0 * (a4 * a8 - a5 * a7) - a1 * (a3 * a8 - a5 * a6) + a2 * (a3 * a7 - a4 * a6)
    if not (mabs(d) > 1e-300) then error("mat3:inv: the matrix is singular", 2) end
    return mnew((a4 * a8 - a5 * a7) / d, (a2 * a7 - a1 * a8) / d, (a1 * a5 - a2 * a4) / d,
        (a5 * a6 - a3 * a8) / d, (a0 * a8 - a2 * a6) / d, (a2 * a3 - a0 * a5) / d,
        (a3 * a7 - a4 * a6) / d, (a1 * a6 - a0 * a7) / d, (a0 * a4 - a1 * a3) / d, back_inv, A)
end

-- ================================================================ arithmetic metamethods
-- The scalar cases come first and build their node in place: a tape scalar meets a tape scalar most
-- often (U = U + term), then a number.

local function mul_general(x, y)
    local kx, ky = kind(x), kind(y)
    if kx == 1 then
        if ky == 3 or ky == 9 then return scale(x, y, ky) end
    elseif ky == 1 then
        if kx == 3 or kx == 9 then return scale(y, x, kx) end
    elseif kx == 9 then
        if ky == 9 then return matmul(x, y) end
        if ky == 3 then return matvec(x, y) end
    elseif kx == 3 then
        if ky == 9 then return vecmat(x, y) end
        if ky == 3 then error("attempt to multiply two vec3 (use v:dot(w) or v:cross(w))", 3) end
    end
    operr("*", x, y)
end

local function add(x, y)
    local mx, my = getmetatable(x), getmetatable(y)
    if mx == RS then
        if x[OWN] ~= cur then stale() end
        if my == RS then
            if y[OWN] ~= cur then stale() end
            local nd = setmetatable({ x[VAL] + y[VAL], 0, cur, last, back2, x, 1, y, 1 }, RS)
            last = nd
            return nd
        elseif type(y) == "number" then
            local nd = setmetatable({ x[VAL] + y, 0, cur, last, back1, x, 1 }, RS)
            last = nd
            return nd
        end
    elseif my == RS and type(x) == "number" then
        if y[OWN] ~= cur then stale() end
        local nd = setmetatable({ x + y[VAL], 0, cur, last, back1, y, 1 }, RS)
        last = nd
        return nd
    end
    return lin(x, y, 1, "+")
end

local function sub(x, y)
    local mx, my = getmetatable(x), getmetatable(y)
    if mx == RS then
        if x[OWN] ~= cur then stale() end
        if my == RS then
            if y[OWN] ~= cur then stale() end
            local nd = setmetatable({ x[VAL] - y[VAL], 0, cur, last, back2, x, 1, y, -1 }, RS)
            last = nd
            return nd
        elseif type(y) == "number" then
            local nd = setmetatable({ x[VAL] - y, 0, cur, last, back1, x, 1 }, RS)
            last = nd
            return nd
        end
    elseif my == RS and type(x) == "number" then
        if y[OWN] ~= cur then stale() end
        local nd = setmetatable({ x - y[VAL], 0, cur, last, back1, y, -1 }, RS)
        last = nd
        return nd
    end
    return lin(x, y, -1, "-")
end

local function mul(x, y)
    local mx, my = getmetatable(x), getmetatable(y)
    if mx == RS then
        if x[OWN] ~= cur then stale() end
        if my == RS then
            if y[OWN] ~= cur then stale() end
            local a, b = x[VAL], y[VAL]
            local nd = setmetatable({ a * b, 0, cur, last, back2, x, b, y, a }, RS)
            last = nd
            return nd
        elseif type(y) == "number" then
            local nd = setmetatable({ x[VAL] * y, 0, cur, last, back1, x, y }, RS)
            last = nd
            return nd
        end
    elseif my == RS and type(x) == "number" then
        if y[OWN] ~= cur then stale() end
        local nd = setmetatable({ x * y[VAL], 0, cur, last, back1, y, x }, RS)
        last = nd
        return nd
    end
    return mul_general(x, y)
end

-- x / y for scalars: partials 1/y and -x/y^2 = -q/y
local function sdiv(x, y)
    local a, c = sval(x), sval(y)
    if type(y) == "number" then return unary(x, a / c, 1 / c) end
    local q = a / c
    if type(x) == "number" then return unary(y, q, -q / c) end
    return binary(x, y, q, 1 / c, -q / c)
end

local function div(x, y)
    local mx, my = getmetatable(x), getmetatable(y)
    if mx == RS then
        if x[OWN] ~= cur then stale() end
        if my == RS then
            if y[OWN] ~= cur then stale() end
            local c = y[VAL]
            local q = x[VAL] / c
            local nd = setmetatable({ q, 0, cur, last, back2, x, 1 / c, y, -q / c }, RS)
            last = nd
            return nd
        elseif type(y) == "number" then
            local nd = setmetatable({ x[VAL] / y, 0, cur, last, back1, x, 1 / y }, RS)
            last = nd
            return nd
        end
    elseif my == RS and type(x) == "number" then
        if y[OWN] ~= cur then stale() end
        local c = y[VAL]
        local q = x / c
        local nd = setmetatable({ q, 0, cur, last, back1, y, -q / c }, RS)
        last = nd
        return nd
    end
    local kx, ky = kind(x), kind(y)
    if ky == 1 and (kx == 3 or kx == 9) then -- a vector or matrix over a scalar: x (1/y)
        return scale(type(y) == "number" and 1 / y or sdiv(1, y), x, kx)
    end
    if kx and ky then
        error(fmt("attempt to divide %s by %s (only vec3/mat3 divided by a number)", typename(x), typename(y)), 2)
    end
    operr("/", x, y)
end

local function unm(x)
    if type(x) == "number" then return -x end
    local k = kind(x)
    if k == 1 then
        if x[OWN] ~= cur then stale() end
        return unary(x, -x[VAL], -1)
    end
    if k == 3 or k == 9 then return scale(-1, x, k) end
    operr("-", x, x)
end

local function pow(a, b)
    if getmetatable(a) == RS and type(b) == "number" then -- x^c, the common case
        if a[OWN] ~= cur then stale() end
        local v = a[VAL]
        local d
        if b == 2 then
            d = 2 * v
        elseif b == 0 then
            return 1
        else
            d = b * v ^ (b - 1)
            if d == huge or d == -huge then d = 0 end -- singular (b < 1 at 0): see the header
        end
        local nd = setmetatable({ v ^ b, 0, cur, last, back1, a, d }, RS)
        last = nd
        return nd
    end
    local av, bv = sval(a), sval(b)
    if av == nil or bv == nil then
        if is_forward(a) or is_forward(b) then operr("^", a, b) end
        error(fmt("attempt to perform '^' on %s and %s (numbers expected)", typename(a), typename(b)), 2)
    end
    if type(b) == "number" then
        if b == 2 then return unary(a, av * av, 2 * av) end
        if b == 0 then return 1 end
        return lift_singular(a, av ^ b, b * av ^ (b - 1))
    end
    local p = av ^ bv
    -- d/db a^b = a^b log a; for a = 0 and b > 0 it is 0 (p log a would be 0 * -inf)
    local fb = (av == 0 and bv > 0) and 0 or p * mlog(av)
    if type(a) == "number" then return unary(b, p, fb) end
    local fa = bv * av ^ (bv - 1)
    if fa == huge or fa == -huge then fa = 0 end
    return binary(a, b, p, fa, fb)
end

local function cmpval(x, op)
    if type(x) == "number" then return x end
    if getmetatable(x) == RS then return x[VAL] end
    if is_forward(x) then
        error(fmt("cannot mix forward-mode and reverse-mode autodiff values (comparing with %s)", typename(x)), 3)
    end
    error(fmt("attempt to compare (%s) %s with a reverse-mode autodiff number", op, typename(x)), 3)
end

local function num(x)
    if type(x) ~= "number" then -- an entry replaced by hand: tape values are immutable by convention
        error(fmt("a reverse-mode autodiff value was modified by hand (an entry is %s, not a number)", typename(x)), 0)
    end
    if x == 0 then x = 0 end -- print -0 as 0
    return fmt("%.15g", x)
end

RS.__add, RS.__sub, RS.__mul, RS.__div, RS.__unm, RS.__pow = add, sub, mul, div, unm, pow
RS.__lt = function(a, b) return cmpval(a, "<") < cmpval(b, "<") end
RS.__le = function(a, b) return cmpval(a, "<=") <= cmpval(b, "<=") end
RS.__eq = function(a, b) return getmetatable(a) == RS and getmetatable(b) == RS and a[VAL] == b[VAL] end
RS.__tostring = function(a)
    if getmetatable(a) ~= RS then error(fmt("__tostring: reverse-mode number expected, got %s", typename(a)), 2) end
    return fmt("reverse(%s)", num(a[VAL]))
end
RS.__index = function(_, k)
    if k == OWN then outside() end
    error(fmt("attempt to index a reverse-mode autodiff number (field '%s')", tostring(k)), 2)
end
RS.__newindex = RS.__index

-- ================================================================ components, rows, columns

-- v[i]: scalar {v_i, g, owner, prev, back, V, adjoint slot of V}
local function back_comp(nd)
    local g = nd[ADJ]
    if g == 0 then return end
    local V, s = nd[6], nd[7]
    V[s] = V[s] + g
end

local function component(v, i)
    local c = rawget(v, i)
    if c then return c end
    if v[VOWN] ~= cur then stale() end
    c = setmetatable({ v[VX - 1 + i], 0, cur, last, back_comp, v, VG - 1 + i }, RS)
    last = c
    rawset(v, i, c)
    return c
end

-- a row or column of M: extras M, its first adjoint slot, stride
local function back_line(nd)
    local g1, g2, g3 = nd[VG], nd[VG + 1], nd[VG + 2]
    if g1 == 0 and g2 == 0 and g3 == 0 then return end
    local M, s, d = nd[VE], nd[VE + 1], nd[VE + 2]
    M[s], M[s + d], M[s + 2 * d] = M[s] + g1, M[s + d] + g2, M[s + 2 * d] + g3
end

local function row(M, i)
    local r = rawget(M, i)
    if r then return r end
    if M[MOWN] ~= cur then stale() end
    local o = 3 * (i - 1)
    r = vnew(M[MX + o], M[MX + o + 1], M[MX + o + 2], back_line, M, MG + o, 1)
    rawset(M, i, r)
    return r
end

local function col(M, j)
    if M[MOWN] ~= cur then stale() end
    return vnew(M[MX + j - 1], M[MX + j + 2], M[MX + j + 5], back_line, M, MG + j - 1, 3)
end

local VM, MM = {}, {} -- methods of tape vectors and matrices
VM.dot, VM.cross, VM.norm = dot, cross, vnorm
function VM.normalized(v)
    local n = vnorm(v)
    if not (sval(n) > 0) then error("vec3:normalized: the zero vector has no direction", 2) end
    return scale(sdiv(1, n), v, 3)
end
function VM.totable(v) return { v[1], v[2], v[3] } end
function VM.copy(v) return v end -- tape values are immutable

MM.T, MM.det, MM.trace, MM.inv, MM.norm = transpose, det, trace, inv, mnorm
function MM.totable(M)
    local t = {}
    for i = 1, 3 do
        local r = M[i]
        t[i] = { r[1], r[2], r[3] }
    end
    return t
end
function MM.row(M, i)
    if i ~= 1 and i ~= 2 and i ~= 3 then error("bad argument #1 to 'row' (row index 1..3 expected)", 2) end
    return row(M, i)
end
function MM.col(M, j)
    if j ~= 1 and j ~= 2 and j ~= 3 then error("bad argument #1 to 'col' (column index 1..3 expected)", 2) end
    return col(M, j)
end
function MM.copy(M) return M end

local XYZ = { 1, 2, 3, x = 1, y = 2, z = 3 }

RV.__index = function(v, k)
    if getmetatable(v) ~= RV then error(fmt("__index: %s expected, got %s", RV.__name, typename(v)), 2) end
    if k == VOWN then outside() end
    local f = VM[k] -- methods first: components are found in the node once read
    if f ~= nil then return f end
    local i = XYZ[k]
    if i then return component(v, i) end
    if type(k) == "number" then error(fmt("vec3 index out of range: %s (expected 1, 2 or 3)", tostring(k)), 2) end
    return nil
end

RM.__index = function(M, k)
    if getmetatable(M) ~= RM then error(fmt("__index: %s expected, got %s", RM.__name, typename(M)), 2) end
    if k == MOWN then outside() end
    if k == 1 or k == 2 or k == 3 then return row(M, k) end
    local f = MM[k]
    if f ~= nil then return f end
    if type(k) == "number" then
        error(fmt("mat3 row index out of range: %s (expected 1, 2 or 3)", tostring(k)), 2)
    end
    return nil
end

local function immutable(x, k)
    error(fmt("%s is immutable: cannot set %s (build a new value, e.g. lf.vec3{v.x, v.y, 0}, or differentiate " ..
        "this potential in forward mode: autodiff = \"forward\")", typename(x), tostring(k)), 2)
end
RV.__newindex, RM.__newindex = immutable, immutable

RV.__add = function(x, y) return lin(x, y, 1, "+") end
-- v - w of two tape vectors in place (the pair term of a many-body U), else the general path
RV.__sub = function(x, y)
    if getmetatable(x) == RV and getmetatable(y) == RV then
        if x[VOWN] ~= cur or y[VOWN] ~= cur then stale() end
        local v1, v2, v3 = x[VX] - y[VX], x[VX + 1] - y[VX + 1], x[VX + 2] - y[VX + 2]
        if (v1 - v1) + (v2 - v2) + (v3 - v3) ~= 0 then nonfinite("'-'") end
        local nd = setmetatable({ nil, nil, nil, last, back_vlin, v1, v2, v3, 0, 0, 0, cur, x, y, -1 }, RV)
        last = nd
        return nd
    end
    return lin(x, y, -1, "-")
end
RM.__add = RV.__add
RM.__sub = function(x, y) return lin(x, y, -1, "-") end
for _, mt in ipairs { RV, RM } do
    mt.__mul, mt.__div, mt.__unm, mt.__pow = mul_general, div, unm, pow
    mt.__len = function() return 3 end
end
-- metamethods called by hand with other values: a clear error, not a raw one
local function expect(mt, x, what)
    if getmetatable(x) ~= mt then error(fmt("%s: %s expected, got %s", what, mt.__name, typename(x)), 3) end
end
RV.__eq = function(a, b)
    if getmetatable(a) ~= RV or getmetatable(b) ~= RV then return false end
    return a[VX] == b[VX] and a[VX + 1] == b[VX + 1] and a[VX + 2] == b[VX + 2]
end
RM.__eq = function(a, b)
    if getmetatable(a) ~= RM or getmetatable(b) ~= RM then return false end
    for k = MX, MX + 8 do if a[k] ~= b[k] then return false end end
    return true
end
RV.__tostring = function(v)
    expect(RV, v, "__tostring")
    return fmt("reverse.vec3{%s, %s, %s}", num(v[VX]), num(v[VX + 1]), num(v[VX + 2]))
end
RM.__tostring = function(M)
    expect(RM, M, "__tostring")
    local rows = {}
    for i = 0, 2 do
        local o = MX + 3 * i
        rows[i + 1] = fmt("{%s, %s, %s}", num(M[o]), num(M[o + 1]), num(M[o + 2]))
    end
    return "reverse.mat3{" .. table.concat(rows, ",\n             ") .. "}"
end

-- ================================================================ the math functions (rev.math)

local function sarg(x, fname, i)
    if type(x) == "number" then return x end
    if getmetatable(x) == RS then
        if x[OWN] ~= cur then stale() end
        return x[VAL]
    end
    if is_forward(x) then
        error(fmt("%s: cannot mix forward-mode and reverse-mode autodiff values (argument #%d is %s)", fname, i or 1,
            typename(x)), 3)
    end
    error(fmt("bad argument #%d to '%s' (number expected, got %s)", i or 1, fname, typename(x)), 3)
end

local RMATH = {}

function RMATH.sqrt(x)
    local r = msqrt(sarg(x, "sqrt"))
    return lift(x, r, r > 0 and 0.5 / r or 0) -- 0 at the singular point (see the header)
end

function RMATH.exp(x)
    local e = mexp(sarg(x, "exp"))
    return lift(x, e, e)
end

function RMATH.log(x, base)
    local v = sarg(x, "log")
    if base == nil then return lift(x, mlog(v), 1 / v) end
    sarg(base, "log", 2)
    if type(x) == "number" and type(base) == "number" then return mlog(x, base) end
    return div(RMATH.log(x), RMATH.log(base))
end

function RMATH.sin(x)
    local v = sarg(x, "sin")
    return lift(x, msin(v), mcos(v))
end

function RMATH.cos(x)
    local v = sarg(x, "cos")
    return lift(x, mcos(v), -msin(v))
end

function RMATH.tan(x)
    local t = mtan(sarg(x, "tan"))
    return lift(x, t, 1 + t * t)
end

function RMATH.asin(x)
    local v = sarg(x, "asin")
    return lift_singular(x, masin(v), 1 / msqrt((1 - v) * (1 + v)))
end

function RMATH.acos(x)
    local v = sarg(x, "acos")
    return lift_singular(x, macos(v), -1 / msqrt((1 - v) * (1 + v)))
end

-- atan2(y, x) = the angle of (x, y); partials x/r^2 and -y/r^2 (NaN at the origin: not differentiable)
local function atan2(y, x, fname)
    local yv, xv = sarg(y, fname, 1), sarg(x, fname, 2)
    local v = matan(yv, xv)
    local r2 = xv * xv + yv * yv
    local ty, tx = type(y) ~= "number", type(x) ~= "number"
    if ty and tx then return binary(y, x, v, xv / r2, -yv / r2) end
    if ty then return unary(y, v, xv / r2) end
    if tx then return unary(x, v, -yv / r2) end
    return v
end

function RMATH.atan(y, x)
    if x == nil then
        local v = sarg(y, "atan")
        return lift(y, matan(v), 1 / (1 + v * v))
    end
    return atan2(y, x, "atan")
end

function RMATH.atan2(y, x) return atan2(y, x, "atan2") end

function RMATH.abs(x)
    local v = sarg(x, "abs")
    if type(x) == "number" then return mabs(x) end
    if v < 0 then return unary(x, -v, -1) end
    return x
end

function RMATH.pow(a, b) return pow(a, b) end

local function minmax(fname, greater, ...)
    local n = select("#", ...)
    if n == 0 then error(fmt("bad argument #1 to '%s' (number expected, got no value)", fname), 3) end
    local best = ...
    local bv = sarg(best, fname, 1)
    for i = 2, n do
        local x = select(i, ...)
        local v = sarg(x, fname, i)
        if (greater and v > bv) or (not greater and v < bv) then best, bv = x, v end
    end
    return best
end
function RMATH.min(...) return minmax("min", false, ...) end
function RMATH.max(...) return minmax("max", true, ...) end

RMATH.pi, RMATH.huge = math.pi, math.huge

-- ================================================================ SO(3) maps on tape values

-- the small-angle series of forward mode (lieflow.autodiff, loaded by the time these run)
local function series() return require("lieflow.autodiff")._so3_series end

-- hat(x): extras X; gx = (G32 - G23, G13 - G31, G21 - G12)
local function back_hat(nd)
    local X = nd[ME]
    -- adjoint of (i,j) at MG + 3(i-1) + j-1
    X[VG] = X[VG] + (nd[MG + 7] - nd[MG + 5])
    X[VG + 1] = X[VG + 1] + (nd[MG + 2] - nd[MG + 6])
    X[VG + 2] = X[VG + 2] + (nd[MG + 3] - nd[MG + 1])
end

local function hat(x)
    local X, x1, x2, x3 = vread(x, "so3.hat")
    if not X then return core.so3.hat { x1, x2, x3 } end
    return mnew(0, -x3, x2, x3, 0, -x1, -x2, x1, 0, back_hat, X)
end

-- vee(W) = ((W32 - W23)/2, (W13 - W31)/2, (W21 - W12)/2): extras W
local function back_vee(nd)
    local g1, g2, g3 = nd[VG], nd[VG + 1], nd[VG + 2]
    if g1 == 0 and g2 == 0 and g3 == 0 then return end
    local W = nd[VE]
    g1, g2, g3 = 0.5 * g1, 0.5 * g2, 0.5 * g3
    W[MG + 7], W[MG + 5] = W[MG + 7] + g1, W[MG + 5] - g1 -- (3,2), (2,3)
    W[MG + 2], W[MG + 6] = W[MG + 2] + g2, W[MG + 6] - g2 -- (1,3), (3,1)
    W[MG + 3], W[MG + 1] = W[MG + 3] + g3, W[MG + 1] - g3 -- (2,1), (1,2)
end

local function vee(w)
    local W, a1, a2, a3, a4, a5, a6, a7, a8, a9 = mread(w, "so3.vee")
    if not W then return core.so3.vee { a1, a2, a3, a4, a5, a6, a7, a8, a9 } end
    return vnew(0.5 * (a8 - a6), 0.5 * (a3 - a7), 0.5 * (a4 - a2), back_vee, W)
end

local function asvec(x, what)
    local X, x1, x2, x3 = vread(x, what)
    return X or cvec3(x1, x2, x3)
end

-- exp(x) = I + A(z) hat(x) + B(z) hat(x)^2, z = |x|^2 (coefficients and their series as forward mode)
local function so3_exp(x)
    local X = asvec(x, "so3.exp")
    local z = dot(X, X)
    local A, B, dA, dB = series().ab(sval(z))
    local H = hat(X)
    return add(add(core.so3.I, scale(lift(z, A, dA), H, 9)), scale(lift(z, B, dB), matmul(H, H), 9))
end

-- cay(x) = I + 4/(4 + z) hat(x) + 2/(4 + z) hat(x)^2
local function so3_cay(x)
    local X = asvec(x, "so3.cay")
    local q = sdiv(1, add(4, dot(X, X)))
    local H = hat(X)
    return add(add(core.so3.I, scale(mul(4, q), H, 9)), scale(mul(2, q), matmul(H, H), 9))
end

-- The C so3.log / dist / angle refuse an argument that is not a rotation; their tape versions check
-- the values the same way (see lieflow.autodiff's check_rotation).
local function check_rotation(x, what, arg)
    local _, a1, a2, a3, a4, a5, a6, a7, a8, a9 = mread(x, what)
    local msg = core.so3._check(a1, a2, a3, a4, a5, a6, a7, a8, a9, fmt("argument #%d to '%s'", arg, what))
    if msg then raise_at_caller(msg) end
end

local function so3_log(R)
    local A = mread(R, "so3.log")
    if not A then return core.so3.log(R) end
    check_rotation(A, "so3.log", 1)
    local s = vee(A)                     -- sin(t) n
    local c = mul(0.5, sub(trace(A), 1)) -- cos(t)
    local w = dot(s, s)                  -- sin^2 t
    if sval(c) > 0 then
        -- t < pi/2: x = s t/|s|, t/|s| = h(tan^2 t)/c with h(y) = atan(sqrt y)/sqrt y (series near 0)
        local y = sdiv(w, mul(c, c))
        local h, dh = series().h(sval(y))
        return scale(sdiv(lift(y, h, dh), c), s, 3)
    end
    -- t >= pi/2: the axis from the symmetric part (R + R^T)/2 = c I + (1 - c) n n^T, the column kk of
    -- the largest diagonal entry (as in C), its sign from s = sin(t) n
    local kk = 1
    for i = 2, 3 do
        if A[MX + 4 * (i - 1)] > A[MX + 4 * (kk - 1)] then kk = i end
    end
    local n = {}
    for i = 1, 3 do n[i] = mul(0.5, add(A[i][kk], A[kk][i])) end
    n[kk] = sub(n[kk], c)
    local nv = pack3(n[1], n[2], n[3], "so3.log")
    local u = scale(sdiv(1, vnorm(nv)), nv, 3)
    local wv = sval(w)
    local t = atan2(wv > 0 and RMATH.sqrt(w) or 0, c, "so3.log")
    local d = s[VX] * u[VX] + s[VX + 1] * u[VX + 1] + s[VX + 2] * u[VX + 2]
    if d == 0 then
        for k = VX, VX + 2 do
            if u[k] ~= 0 then
                d = u[k]
                break
            end
        end
    end
    if d < 0 then t = unm(t) end
    return scale(t, u, 3)
end

local function so3_dist(a, b)
    local ka, kb = kind(a), kind(b) -- (false: a forward-mode value, which lin reports)
    if (ka ~= 9 and ka ~= false) or (kb ~= 9 and kb ~= false) then
        error(fmt("so3.dist: two rotations (mat3) expected, got %s and %s", typename(a), typename(b)), 2)
    end
    if ka then check_rotation(a, "so3.dist", 1) end
    if kb then check_rotation(b, "so3.dist", 2) end
    return mnorm(lin(a, b, -1, "so3.dist"))
end

local function so3_angle(a, b)
    check_rotation(a, "so3.angle", 1)
    if b ~= nil then check_rotation(b, "so3.angle", 2) end
    local Mt = b == nil and a or matmul(transpose(a), b)
    local s = vee(Mt)
    local c = mul(0.5, sub(trace(Mt), 1))
    return atan2(vnorm(s), c, "so3.angle")
end

-- ================================================================ the dispatch table (core.dual-like)

DISPATCH.__add, DISPATCH.__sub, DISPATCH.__mul, DISPATCH.__div, DISPATCH.__unm = add, sub, mul, div, unm
DISPATCH.dot, DISPATCH.cross, DISPATCH.T, DISPATCH.det, DISPATCH.trace, DISPATCH.norm =
    dot, cross, transpose, det, trace, norm
DISPATCH["so3.exp"], DISPATCH["so3.log"], DISPATCH["so3.cay"] = so3_exp, so3_log, so3_cay
DISPATCH["so3.hat"], DISPATCH["so3.vee"], DISPATCH["so3.dist"], DISPATCH["so3.angle"] = hat, vee, so3_dist, so3_angle
-- lf.vec3{...} / lf.vec3(x, y, z) / lf.mat3{...} of tape values
DISPATCH.vec3 = function(a, b, c)
    local t = a
    if b ~= nil then t = { a, b, c } end
    local X, x1, x2, x3 = vread(t, "lf.vec3")
    return X or cvec3(x1, x2, x3)
end
DISPATCH.mat3 = function(t)
    local A = mread(t, "lf.mat3")
    return A or cmat3(t)
end

-- ================================================================ recording and sweeping

-- leaves: the arguments of the function (not on the tape: no backward rule)
local function mat_leaf(x, what)
    local _, a1, a2, a3, a4, a5, a6, a7, a8, a9 = mread(x, what)
    return setmetatable({ nil, nil, nil, false, false, a1, a2, a3, a4, a5, a6, a7, a8, a9,
        0, 0, 0, 0, 0, 0, 0, 0, 0, cur }, RM)
end
local function vec_leaf(x, what)
    local _, a1, a2, a3 = vread(x, what)
    return setmetatable({ nil, nil, nil, false, false, a1, a2, a3, 0, 0, 0, cur }, RV)
end
local function scalar_leaf(x) return setmetatable({ x, 0, cur }, RS) end

local function finite(x) return x == x and x ~= huge and x ~= -huge end

-- f(arg) on the current tape, then the backward sweep; returns the value of f. what names f in errors.
local function evaluate_and_sweep(f, arg, what, at)
    local u = f(arg)
    local v
    if type(u) == "number" then
        v = u
    elseif getmetatable(u) == RS then
        if u[OWN] ~= cur then stale() end
        v = u[VAL]
    else
        error(fmt("%s returned %s, expected a number", what, typename(u)), 0)
    end
    if not finite(v) then error(fmt("%s is not finite (%s) at this %s", what, tostring(v), at), 0) end
    if type(u) ~= "number" then
        u[ADJ] = 1
        local nd = last
        while nd do
            -- the scalar rules inline (most nodes), the others called
            local bw = nd[BACK]
            if bw == back2 then
                local g = nd[ADJ]
                if g ~= 0 then
                    local a, b = nd[SA], nd[SB]
                    a[ADJ] = a[ADJ] + g * nd[SDA]
                    b[ADJ] = b[ADJ] + g * nd[SDB]
                end
            elseif bw == back1 then
                local g = nd[ADJ]
                if g ~= 0 then
                    local a = nd[SA]
                    a[ADJ] = a[ADJ] + g * nd[SDA]
                end
            else
                bw(nd)
            end
            nd = nd[PREV]
        end
    end
    return v
end

local function explain(msg, what)
    local ok, ad = pcall(require, "lieflow.autodiff")
    if ok and type(ad) == "table" and ad.explain then return ad.explain(msg, what) end
    return tostring(msg)
end

-- Run body() on a fresh tape, then restore the tape being recorded before (a U may itself compute a
-- gradient), also on errors.
local function on_tape(body, what)
    local saved_cur, saved_last = cur, last
    cur, last = {}, false
    local r = table.pack(pcall(body))
    cur, last = saved_cur, saved_last
    if not r[1] then error(explain(r[2], what), 0) end
    return table.unpack(r, 2, r.n)
end

-- -trhat(G^T R) for the Euclidean gradient G = dU/dR of a mat leaf (values R, adjoints G):
-- tau . y = -d/de U(R exp(e hat y)) = -tr(G^T R hat y), and tr(M hat y) = trhat(M) . y with
-- trhat(M) = (M23 - M32, M31 - M13, M12 - M21).
local function leaf_torque(L)
    -- (G^T R)_jk = sum_l G_lj R_lk (0-based j, k, l)
    local function m(j, k)
        return L[MG + j] * L[MX + k] + L[MG + 3 + j] * L[MX + 3 + k] + L[MG + 6 + j] * L[MX + 6 + k]
    end
    return -(m(1, 2) - m(2, 1)), -(m(2, 0) - m(0, 2)), -(m(0, 1) - m(1, 0))
end

--- rev.torque(U, R [, nb]) -> tau (one rotation) or {tau_1, ..., tau_nb} (an array of rotations): the body
--- torques of a potential, tau_i . y = -d/de U(.., R_i exp(e hat y), ..) at e = 0, from one evaluation of U
--- and one backward sweep.
function rev.torque(U, R, nb)
    if type(U) ~= "function" and not (getmetatable(U) and getmetatable(U).__call) then
        error(fmt("reverse torque: potential function U expected, got %s", typename(U)), 2)
    end
    -- a single rotation, or an array of them (as forward mode reads it)
    local array = type(R) == "table" and getmetatable(R) == nil and kind(rawget(R, 1)) == 9
    local single = not array and (nb == nil or nb == 1)
    if single and kind(R) ~= 9 then
        error(fmt("reverse torque: rotation (mat3) or array of rotations expected, got %s", typename(R)), 2)
    elseif not single then
        if not array or (nb ~= nil and rawlen(R) ~= nb) then
            error(fmt("reverse torque: array of %s rotations expected, got %s", tostring(nb or "n"), typename(R)), 2)
        end
        nb = rawlen(R)
    end
    local what = single and "potential U(R)" or "potential U(Rs)"
    return on_tape(function()
        local leaves = {}
        if single then
            leaves[1] = mat_leaf(R, "reverse torque")
        else
            for i = 1, nb do leaves[i] = mat_leaf(R[i], fmt("reverse torque: rotation %d", i)) end
        end
        evaluate_and_sweep(U, single and leaves[1] or leaves, what, "R")
        local taus = {}
        for i = 1, #leaves do
            local t1, t2, t3 = leaf_torque(leaves[i])
            if not (finite(t1) and finite(t2) and finite(t3)) then
                error(fmt("%s: the derivative%s is not finite (%s, %s, %s): U is not differentiable at this R " ..
                    "(a function at a singular point, e.g. atan2(0, 0), log(0), x^b with b < 1 at 0)", what,
                    single and "" or fmt(" for body %d", i), tostring(-t1), tostring(-t2), tostring(-t3)), 0)
            end
            taus[i] = cvec3(t1, t2, t3)
        end
        if single then return taus[1] end
        return taus
    end, what)
end

-- the value of a ts2 / tgl3 factor: its two parts by name and by index (a plain table for H)
local PAIR = {__name = "lf.tape.pair"}

-- the value of a factor of a Lie-group ODE with leaves for its parameters
local function factor_leaf(name, v)
    if type(name) ~= "string" then error(fmt("reverse autodiff: factor names are strings, got %s", typename(name)), 0) end
    if name == "so3" or name == "gl3" then return mat_leaf(v, name) end
    if name == "s2" then return vec_leaf(v, name) end
    if name == "ts2" or name == "tgl3" then -- {q = vec3, omega = vec3} / {F = mat3, P = mat3} (or arrays of two)
        if type(v) ~= "table" then error(fmt("%s value: a table of two parts expected, got %s", name, typename(v)), 0) end
        local k1, k2 = "q", "omega"
        if name == "tgl3" then k1, k2 = "F", "P" end
        local leaf = name == "ts2" and vec_leaf or mat_leaf
        local a, b = leaf(v[k1] or v[1], name), leaf(v[k2] or v[2], name)
        return setmetatable({[k1] = a, [k2] = b, a, b}, PAIR)
    end
    local n = name == "s3" and 4 or tonumber(name:match("^r(%d+)$"))
    if not n then error(fmt("reverse autodiff: unknown factor '%s'", tostring(name)), 0) end
    if type(v) ~= "table" then error(fmt("%s value: table of %d numbers expected, got %s", name, n, typename(v)), 0) end
    local t = {}
    for p = 1, n do
        local e = v[p]
        if type(e) ~= "number" then
            error(fmt("%s value: entry %d is %s, expected a number", name, p, typename(e)), 0)
        end
        t[p] = scalar_leaf(e)
    end
    return t
end

-- dH/dx_p of a factor's leaves, the parameters in order (row-major for matrices)
local function leaf_gradient(L)
    local mt = getmetatable(L)
    local g = {}
    if mt == PAIR then -- ts2 / tgl3: the two parts one after the other
        for _, part in ipairs{L[1], L[2]} do
            for _, x in ipairs(leaf_gradient(part)) do g[#g + 1] = x end
        end
    elseif mt == RM then
        for k = 0, 8 do g[k + 1] = L[MG + k] end
    elseif mt == RV then
        g[1], g[2], g[3] = L[VG], L[VG + 1], L[VG + 2]
    else
        for p = 1, #L do g[p] = L[p][ADJ] end
    end
    return g
end

--- rev.lie_gradient(H, y, factors, trivialization) -> g (nd numbers): the trivialized differential of a
--- scalar function along the action, g_j = d/de H(act(e e_j, y)) at e = 0, for every factor from one
--- evaluation of H: g_j = sum_p dH/dx_p T_j[p] with T_j the action's velocities (core.lie_tangents).
function rev.lie_gradient(H, y, names, triv)
    if type(H) ~= "function" and not (type(getmetatable(H)) == "table" and getmetatable(H).__call) then
        error(fmt("reverse.lie_gradient: function H expected, got %s", typename(H)), 2)
    end
    if type(y) ~= "table" or type(names) ~= "table" then
        error(fmt("reverse.lie_gradient: the state (an array of factor values) and the factor names expected, got %s and %s",
            typename(y), typename(names)), 2)
    end
    return on_tape(function()
        local ys = {}
        for i, name in ipairs(names) do ys[i] = factor_leaf(name, y[i]) end
        evaluate_and_sweep(H, ys, "H(y)", "state")
        local g = {}
        for i, name in ipairs(names) do
            local G = leaf_gradient(ys[i])
            local T = core.lie_tangents(name, triv or "right", y[i])
            for j = 1, #T do
                local Tj, s = T[j], 0
                for p = 1, #G do s = s + G[p] * Tj[p] end
                if not finite(s) then
                    error(fmt("H(y): the derivative is not finite (%s): not differentiable at this state", tostring(s)), 0)
                end
                g[#g + 1] = s
            end
        end
        return g
    end, "the function")
end

--- rev.gradient(f, x1, x2, ...) -> f(x1, x2, ...), df/dx1, df/dx2, ...: the Euclidean gradient of a scalar
--- function of numbers, vec3 and mat3 (C userdata or tables) from one evaluation of f; each gradient has
--- its argument's shape (a number, a C vec3, a C mat3).
function rev.gradient(f, ...)
    if type(f) ~= "function" and not (type(getmetatable(f)) == "table" and getmetatable(f).__call) then
        error(fmt("reverse.gradient: function expected, got %s", typename(f)), 2)
    end
    local args = table.pack(...)
    return on_tape(function()
        local leaves = {}
        for i = 1, args.n do
            local v = args[i]
            local k = kind(v)
            if type(v) == "number" then
                leaves[i] = scalar_leaf(v)
            elseif k == 3 then
                leaves[i] = vec_leaf(v, "rev.gradient")
            elseif k == 9 then
                leaves[i] = mat_leaf(v, "rev.gradient")
            else
                error(fmt("rev.gradient: argument %d: number, vec3 or mat3 expected, got %s", i, typename(v)), 0)
            end
        end
        local u = evaluate_and_sweep(function(ls) return f(table.unpack(ls, 1, args.n)) end, leaves, "f(x)", "x")
        local out = { u }
        for i, L in ipairs(leaves) do
            local mt = getmetatable(L)
            local g
            if mt == RS then
                g = { L[ADJ] }
            elseif mt == RV then
                g = { L[VG], L[VG + 1], L[VG + 2] }
            else
                g = leaf_gradient(L)
            end
            -- as ad.grad: a derivative that overflowed or went through a singular point is an error
            for j = 1, #g do
                if not finite(g[j]) then
                    error(fmt("rev.gradient: df/dx%d is not finite (%s in entry %d): f is not differentiable " ..
                        "at this x, or its derivative overflows", i, tostring(g[j]), j), 0)
                end
            end
            out[i + 1] = mt == RS and g[1] or mt == RV and cvec3(g) or cmat3(g)
        end
        return table.unpack(out, 1, args.n + 1)
    end, "f(x)")
end

--- rev.math: sqrt exp log sin cos tan asin acos atan atan2 abs pow min max on numbers and tape scalars.
rev.math = RMATH
rev.dispatch = DISPATCH

--- Is x a reverse-mode tape value?
function rev.is_value(x)
    local mt = getmetatable(x)
    return mt == RS or mt == RV or mt == RM
end

--- The value of a tape value: a number, or a C vec3 / mat3 (other arguments are returned as they are).
function rev.value(x)
    local mt = getmetatable(x)
    if mt == RS then return x[VAL] end
    if mt == RV then return cvec3(x[VX], x[VX + 1], x[VX + 2]) end
    if mt == RM then return cmat3 { x[MX], x[MX + 1], x[MX + 2], x[MX + 3], x[MX + 4], x[MX + 5], x[MX + 6],
        x[MX + 7], x[MX + 8] } end
    return x
end

--- The number of nodes recorded so far on the tape being recorded (nil outside an evaluation): for
--- tests and benchmarks.
rev._raise_at_caller = raise_at_caller -- shared with lieflow.autodiff

function rev._tape_size()
    if not cur then return nil end
    local n, nd = 0, last
    while nd do
        n = n + 1
        nd = nd[PREV]
    end
    return n
end

return rev
