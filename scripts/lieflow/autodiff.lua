-- lieflow.autodiff — forward-mode automatic differentiation with three directions.
--
-- A dual scalar is a table {v, d1, d2, d3}: the value v and its derivatives along three seed
-- directions. Dual vec3 / mat3 are tables of dual-or-number entries ({x, y, z}; three dual-vec3 rows)
-- with the same surface as the C userdata lf.vec3 / lf.mat3: indexing v[i], v.x, M[i][j], the
-- methods dot cross norm normalized T det trace inv totable row col copy, and arithmetic with numbers,
-- duals, C userdata and plain Lua tables. Every metatable has the field __lf_dual, so the C
-- functions of lieflow.core (arithmetic, methods, so3.exp/log/cay/hat/vee/dist/angle) hand dual
-- arguments to the table core.dual, which this module fills on load.
--
-- The main use: the body torque of a potential written in Lua,
--   tau . y = -d/de U(R exp(e hat y)) at e = 0,
-- obtained exactly (to rounding) in one evaluation of U per body with R (I + hat(eps)) as argument.
--
-- Reverse mode (lieflow.reverse, one evaluation and one backward sweep for every body's torque) takes
-- over when it is cheaper: ad.torque and ad.lie_gradient choose (see REVERSE_FROM below), and the
-- functions of ad.math accept its tape values too. Forward and reverse values do not mix.
--
-- Dual values are treated as immutable: M[i] returns the row itself (not a copy, unlike the C mat3),
-- so do not assign into rows of a dual matrix. `d == 0` for a dual d is false (Lua compares a table
-- with a number without metamethods): compare with `<`, `<=` or ad.value(d) instead.
local core = require "lieflow.core"
local REV = require "lieflow.reverse" -- reverse mode: the tape values the math functions also accept
local is_rev, RMATH = REV.is_value, REV.math

local type, getmetatable, setmetatable, rawget, rawset, error, select, tostring =
    type, getmetatable, setmetatable, rawget, rawset, error, select, tostring
local msqrt, mexp, mlog, msin, mcos, mtan, masin, macos, matan, mabs =
    math.sqrt, math.exp, math.log, math.sin, math.cos, math.tan, math.asin, math.acos, math.atan, math.abs
local fmt = string.format
local mhuge = math.huge

local VEC3_MT = getmetatable(core.vec3 { 0, 0, 0 })
local MAT3_MT = getmetatable(core.mat3())
local cvec3, cmat3 = core.vec3, core.mat3

-- The metatables (shared by all values of a kind).
local D = { __lf_dual = true, __name = "lf.dual" }        -- scalar {v, d1, d2, d3}
local DV = { __lf_dual = true, __name = "lf.dual.vec3" }  -- {x, y, z}, entries number or dual
local DM = { __lf_dual = true, __name = "lf.dual.mat3" }  -- {row1, row2, row3}, rows are DV

local function typename(x)
    local mt = getmetatable(x)
    if type(mt) == "table" and type(rawget(mt, "__name")) == "string" then return mt.__name end
    return type(x)
end

-- ================================================================ scalars
-- The primitives below take numbers or dual scalars only (no checks: callers guarantee it).

local function sadd(a, b)
    if type(a) == "number" then
        if type(b) == "number" then return a + b end
        return setmetatable({ a + b[1], b[2], b[3], b[4] }, D)
    elseif type(b) == "number" then
        return setmetatable({ a[1] + b, a[2], a[3], a[4] }, D)
    end
    return setmetatable({ a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4] }, D)
end

local function ssub(a, b)
    if type(a) == "number" then
        if type(b) == "number" then return a - b end
        return setmetatable({ a - b[1], -b[2], -b[3], -b[4] }, D)
    elseif type(b) == "number" then
        return setmetatable({ a[1] - b, a[2], a[3], a[4] }, D)
    end
    return setmetatable({ a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4] }, D)
end

local function smul(a, b)
    if type(a) == "number" then
        if type(b) == "number" then return a * b end
        return setmetatable({ a * b[1], a * b[2], a * b[3], a * b[4] }, D)
    elseif type(b) == "number" then
        return setmetatable({ a[1] * b, a[2] * b, a[3] * b, a[4] * b }, D)
    end
    local av, bv = a[1], b[1]
    return setmetatable({ av * bv, a[2] * bv + av * b[2], a[3] * bv + av * b[3], a[4] * bv + av * b[4] }, D)
end

local function sdiv(a, b)
    if type(b) == "number" then
        if type(a) == "number" then return a / b end
        return setmetatable({ a[1] / b, a[2] / b, a[3] / b, a[4] / b }, D)
    end
    local bv = b[1]
    if type(a) == "number" then
        local q = a / bv
        local f = -q / bv
        return setmetatable({ q, f * b[2], f * b[3], f * b[4] }, D)
    end
    local q = a[1] / bv
    return setmetatable({ q, (a[2] - q * b[2]) / bv, (a[3] - q * b[3]) / bv, (a[4] - q * b[4]) / bv }, D)
end

local function sunm(a)
    if type(a) == "number" then return -a end
    return setmetatable({ -a[1], -a[2], -a[3], -a[4] }, D)
end

local function val(a)
    if type(a) == "number" then return a end
    return a[1]
end

-- f(x) given f(x.value) = fv and f'(x.value) = fp (chain rule); a number x gives fv.
local function lift(x, fv, fp)
    if type(x) == "number" then return fv end
    return setmetatable({ fv, fp * x[2], fp * x[3], fp * x[4] }, D)
end

-- lift where f'(x.value) may be infinite (sqrt at 0, asin/acos at +-1, x^b with b < 1 at 0): along a
-- direction in which x does not change the derivative is 0, not inf * 0 = NaN. That is the right
-- value whenever the composite has a derivative there: e.g. |x|^2 = sqrt(x.x)^2 at x = 0, the
-- torque of dist(R, Rm)^2 or angle(R, Rm)^2 at R = Rm (a cone like |x| itself gets 0, a
-- subgradient).
local function lift_singular(x, fv, fp)
    if type(x) == "number" then return fv end
    local g = { fv, 0, 0, 0 }
    for k = 2, 4 do
        local xk = x[k]
        if xk ~= 0 then g[k] = fp * xk end
    end
    return setmetatable(g, D)
end

-- Accumulators for sums of products without intermediate tables: acc(a, b, v, g1, g2, g3, isd)
-- returns the state after adding a*b (accsub: after subtracting it); fin turns it into a value.
local function acc(a, b, v, g1, g2, g3, isd)
    if type(a) == "number" then
        if type(b) == "number" then return v + a * b, g1, g2, g3, isd end
        return v + a * b[1], g1 + a * b[2], g2 + a * b[3], g3 + a * b[4], true
    elseif type(b) == "number" then
        return v + a[1] * b, g1 + a[2] * b, g2 + a[3] * b, g3 + a[4] * b, true
    end
    local av, bv = a[1], b[1]
    return v + av * bv, g1 + a[2] * bv + av * b[2], g2 + a[3] * bv + av * b[3], g3 + a[4] * bv + av * b[4], true
end

local function accsub(a, b, v, g1, g2, g3, isd)
    if type(a) == "number" then
        if type(b) == "number" then return v - a * b, g1, g2, g3, isd end
        return v - a * b[1], g1 - a * b[2], g2 - a * b[3], g3 - a * b[4], true
    elseif type(b) == "number" then
        return v - a[1] * b, g1 - a[2] * b, g2 - a[3] * b, g3 - a[4] * b, true
    end
    local av, bv = a[1], b[1]
    return v - av * bv, g1 - (a[2] * bv + av * b[2]), g2 - (a[3] * bv + av * b[3]), g3 - (a[4] * bv + av * b[4]), true
end

local function fin(v, g1, g2, g3, isd)
    if isd then return setmetatable({ v, g1, g2, g3 }, D) end
    return v
end

-- a1 b1 + a2 b2 + a3 b3 (summed left to right, as the C code does)
local function dot3(a1, a2, a3, b1, b2, b3)
    return fin(acc(a3, b3, acc(a2, b2, acc(a1, b1, 0, 0, 0, 0, false))))
end

-- a b - c d
local function dif2(a, b, c, d)
    return fin(accsub(c, d, acc(a, b, 0, 0, 0, 0, false)))
end

local function spow(a, b)
    if type(b) == "number" then
        if type(a) == "number" then return a ^ b end
        local v = a[1]
        if b == 2 then
            local f = 2 * v
            return setmetatable({ v * v, f * a[2], f * a[3], f * a[4] }, D)
        end
        if b == 0 then return lift(a, 1, 0) end -- constant (0 * v^-1 would be NaN at v = 0)
        return lift_singular(a, v ^ b, b * v ^ (b - 1))
    end
    local bv = b[1]
    if type(a) == "number" then
        local p = a ^ bv
        -- d/db 0^b = 0 for b > 0 (p log a would be 0 * -inf)
        return lift(b, p, (a == 0 and bv > 0) and 0 or p * mlog(a))
    end
    local av = a[1]
    local p = av ^ bv
    local fa, fb = bv * av ^ (bv - 1), (av == 0 and bv > 0) and 0 or p * mlog(av)
    local g = { p, 0, 0, 0 }
    for k = 2, 4 do
        local ak, bk = a[k], b[k]
        -- skip a^(b-1) where the base is constant and log(a) where the exponent is
        g[k] = (ak ~= 0 and fa * ak or 0) + (bk ~= 0 and fb * bk or 0)
    end
    return setmetatable(g, D)
end

-- ================================================================ classifying and reading operands
-- kind: 1 scalar (number or dual), 3 vec3-like, 9 mat3-like, nil otherwise.
local function kind(x)
    local tx = type(x)
    if tx == "number" then return 1 end
    local mt = getmetatable(x)
    if mt == D then return 1 end
    if mt == DV or mt == VEC3_MT then return 3 end
    if mt == DM or mt == MAT3_MT then return 9 end
    if tx == "table" and mt == nil then
        local n = #x
        if n == 3 then
            local f = x[1]
            if type(f) == "number" or getmetatable(f) == D then return 3 end
            return 9
        elseif n == 9 then
            return 9
        end
    end
    return nil
end

local function isscalar(e) return type(e) == "number" or getmetatable(e) == D end

local function mixerr(what, a, b)
    error(fmt("%s: cannot mix forward-mode and reverse-mode autodiff values (%s and %s)", what, typename(a),
        typename(b)), 4)
end

-- An object indexable as x[1..3] with number/dual entries.
local function vec(x, what)
    local mt = getmetatable(x)
    if mt == DV then return x end
    if mt == VEC3_MT then return x:totable() end
    if type(x) == "table" and mt == nil and #x == 3 and isscalar(x[1]) and isscalar(x[2]) and isscalar(x[3]) then
        return x
    end
    if is_rev(x) then mixerr(what or "autodiff", x, "a forward-mode value") end
    error(fmt("%s: vec3 or table of 3 numbers expected, got %s", what or "autodiff", typename(x)), 3)
end

-- An object indexable as M[i][j] with number/dual entries.
local function mat(x, what)
    local mt = getmetatable(x)
    if mt == DM then return x end
    if mt == MAT3_MT then return x:totable() end
    if type(x) == "table" and mt == nil then
        local n = #x
        if n == 9 then
            for i = 1, 9 do
                if not isscalar(x[i]) then
                    error(fmt("%s: mat3 entry %d is %s, expected a number", what or "autodiff", i, typename(x[i])), 3)
                end
            end
            return { { x[1], x[2], x[3] }, { x[4], x[5], x[6] }, { x[7], x[8], x[9] } }
        elseif n == 3 then
            return { vec(x[1], what), vec(x[2], what), vec(x[3], what) }
        end
    end
    if is_rev(x) then mixerr(what or "autodiff", x, "a forward-mode value") end
    error(fmt("%s: mat3 or table (9 numbers or 3 rows) expected, got %s", what or "autodiff", typename(x)), 3)
end

-- an error reported at the user's line (the first stack level outside the autodiff modules and C)
local raise_at_caller = REV._raise_at_caller

-- Like lf.vec3 and lf.mat3, dual vectors and matrices hold finite values only: an operation whose
-- result overflows (or is NaN) is an error, as it is for the C values. Dual scalars follow Lua's
-- numbers (1e200 * 1e200 is inf); the derivatives are checked where they are read (ad.grad, torques).
local function nonfinite(what, x)
    raise_at_caller(fmt("%s: the result has a non-finite component (%s); vec3 and mat3 of autodiff values " ..
        "hold finite numbers only, as lf.vec3 and lf.mat3 do", what, tostring(x)))
end

local function newvec(a, b, c)
    -- the values (val inlined: this is the hot constructor); x - x is 0 only for finite x
    local x, y, z = a, b, c
    if type(x) ~= "number" then x = x[1] end
    if type(y) ~= "number" then y = y[1] end
    if type(z) ~= "number" then z = z[1] end
    if (x - x) + (y - y) + (z - z) ~= 0 then
        nonfinite("lf.dual.vec3", (x - x ~= 0 and x) or (y - y ~= 0 and y) or z)
    end
    return setmetatable({ a, b, c }, DV)
end
local function newmat(r1, r2, r3) return setmetatable({ r1, r2, r3 }, DM) end

-- ================================================================ arithmetic (metamethods and core.dual)

local function operr(op, a, b)
    if is_rev(a) or is_rev(b) then mixerr("'" .. op .. "'", a, b) end
    error(fmt("attempt to perform '%s' on %s and %s (numbers, vec3 or mat3 expected)", op, typename(a),
        typename(b)), 3)
end

-- entrywise a (op) b for two vectors or two matrices
local function entrywise(f, k, a, b)
    if k == 3 then
        local x, y = vec(a), vec(b)
        return newvec(f(x[1], y[1]), f(x[2], y[2]), f(x[3], y[3]))
    end
    local A, B = mat(a), mat(b)
    local r = {}
    for i = 1, 3 do
        local p, q = A[i], B[i]
        r[i] = newvec(f(p[1], q[1]), f(p[2], q[2]), f(p[3], q[3]))
    end
    return setmetatable(r, DM)
end

local function add(a, b)
    local ka, kb = kind(a), kind(b)
    if ka == 1 and kb == 1 then return sadd(a, b) end
    if ka ~= kb or ka == nil then operr("+", a, b) end
    return entrywise(sadd, ka, a, b)
end

local function sub(a, b)
    local ka, kb = kind(a), kind(b)
    if ka == 1 and kb == 1 then return ssub(a, b) end
    if ka ~= kb or ka == nil then operr("-", a, b) end
    return entrywise(ssub, ka, a, b)
end

local function scale(s, k, x)
    if k == 3 then
        local v = vec(x)
        return newvec(smul(s, v[1]), smul(s, v[2]), smul(s, v[3]))
    end
    local A = mat(x)
    local r = {}
    for i = 1, 3 do
        local p = A[i]
        r[i] = newvec(smul(s, p[1]), smul(s, p[2]), smul(s, p[3]))
    end
    return setmetatable(r, DM)
end

local function matmul(a, b)
    local A, B = mat(a), mat(b)
    local b1, b2, b3 = B[1], B[2], B[3]
    local r = {}
    for i = 1, 3 do
        local p = A[i]
        local p1, p2, p3 = p[1], p[2], p[3]
        r[i] = newvec(dot3(p1, p2, p3, b1[1], b2[1], b3[1]), dot3(p1, p2, p3, b1[2], b2[2], b3[2]),
            dot3(p1, p2, p3, b1[3], b2[3], b3[3]))
    end
    return setmetatable(r, DM)
end

local function matvec(a, x)
    local A, v = mat(a), vec(x)
    local v1, v2, v3 = v[1], v[2], v[3]
    local r1, r2, r3 = A[1], A[2], A[3]
    return newvec(dot3(r1[1], r1[2], r1[3], v1, v2, v3), dot3(r2[1], r2[2], r2[3], v1, v2, v3),
        dot3(r3[1], r3[2], r3[3], v1, v2, v3))
end

local function vecmat(x, b) -- row vector times matrix, v^T M
    local v, B = vec(x), mat(b)
    local v1, v2, v3 = v[1], v[2], v[3]
    local r1, r2, r3 = B[1], B[2], B[3]
    return newvec(dot3(v1, v2, v3, r1[1], r2[1], r3[1]), dot3(v1, v2, v3, r1[2], r2[2], r3[2]),
        dot3(v1, v2, v3, r1[3], r2[3], r3[3]))
end

local function mul(a, b)
    local ka, kb = kind(a), kind(b)
    if ka == 1 then
        if kb == 1 then return smul(a, b) end
        if kb then return scale(a, kb, b) end
    elseif kb == 1 then
        if ka then return scale(b, ka, a) end
    elseif ka == 9 then
        if kb == 9 then return matmul(a, b) end
        if kb == 3 then return matvec(a, b) end
    elseif ka == 3 then
        if kb == 9 then return vecmat(a, b) end
        if kb == 3 then error("attempt to multiply two vec3 (use v:dot(w) or v:cross(w))", 2) end
    end
    operr("*", a, b)
end

local function div(a, b)
    local ka, kb = kind(a), kind(b)
    if kb == 1 then
        if ka == 1 then return sdiv(a, b) end
        if ka == 3 then
            local v = vec(a)
            return newvec(sdiv(v[1], b), sdiv(v[2], b), sdiv(v[3], b))
        elseif ka == 9 then
            local A, r = mat(a), {}
            for i = 1, 3 do
                local p = A[i]
                r[i] = newvec(sdiv(p[1], b), sdiv(p[2], b), sdiv(p[3], b))
            end
            return setmetatable(r, DM)
        end
    end
    if ka and kb then
        error(fmt("attempt to divide %s by %s (only vec3/mat3 divided by a number)", typename(a), typename(b)), 2)
    end
    operr("/", a, b)
end

local function unm(a)
    local k = kind(a)
    if k == 1 then return sunm(a) end
    if k == 3 then
        local v = vec(a)
        return newvec(sunm(v[1]), sunm(v[2]), sunm(v[3]))
    elseif k == 9 then
        return scale(-1, 9, a)
    end
    error(fmt("attempt to negate %s", typename(a)), 2)
end

local function pow(a, b)
    if kind(a) ~= 1 or kind(b) ~= 1 then
        error(fmt("attempt to perform '^' on %s and %s (numbers expected)", typename(a), typename(b)), 2)
    end
    return spow(a, b)
end

local function cmpval(x, op)
    if type(x) == "number" then return x end
    if getmetatable(x) == D then return x[1] end
    error(fmt("attempt to compare (%s) %s with a dual number", op, typename(x)), 3)
end

-- ================================================================ scalar metatable
D.__add, D.__sub, D.__mul, D.__div, D.__unm, D.__pow = add, sub, mul, div, unm, pow
D.__lt = function(a, b) return cmpval(a, "<") < cmpval(b, "<") end
D.__le = function(a, b) return cmpval(a, "<=") <= cmpval(b, "<=") end
D.__eq = function(a, b)
    -- called only when both are tables: equal values (the derivatives are not compared)
    return getmetatable(a) == D and getmetatable(b) == D and a[1] == b[1]
end
local function num(x)
    if type(x) ~= "number" then -- an entry replaced by hand: duals are immutable by convention
        error(fmt("a forward-mode dual value was modified by hand (an entry is %s, not a number)", typename(x)), 0)
    end
    if x == 0 then x = 0 end -- print -0 as 0
    return fmt("%.15g", x)
end
D.__tostring = function(a)
    if getmetatable(a) ~= D then error(fmt("dual __tostring: dual number expected, got %s", typename(a)), 2) end
    return fmt("dual(%s; %s, %s, %s)", num(a[1]), num(a[2]), num(a[3]), num(a[4]))
end

-- ================================================================ vector / matrix operations

-- A scalar that a C vec3/mat3 method would refuse when it overflows (dot, det, trace)
local function finite_result(r, what)
    local v = val(r)
    if v - v ~= 0 then
        raise_at_caller(fmt("%s: the result overflows (%s)", what, tostring(v)))
    end
    return r
end

local function dot(a, b)
    local x, y = vec(a, "dot"), vec(b, "dot")
    return finite_result(dot3(x[1], x[2], x[3], y[1], y[2], y[3]), "vec3:dot")
end

local function cross(a, b)
    local x, y = vec(a, "cross"), vec(b, "cross")
    local x1, x2, x3, y1, y2, y3 = x[1], x[2], x[3], y[1], y[2], y[3]
    return newvec(dif2(x2, y3, x3, y2), dif2(x3, y1, x1, y3), dif2(x1, y2, x2, y1))
end

local function ssqrt(x)
    if type(x) == "number" then return msqrt(x) end
    local r = msqrt(x[1])
    if r > 0 then return lift(x, r, 0.5 / r) end
    return lift_singular(x, r, 0.5 / r)
end

local function vnorm(x)
    return ssqrt(dot3(x[1], x[2], x[3], x[1], x[2], x[3]))
end

local function mnorm(A) -- Frobenius, the squares summed in row-major order as in C
    local s1, s2, s3, s4, s5 = 0, 0, 0, 0, false
    for i = 1, 3 do
        local r = A[i]
        for j = 1, 3 do
            local e = r[j]
            s1, s2, s3, s4, s5 = acc(e, e, s1, s2, s3, s4, s5)
        end
    end
    return ssqrt(fin(s1, s2, s3, s4, s5))
end

local function finite_norm(r, a)
    local v = type(r) == "number" and r or r[1]
    if v == mhuge then error(fmt("norm: the norm of this %s overflows", typename(a)), 3) end
    return r
end

-- The largest |value| among entries e[1..n]; beyond 1e150 or below 1e-150 (but not 0) the norms
-- below divide by it first, as C's scaled norm does: the squares neither overflow nor underflow.
local function maxabs(e, n)
    local m = 0
    for i = 1, n do
        local x = mabs(val(e[i]))
        if x > m then m = x end
    end
    return m
end
local function needs_scaling(m) return m > 1e150 or (m > 0 and m < 1e-150) end

-- |v| of a vector's entries v (of the value a, named in errors), and the Frobenius norm of a matrix's rows A
local function vec_norm(v, a)
    if type(v[1]) == "number" and type(v[2]) == "number" and type(v[3]) == "number" then
        return cvec3(v[1], v[2], v[3]):norm() -- no dual entry: C's scaled norm
    end
    local m = maxabs(v, 3)
    if needs_scaling(m) then
        return finite_norm(smul(m, vnorm({ sdiv(v[1], m), sdiv(v[2], m), sdiv(v[3], m) })), a)
    end
    return finite_norm(vnorm(v), a)
end
local function mat_norm(A, a)
    local e = { A[1][1], A[1][2], A[1][3], A[2][1], A[2][2], A[2][3], A[3][1], A[3][2], A[3][3] }
    local m = maxabs(e, 9)
    if needs_scaling(m) then
        for i = 1, 9 do e[i] = sdiv(e[i], m) end
        return finite_norm(smul(m, mnorm({ { e[1], e[2], e[3] }, { e[4], e[5], e[6] }, { e[7], e[8], e[9] } })), a)
    end
    return finite_norm(mnorm(A), a)
end

local function norm(a)
    local k = kind(a)
    if k == 3 then return vec_norm(vec(a), a) end
    if k == 9 then return mat_norm(mat(a), a) end
    error(fmt("norm: vec3 or mat3 expected, got %s", typename(a)), 2)
end

local function transpose(a)
    local A = mat(a, "T")
    local r1, r2, r3 = A[1], A[2], A[3]
    return newmat(newvec(r1[1], r2[1], r3[1]), newvec(r1[2], r2[2], r3[2]), newvec(r1[3], r2[3], r3[3]))
end

local function det(a)
    local A = mat(a, "det")
    local r1, r2, r3 = A[1], A[2], A[3]
    local a0, a1, a2, a3, a4, a5, a6, a7, a8 = r1[1], r1[2], r1[3], r2[1], r2[2], r2[3], r3[1], r3[2], r3[3]
    -- a0 (a4 a8 - a5 a7) - a1 (a3 a8 - a5 a6) + a2 (a3 a7 - a4 a6), as in C
    local c0, c1, c2 = dif2(a4, a8, a5, a7), dif2(a3, a8, a5, a6), dif2(a3, a7, a4, a6)
    return finite_result(fin(acc(a2, c2, accsub(a1, c1, acc(a0, c0, 0, 0, 0, 0, false)))), "mat3:det")
end

local function trace(a)
    local A = mat(a, "trace")
    return finite_result(sadd(sadd(A[1][1], A[2][2]), A[3][3]), "mat3:trace")
end

local function inv(a)
    local A = mat(a, "inv")
    local r1, r2, r3 = A[1], A[2], A[3]
    local a0, a1, a2, a3, a4, a5, a6, a7, a8 = r1[1], r1[2], r1[3], r2[1], r2[2], r2[3], r3[1], r3[2], r3[3]
    local d = det(A)
    if not (mabs(val(d)) > 1e-300) then error("mat3:inv: the matrix is singular", 2) end
    return newmat(
        newvec(sdiv(dif2(a4, a8, a5, a7), d), sdiv(dif2(a2, a7, a1, a8), d), sdiv(dif2(a1, a5, a2, a4), d)),
        newvec(sdiv(dif2(a5, a6, a3, a8), d), sdiv(dif2(a0, a8, a2, a6), d), sdiv(dif2(a2, a3, a0, a5), d)),
        newvec(sdiv(dif2(a3, a7, a4, a6), d), sdiv(dif2(a1, a6, a0, a7), d), sdiv(dif2(a0, a4, a1, a3), d)))
end

-- ================================================================ dual vec3 / mat3 metatables

local VM = {} -- vec3 methods
VM.dot, VM.cross = dot, cross
function VM.norm(v) return vec_norm(vec(v, "vec3:norm"), v) end
function VM.normalized(v)
    local n = VM.norm(v)
    if not (val(n) > 0) then error("vec3:normalized: the zero vector has no direction", 2) end
    return div(v, n)
end
function VM.totable(v) return { v[1], v[2], v[3] } end
function VM.copy(v) return newvec(v[1], v[2], v[3]) end

local MM = {} -- mat3 methods
MM.T, MM.det, MM.trace, MM.inv = transpose, det, trace, inv
function MM.norm(M) return mat_norm(mat(M, "mat3:norm"), M) end
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
    local r = M[i]
    return newvec(r[1], r[2], r[3])
end
function MM.col(M, j)
    if j ~= 1 and j ~= 2 and j ~= 3 then error("bad argument #1 to 'col' (column index 1..3 expected)", 2) end
    return newvec(M[1][j], M[2][j], M[3][j])
end
function MM.copy(M) return newmat(MM.row(M, 1), MM.row(M, 2), MM.row(M, 3)) end

local XYZ = { x = 1, y = 2, z = 3 }

DV.__index = function(v, k)
    local i = XYZ[k]
    if i then
        if type(v) ~= "table" then error(fmt("__index: lf.dual.vec3 expected, got %s", typename(v)), 2) end -- (called by hand)
        return rawget(v, i)
    end
    if type(k) == "number" then error(fmt("vec3 index out of range: %s (expected 1, 2 or 3)", tostring(k)), 2) end
    return VM[k]
end
DV.__newindex = function(v, k, x)
    local i = XYZ[k]
    if not i then error(fmt("vec3: cannot set field %s (use 1..3 or x/y/z)", tostring(k)), 2) end
    if not isscalar(x) then error(fmt("vec3 component: number expected, got %s", typename(x)), 2) end
    rawset(v, i, x)
end
DM.__index = function(_, k)
    if type(k) == "number" then
        error(fmt("mat3 row index out of range: %s (expected 1, 2 or 3)", tostring(k)), 2)
    end
    return MM[k]
end
DM.__newindex = function(_, k) error(fmt("mat3: cannot set field %s", tostring(k)), 2) end

local function eqvals(a, b)
    local ka = kind(a)
    if ka ~= kind(b) or (ka ~= 3 and ka ~= 9) then return false end
    if ka == 3 then
        local x, y = vec(a), vec(b)
        return val(x[1]) == val(y[1]) and val(x[2]) == val(y[2]) and val(x[3]) == val(y[3])
    end
    local A, B = mat(a), mat(b)
    for i = 1, 3 do
        for j = 1, 3 do
            if val(A[i][j]) ~= val(B[i][j]) then return false end
        end
    end
    return true
end

for _, mt in ipairs { DV, DM } do
    mt.__add, mt.__sub, mt.__mul, mt.__div, mt.__unm, mt.__pow = add, sub, mul, div, unm, pow
    mt.__eq = eqvals
end
DV.__tostring = function(v)
    if getmetatable(v) ~= DV then error(fmt("dual.vec3 __tostring: dual vec3 expected, got %s", typename(v)), 2) end
    return fmt("dual.vec3{%s, %s, %s}", tostring(v[1]), tostring(v[2]), tostring(v[3]))
end
DM.__tostring = function(M)
    if getmetatable(M) ~= DM then error(fmt("dual.mat3 __tostring: dual mat3 expected, got %s", typename(M)), 2) end
    local rows = {}
    for i = 1, 3 do
        local r = M[i]
        rows[i] = fmt("{%s, %s, %s}", tostring(r[1]), tostring(r[2]), tostring(r[3]))
    end
    return "dual.mat3{" .. table.concat(rows, ",\n          ") .. "}"
end

-- ================================================================ elementary functions (ad.math)

local function checkd(x, fname)
    if getmetatable(x) ~= D then
        error(fmt("bad argument #1 to '%s' (number or dual expected, got %s)", fname, typename(x)), 3)
    end
end

local M = {}
M.pi, M.huge = math.pi, math.huge

function M.sqrt(x)
    if type(x) == "number" then return msqrt(x) end
    if is_rev(x) then return RMATH.sqrt(x) end
    checkd(x, "sqrt")
    return ssqrt(x)
end

function M.exp(x)
    if type(x) == "number" then return mexp(x) end
    if is_rev(x) then return RMATH.exp(x) end
    checkd(x, "exp")
    local e = mexp(x[1])
    return lift(x, e, e)
end

function M.log(x, base)
    if base == nil then
        if type(x) == "number" then return mlog(x) end
        if is_rev(x) then return RMATH.log(x) end
        checkd(x, "log")
        return lift(x, mlog(x[1]), 1 / x[1])
    end
    if type(x) == "number" and type(base) == "number" then return mlog(x, base) end
    if is_rev(x) or is_rev(base) then return RMATH.log(x, base) end
    return sdiv(M.log(x), M.log(base))
end

function M.sin(x)
    if type(x) == "number" then return msin(x) end
    if is_rev(x) then return RMATH.sin(x) end
    checkd(x, "sin")
    return lift(x, msin(x[1]), mcos(x[1]))
end

function M.cos(x)
    if type(x) == "number" then return mcos(x) end
    if is_rev(x) then return RMATH.cos(x) end
    checkd(x, "cos")
    return lift(x, mcos(x[1]), -msin(x[1]))
end

function M.tan(x)
    if type(x) == "number" then return mtan(x) end
    if is_rev(x) then return RMATH.tan(x) end
    checkd(x, "tan")
    local t = mtan(x[1])
    return lift(x, t, 1 + t * t)
end

function M.asin(x)
    if type(x) == "number" then return masin(x) end
    if is_rev(x) then return RMATH.asin(x) end
    checkd(x, "asin")
    local v = x[1]
    return lift_singular(x, masin(v), 1 / msqrt((1 - v) * (1 + v)))
end

function M.acos(x)
    if type(x) == "number" then return macos(x) end
    if is_rev(x) then return RMATH.acos(x) end
    checkd(x, "acos")
    local v = x[1]
    return lift_singular(x, macos(v), -1 / msqrt((1 - v) * (1 + v)))
end

-- atan2(y, x) = the angle of (x, y); d = (x dy - y dx)/(x^2 + y^2)
local function satan2(y, x)
    if type(y) == "number" and type(x) == "number" then return matan(y, x) end
    local yv, xv = val(y), val(x)
    local r2 = xv * xv + yv * yv
    local fy, fx = xv / r2, -yv / r2
    local g = { matan(yv, xv), 0, 0, 0 }
    local ty = type(y) ~= "number"
    local tx = type(x) ~= "number"
    for k = 2, 4 do
        g[k] = (ty and fy * y[k] or 0) + (tx and fx * x[k] or 0)
    end
    return setmetatable(g, D)
end

function M.atan(y, x)
    if x == nil then
        if type(y) == "number" then return matan(y) end
        if is_rev(y) then return RMATH.atan(y) end
        checkd(y, "atan")
        local v = y[1]
        return lift(y, matan(v), 1 / (1 + v * v))
    end
    if is_rev(y) or is_rev(x) then return RMATH.atan(y, x) end
    if not isscalar(y) then checkd(y, "atan") end
    if not isscalar(x) then
        error(fmt("bad argument #2 to 'atan' (number or dual expected, got %s)", typename(x)), 2)
    end
    return satan2(y, x)
end

function M.atan2(y, x)
    if is_rev(y) or is_rev(x) then return RMATH.atan2(y, x) end
    if not isscalar(y) then checkd(y, "atan2") end
    if not isscalar(x) then
        error(fmt("bad argument #2 to 'atan2' (number or dual expected, got %s)", typename(x)), 2)
    end
    return satan2(y, x)
end

function M.abs(x)
    if type(x) == "number" then return mabs(x) end
    if is_rev(x) then return RMATH.abs(x) end
    checkd(x, "abs")
    if x[1] < 0 then return sunm(x) end
    return x
end

function M.pow(a, b)
    if is_rev(a) or is_rev(b) then return RMATH.pow(a, b) end
    return pow(a, b)
end

local function minmax(fname, less, ...)
    local n = select("#", ...)
    if n == 0 then error(fmt("bad argument #1 to '%s' (number expected, got no value)", fname), 3) end
    local best = ...
    if not isscalar(best) then checkd(best, fname) end
    for i = 2, n do
        local x = select(i, ...)
        if not isscalar(x) then
            error(fmt("bad argument #%d to '%s' (number or dual expected, got %s)", i, fname, typename(x)), 3)
        end
        if less(val(x), val(best)) then best = x end
    end
    return best
end
local function lt(a, b) return a < b end
local function gt(a, b) return a > b end
local function any_rev(...)
    for i = 1, select("#", ...) do
        if is_rev((select(i, ...))) then return true end
    end
    return false
end
function M.min(...)
    if any_rev(...) then return RMATH.min(...) end
    return minmax("min", lt, ...)
end
function M.max(...)
    if any_rev(...) then return RMATH.max(...) end
    return minmax("max", gt, ...)
end

-- ================================================================ SO(3) maps on duals

local function hat(x)
    local v = vec(x, "so3.hat")
    local x1, x2, x3 = v[1], v[2], v[3]
    return newmat(newvec(0, sunm(x3), x2), newvec(x3, 0, sunm(x1)), newvec(sunm(x2), x1, 0))
end

local function vee_of(A) -- A indexable M[i][j]
    return smul(0.5, ssub(A[3][2], A[2][3])), smul(0.5, ssub(A[1][3], A[3][1])), smul(0.5, ssub(A[2][1], A[1][2]))
end

local function vee(W)
    return newvec(vee_of(mat(W, "so3.vee")))
end

-- a I + b hat(x) + c hat(x)^2, with hat(x)^2 = x x^T - |x|^2 I (the entry order of C's quadratic)
local function quadratic(x1, x2, x3, z, a, b, c)
    local d0 = ssub(a, smul(c, z))
    local cx1, cx2, cx3 = smul(c, x1), smul(c, x2), smul(c, x3)
    local bx1, bx2, bx3 = smul(b, x1), smul(b, x2), smul(b, x3)
    return newmat(
        newvec(sadd(smul(cx1, x1), d0), ssub(smul(cx1, x2), bx3), sadd(smul(cx1, x3), bx2)),
        newvec(sadd(smul(cx2, x1), bx3), sadd(smul(cx2, x2), d0), ssub(smul(cx2, x3), bx1)),
        newvec(ssub(smul(cx3, x1), bx2), sadd(smul(cx3, x2), bx1), sadd(smul(cx3, x3), d0)))
end

-- Taylor coefficients in z = t^2: A(z) = sin t/t = sum (-1)^k z^k/(2k+1)!,
-- B(z) = (1 - cos t)/t^2 = sum (-1)^k z^k/(2k+2)!. For z < 1/4 ten terms leave < 1e-19.
local SA, SB = {}, {}
do
    local f = 1 -- (2k)!
    for k = 0, 9 do
        local sign = k % 2 == 0 and 1 or -1
        f = f * (2 * k + 1)
        SA[k + 1] = sign / f
        f = f * (2 * k + 2)
        SB[k + 1] = sign / f
    end
end

-- value and d/dz of a power series sum c[k+1] z^k
local function series(c, n, z)
    local s, ds = c[n], 0
    for k = n - 1, 1, -1 do
        ds = ds * z + s
        s = s * z + c[k]
    end
    return s, ds
end

-- A, B and dA/dz, dB/dz at z = |x|^2
local function coef_ab(z)
    if z < 0.25 then
        local A, dA = series(SA, 10, z)
        local B, dB = series(SB, 10, z)
        return A, B, dA, dB
    end
    local t = msqrt(z)
    local h = msin(0.5 * t) / (0.5 * t)
    local A, B = msin(t) / t, 0.5 * h * h
    return A, B, (mcos(t) - A) / (2 * z), (0.5 * A - B) / z
end

local function so3_exp(x)
    local v = vec(x, "so3.exp")
    local x1, x2, x3 = v[1], v[2], v[3]
    local z = dot3(x1, x2, x3, x1, x2, x3)
    local A, B, dA, dB = coef_ab(val(z))
    return quadratic(x1, x2, x3, z, 1, lift(z, A, dA), lift(z, B, dB))
end

local function so3_cay(x)
    local v = vec(x, "so3.cay")
    local x1, x2, x3 = v[1], v[2], v[3]
    local z = dot3(x1, x2, x3, x1, x2, x3)
    local q = sdiv(1, sadd(4, z))
    return quadratic(x1, x2, x3, z, 1, smul(4, q), smul(2, q))
end

-- h(y) = atan(sqrt y)/sqrt y = sum (-1)^k y^k/(2k+1), with h'(y); series below y = 0.01
local SH = {}
for k = 0, 11 do SH[k + 1] = (k % 2 == 0 and 1 or -1) / (2 * k + 1) end
local function coef_h(y)
    if y < 0.01 then return series(SH, 12, y) end
    local u = msqrt(y)
    local h = matan(u) / u
    return h, (1 / (1 + y) - h) / (2 * y)
end

-- The C so3.log / dist / angle refuse an argument that is not a rotation (||R^T R - I|| > 1e-9 or
-- det R != 1); their dual versions check the values the same way (a dual "rotation" far from SO(3)
-- would give a silently wrong angle, or NaN when its entries overflow).
local function check_rotation(A, what)
    local r1, r2, r3 = A[1], A[2], A[3]
    local msg = core.so3._check(val(r1[1]), val(r1[2]), val(r1[3]), val(r2[1]), val(r2[2]), val(r2[3]),
        val(r3[1]), val(r3[2]), val(r3[3]), what)
    if msg then raise_at_caller(msg) end
end

local function so3_log(R)
    local A = mat(R, "so3.log")
    check_rotation(A, "argument #1 to 'so3.log'")
    local s1, s2, s3 = vee_of(A)
    local c = smul(0.5, ssub(sadd(sadd(A[1][1], A[2][2]), A[3][3]), 1))
    local cv = val(c)
    local w = dot3(s1, s2, s3, s1, s2, s3) -- |s|^2 = sin^2 t
    if cv > 0 then
        -- t < pi/2: x = s t/|s|, t/|s| = h(tan^2 t)/c, smooth in (s, c) also at t = 0
        local y = sdiv(w, smul(c, c))
        local h, dh = coef_h(val(y))
        local k = sdiv(lift(y, h, dh), c)
        return newvec(smul(s1, k), smul(s2, k), smul(s3, k))
    end
    -- t >= pi/2: the axis from the symmetric part (R + R^T)/2 = c I + (1 - c) n n^T, column k with
    -- the largest diagonal entry (as in C), sign from s = sin(t) n
    local kk = 1
    for i = 2, 3 do
        if val(A[i][i]) > val(A[kk][kk]) then kk = i end
    end
    local n = {}
    for i = 1, 3 do n[i] = smul(0.5, sadd(A[i][kk], A[kk][i])) end
    n[kk] = ssub(n[kk], c)
    local nn = vnorm(n)
    local n1, n2, n3 = sdiv(n[1], nn), sdiv(n[2], nn), sdiv(n[3], nn)
    local wv = val(w)
    local t = satan2(wv > 0 and ssqrt(w) or 0, c)
    local d = val(s1) * val(n1) + val(s2) * val(n2) + val(s3) * val(n3)
    if d == 0 then
        for _, e in ipairs { val(n1), val(n2), val(n3) } do
            if e ~= 0 then d = e break end
        end
    end
    if d < 0 then t = sunm(t) end
    return newvec(smul(n1, t), smul(n2, t), smul(n3, t))
end

local function so3_dist(a, b)
    local A, B = mat(a, "so3.dist"), mat(b, "so3.dist")
    check_rotation(A, "argument #1 to 'so3.dist'")
    check_rotation(B, "argument #2 to 'so3.dist'")
    local s1, s2, s3, s4, s5 = 0, 0, 0, 0, false
    for i = 1, 3 do
        local p, q = A[i], B[i]
        for j = 1, 3 do
            local e = ssub(p[j], q[j])
            s1, s2, s3, s4, s5 = acc(e, e, s1, s2, s3, s4, s5)
        end
    end
    return ssqrt(fin(s1, s2, s3, s4, s5))
end

local function so3_angle(a, b)
    local A = mat(a, "so3.angle")
    check_rotation(A, "argument #1 to 'so3.angle'")
    local Mt -- A^T B
    if b == nil then
        Mt = A
    else
        local B = mat(b, "so3.angle")
        check_rotation(B, "argument #2 to 'so3.angle'")
        Mt = matmul(transpose(A), B)
    end
    local s1, s2, s3 = vee_of(Mt)
    local c = smul(0.5, ssub(sadd(sadd(Mt[1][1], Mt[2][2]), Mt[3][3]), 1))
    return satan2(ssqrt(dot3(s1, s2, s3, s1, s2, s3)), c)
end

-- The error a function raises when it hands a dual to a function that takes numbers only (a local
-- alias of math.sqrt, string.format, ...): explain it.
local function explain(msg, what)
    msg = tostring(msg)
    if msg:find("number expected, got table", 1, true) or msg:find("number expected, got lf.dual", 1, true)
        or msg:find("number expected, got lf.reverse", 1, true) then
        return fmt("%s cannot be differentiated: it passes an autodiff value to a function of plain numbers " ..
            "(a local alias like `local sqrt = math.sqrt`? call math.sqrt in it; or give the derivative " ..
            "yourself): %s", what, msg)
    end
    return msg
end

-- ================================================================ torque of a Lua potential

-- R (I + hat(eps)) with eps the three seed directions: entry (i, j) has derivative (R hat(e_l))_ij
-- along direction l: column 1 (0, -R_i3, R_i2), column 2 (R_i3, 0, -R_i1), column 3 (-R_i2, R_i1, 0).
local function seeded(R)
    local A = mat(R, "autodiff torque")
    local rows = {}
    for i = 1, 3 do
        local r = A[i]
        local r1, r2, r3 = val(r[1]), val(r[2]), val(r[3])
        rows[i] = newvec(setmetatable({ r1, 0, -r3, r2 }, D), setmetatable({ r2, r3, 0, -r1 }, D),
            setmetatable({ r3, -r2, r1, 0 }, D))
    end
    return setmetatable(rows, DM)
end

local function body_torque(u, what)
    if type(u) == "number" then -- U does not depend on this body here: no torque (if U is finite)
        if u ~= u or u == mhuge or u == -mhuge then error(fmt("%s is not finite (%s) at this R", what, tostring(u)), 0) end
        return cvec3(0, 0, 0)
    end
    if getmetatable(u) == D then
        local g1, g2, g3 = u[2], u[3], u[4]
        local v = u[1]
        if v ~= v or v == mhuge or v == -mhuge then
            error(fmt("%s is not finite (%s) at this R", what, tostring(v)), 0)
        end
        local s = g1 + g2 + g3
        if s ~= s or s == mhuge or s == -mhuge then -- NaN or inf in some component
            error(fmt("%s: the derivative is not finite (%s, %s, %s): U is not differentiable at this R " ..
                "(a function at a singular point, e.g. atan2(0, 0), log(0), x^b with b < 1 at 0)",
                what, tostring(g1), tostring(g2), tostring(g3)), 0)
        end
        return cvec3(-g1, -g2, -g3)
    end
    error(fmt("%s returned %s, expected a number", what, typename(u)), 0)
end

-- Forward or reverse mode. Forward mode evaluates U (or H) once per 3 directions ("passes"); reverse
-- mode evaluates it once on a tape and sweeps it back. Measured by bench/autodiff.lua (dipole pair
-- potential, all pairs): time of forward / reverse torques 0.98 for 1 body, 1.24 for 2, 1.48 for 3,
-- 1.73 for 4 — one reverse sweep costs about one forward pass. Reverse mode from 2 passes on.
local REVERSE_FROM = 2

local function choose(mode, passes, what)
    if mode == nil or mode == "auto" then return passes >= REVERSE_FROM and "reverse" or "forward" end
    if mode == "forward" or mode == "reverse" then return mode end
    error(fmt("%s: autodiff mode must be \"forward\", \"reverse\" or \"auto\", got %s", what, tostring(mode)), 3)
end

--- ad.torque(U, R [, nb [, mode]]) -> tau or {tau_1, ..., tau_nb}: the body torque(s) of a Lua potential
--- U(R) (U(Rs) for an array of rotations); mode "forward", "reverse" or "auto" (default: reverse from
--- REVERSE_FROM bodies on).
local function torque(U, R, nb, mode)
    if type(U) ~= "function" and not (getmetatable(U) and getmetatable(U).__call) then
        error(fmt("autodiff torque: potential function U expected, got %s", typename(U)), 2)
    end
    if nb == nil then -- a single rotation, or an array of them
        nb = (type(R) == "table" and getmetatable(R) == nil and kind(R[1]) == 9) and #R or 1
    elseif math.type(nb) ~= "integer" and not (type(nb) == "number" and nb == math.floor(nb) and nb >= 1 and nb < 2 ^ 31) then
        error(fmt("autodiff torque: the number of bodies must be an integer >= 1, got %s", typename(nb)), 2)
    end
    if choose(mode, nb, "autodiff torque") == "reverse" then return REV.torque(U, R, nb) end
    local function call(Rarg, what)
        local ok, u = pcall(U, Rarg)
        if not ok then error(explain(u, what), 0) end
        return u
    end
    if nb == 1 and kind(R) == 9 then
        return body_torque(call(seeded(R), "potential U(R)"), "potential U(R)")
    end
    if type(R) ~= "table" or #R ~= nb then
        error(fmt("autodiff torque: array of %d rotations expected, got %s", nb, typename(R)), 2)
    end
    local taus = {}
    for i = 1, nb do
        local Rs = {}
        for j = 1, nb do Rs[j] = R[j] end
        Rs[i] = seeded(R[i])
        taus[i] = body_torque(call(Rs, "potential U(Rs)"), "potential U(Rs)")
    end
    return taus
end

local ad_module = { math = M, torque = torque, reverse = REV, _choose = choose }
local ad = ad_module
-- the small-angle series of the SO(3) maps, shared with reverse mode
ad._so3_series = { ab = coef_ab, h = coef_h } -- for reverse.lua (internal)

-- ================================================================ functions written with the standard math

-- The standard math library with its functions made dual-aware (lf.math), the rest as it is.
local natural_math = setmetatable({}, { __index = function(_, k)
    local f = rawget(M, k)
    if f ~= nil then return f end
    return math[k]
end })

--- ad.natural(fn) -> fn: lets fn call math.sqrt, math.cos, ... on autodiff values. fn gets an _ENV
--- of its own (its upvalue is re-joined to a new cell: other functions of its chunk keep theirs)
--- whose `math` is the dual-aware lf.math and whose other names read and write the original
--- environment; so do the Lua functions fn reaches through its upvalues (the local helper
--- functions of its chunk), transitively. Functions fn reaches through globals are not changed.
--- Returns fn itself (changed in place).
function ad.natural(fn, seen)
    if type(fn) ~= "function" then error(fmt("lf.autodiff.natural: function expected, got %s", typename(fn)), 2) end
    if not debug or not debug.getupvalue then return fn end
    if type(seen) ~= "table" then seen = {} end
    if seen[fn] then return fn end
    seen[fn] = true
    for i = 1, 255 do
        local name, v = debug.getupvalue(fn, i)
        if name == nil then break end
        if name == "_ENV" then
            if type(v) == "table" and rawget(v, "math") ~= natural_math then
                local proxy = setmetatable({ math = natural_math }, { __index = v, __newindex = v })
                local holder = function() return proxy end -- its only upvalue is `proxy`
                debug.upvaluejoin(fn, i, holder, 1)
            end
        elseif type(v) == "function" and debug.getinfo(v, "S").what == "Lua" then
            ad.natural(v, seen)
        end
    end
    return fn
end

ad.explain = explain

-- ================================================================ along the action of a Lie group

-- The factors of a Lie-group ODE: {name = "so3" | "s2" | "s3" | "gl3" | "r<m>", nd = algebra dimension,
-- np = parameters} from the factor names.
local function factor_info(name)
    if type(name) ~= "string" then error(fmt("autodiff: factor names are strings (\"so3\", \"s2\", ...), got %s", typename(name)), 3) end
    if name == "so3" then return { name = name, nd = 3, np = 9 } end
    if name == "s2" then return { name = name, nd = 3, np = 3 } end
    if name == "s3" then return { name = name, nd = 3, np = 4 } end
    if name == "gl3" then return { name = name, nd = 9, np = 9 } end
    if name == "ts2" then return { name = name, nd = 6, np = 6 } end
    if name == "tgl3" then return { name = name, nd = 18, np = 18 } end
    local m = name:match("^r(%d+)$")
    if m then return { name = name, nd = tonumber(m), np = tonumber(m) } end
    error(fmt("autodiff: unknown factor '%s'", tostring(name)), 3)
end

-- The parameters of a factor's value as a flat array of numbers (matrices row-major).
local function flatten(name, v)
    local out = {}
    if name == "ts2" or name == "tgl3" then -- {q = vec3, omega = vec3} / {F = mat3, P = mat3} (or arrays of two)
        local k1, k2 = "q", "omega"
        if name == "tgl3" then k1, k2 = "F", "P" end
        for _, part in ipairs{v[k1] or v[1], v[k2] or v[2]} do
            if name == "ts2" then
                for i = 1, 3 do out[#out + 1] = val(part[i]) end
            else
                for i = 1, 3 do
                    local r = part[i]
                    for j = 1, 3 do out[#out + 1] = val(r[j]) end
                end
            end
        end
        return out
    end
    if name == "so3" or name == "gl3" then
        for i = 1, 3 do
            local r = v[i]
            for j = 1, 3 do out[#out + 1] = val(r[j]) end
        end
    else
        local n = name == "s2" and 3 or name == "s3" and 4 or #v
        for i = 1, n do out[i] = val(v[i]) end
    end
    return out
end

-- The factor's value with dual entries: parameter p is (x_p, T_{l0+1}[p], T_{l0+2}[p], T_{l0+3}[p]),
-- T the velocities of the action along the algebra's unit vectors (core.lie_tangents).
local function seed_value(name, x, T, l0)
    local function entry(p)
        local t1, t2, t3 = T[l0 + 1], T[l0 + 2], T[l0 + 3]
        return setmetatable({ x[p], t1 and t1[p] or 0, t2 and t2[p] or 0, t3 and t3[p] or 0 }, D)
    end
    local function m3(o)
        return newmat(newvec(entry(o + 1), entry(o + 2), entry(o + 3)), newvec(entry(o + 4), entry(o + 5), entry(o + 6)),
            newvec(entry(o + 7), entry(o + 8), entry(o + 9)))
    end
    if name == "so3" or name == "gl3" then
        return m3(0)
    elseif name == "ts2" then
        return { q = newvec(entry(1), entry(2), entry(3)), omega = newvec(entry(4), entry(5), entry(6)) }
    elseif name == "tgl3" then
        return { F = m3(0), P = m3(9) }
    elseif name == "s2" then
        return newvec(entry(1), entry(2), entry(3))
    end
    local t = {}
    for p = 1, #x do t[p] = entry(p) end
    return t
end

-- The scalars of an algebra element (vec3, dual vec3, mat3, dual mat3, a table of numbers / duals,
-- 3 rows), in row-major order.
local function scalars(x, out)
    out = out or {}
    local k = kind(x)
    if k == 3 then
        local v = vec(x, "autodiff")
        for i = 1, 3 do out[#out + 1] = v[i] end
    elseif k == 9 then
        local A = mat(x, "autodiff")
        for i = 1, 3 do for j = 1, 3 do out[#out + 1] = A[i][j] end end
    elseif type(x) == "table" then
        for i = 1, #x do
            local e = x[i]
            if type(e) == "number" or getmetatable(e) == D then out[#out + 1] = e else scalars(e, out) end
        end
    elseif type(x) == "number" or getmetatable(x) == D then
        out[#out + 1] = x
    else
        error(fmt("autodiff: cannot read %s as part of an algebra element", typename(x)), 0)
    end
    return out
end

local function derivative(e, l, what)
    if type(e) == "number" then return 0 end
    local d = e[l + 1]
    if d ~= d or d == mhuge or d == -mhuge then
        error(fmt("%s: the derivative is not finite (%s): not differentiable at this state", what, tostring(d)), 0)
    end
    return d
end

-- Apply fn(seeded y) for every chunk of <= 3 algebra directions of every factor; visit(col, l,
-- result) receives the result and the global algebra column of its direction l (1..3).
local function along_action(fn, y, names, triv, visit)
    local infos, y0 = {}, {}
    for i, n in ipairs(names) do infos[i] = factor_info(n) end
    local col = 0
    for i, f in ipairs(infos) do
        local x = flatten(f.name, y[i])
        local T = core.lie_tangents(f.name, triv, y[i])
        for l0 = 0, f.nd - 1, 3 do
            local ys = {}
            for j = 1, #y do ys[j] = y[j] end
            ys[i] = seed_value(f.name, x, T, l0)
            local ok, r = pcall(fn, ys)
            if not ok then error(explain(r, "the function"), 0) end
            for l = 1, math.min(3, f.nd - l0) do visit(col + l0 + l, l, r) end
        end
        col = col + f.nd
    end
    return col
end

--- ad.lie_jacobian(f, t, y, factors, trivialization) -> D (nd x nd rows): the Jacobian of the
--- vector field along the action, D[i][j] = d/de f(t, act(e e_j, y))_i at e = 0, by forward mode
--- (one evaluation of f per 3 algebra directions).
function ad.lie_jacobian(f, t, y, names, triv)
    local cols = {}
    local nd = along_action(function(ys) return f(t, ys) end, y, names, triv, function(col, l, r)
        local sc = scalars(r)
        local c = {}
        for i, e in ipairs(sc) do c[i] = derivative(e, l, "f(t, y)") end
        cols[col] = c
    end)
    local D = {}
    for i = 1, nd do
        D[i] = {}
        for j = 1, nd do D[i][j] = cols[j][i] or 0 end
    end
    return D
end

--- ad.lie_gradient(H, y, factors, trivialization [, mode]) -> g (nd numbers): the trivialized differential
--- of a scalar function, g_j = d/de H(act(e e_j, y)) at e = 0 (the dH of the first-integral form:
--- <dH(y), xi> = d/de H(act(e xi, y)) for the dot product of the algebra coordinates). mode "forward"
--- (one evaluation of H per 3 algebra directions of each factor), "reverse" (one evaluation for all
--- factors) or "auto" (default).
function ad.lie_gradient(H, y, names, triv, mode)
    local passes = 0
    for _, n in ipairs(names) do passes = passes + (factor_info(n).nd + 2) // 3 end
    if choose(mode, passes, "ad.lie_gradient") == "reverse" then return REV.lie_gradient(H, y, names, triv) end
    local g = {}
    along_action(H, y, names, triv, function(col, l, r)
        if type(r) ~= "number" and getmetatable(r) ~= D then
            error(fmt("H(y) returned %s, expected a number", typename(r)), 0)
        end
        g[col] = derivative(r, l, "H(y)")
    end)
    return g
end

-- ================================================================ gradients in R^3 (systems on spheres)

--- ad.r3_gradient(V, qs) -> {g_1, ..., g_n} (C vec3): the Euclidean gradient g_i = dV/dq_i of a scalar
--- function of n vectors (an array of vec3 / tables of 3 numbers), one evaluation of V per vector
--- with q_i seeded along e1, e2, e3 (the others constant). The gradient of lf.spheres' potentials.
function ad.r3_gradient(V, qs)
    if type(V) ~= "function" then error(fmt("ad.r3_gradient: function V(qs) expected, got %s", typename(V)), 2) end
    if type(qs) ~= "table" then error(fmt("ad.r3_gradient: array of vectors expected, got %s", typename(qs)), 2) end
    local n, g = #qs, {}
    local seeded = {}
    for j = 1, n do seeded[j] = qs[j] end
    for i = 1, n do
        local q = vec(qs[i], "ad.r3_gradient: qs[" .. i .. "]")
        local x, y, z = val(q[1]), val(q[2]), val(q[3])
        seeded[i] = newvec(setmetatable({ x, 1, 0, 0 }, D), setmetatable({ y, 0, 1, 0 }, D),
            setmetatable({ z, 0, 0, 1 }, D))
        local r = V(seeded)
        seeded[i] = qs[i]
        if type(r) == "number" then
            g[i] = cvec3(0, 0, 0)
        elseif getmetatable(r) == D then
            for l = 1, 3 do derivative(r, l, "V(qs)") end
            g[i] = cvec3(r[2], r[3], r[4])
        else
            error(fmt("V(qs) returned %s, expected a number", typename(r)), 0)
        end
    end
    return g
end

--- ad.algebra_elements(g, factors) -> {x_1, ...}: a flat array of algebra coordinates (nd numbers) as
--- one algebra element per factor (vec3 for so3/s2/s3, mat3 rows for gl3, {a, b} for ts2, {A, B}
--- for tgl3, m numbers for r<m>), the shape lf.lie_ode reads.
function ad.algebra_elements(g, names)
    local out, o = {}, 0
    for i, n in ipairs(names) do
        local f = factor_info(n)
        local function slice(a, b) local t = {} for k = a, b do t[#t + 1] = g[o + k] end return t end
        if n == "ts2" then out[i] = { slice(1, 3), slice(4, 6) }
        elseif n == "tgl3" then out[i] = { slice(1, 9), slice(10, 18) }
        else out[i] = slice(1, f.nd) end
        o = o + f.nd
    end
    return out
end

-- ================================================================ registration and the module table

local dual = core.dual
dual.__add, dual.__sub, dual.__mul, dual.__div, dual.__unm = add, sub, mul, div, unm
dual.dot, dual.cross, dual.T, dual.det, dual.trace, dual.norm = dot, cross, transpose, det, trace, norm
dual["so3.exp"], dual["so3.log"], dual["so3.cay"] = so3_exp, so3_log, so3_cay
dual["so3.hat"], dual["so3.vee"], dual["so3.dist"], dual["so3.angle"] = hat, vee, so3_dist, so3_angle
dual.torque = torque
dual.vec3 = function(a, b, c) -- lf.vec3 of duals: {x, y, z} or x, y, z
    if b ~= nil then
        local xs = { a, b, c }
        for i = 1, 3 do
            if not isscalar(xs[i]) then
                error(fmt("lf.vec3: component %d: number or forward-mode dual expected, got %s", i, typename(xs[i])), 2)
            end
        end
        return newvec(a, b, c)
    end
    local v = vec(a, "lf.vec3")
    return newvec(v[1], v[2], v[3])
end
dual.mat3 = function(t)
    local A = mat(t, "lf.mat3")
    return newmat(newvec(A[1][1], A[1][2], A[1][3]), newvec(A[2][1], A[2][2], A[2][3]), newvec(A[3][1], A[3][2], A[3][3]))
end


-- A dual scalar with value v and derivatives grad = {d1, d2, d3} (zeros if omitted).
function ad.dual(v, grad)
    if type(v) ~= "number" then error(fmt("ad.dual: number expected, got %s", typename(v)), 2) end
    if grad == nil then return setmetatable({ v, 0, 0, 0 }, D) end
    local g = vec(grad, "ad.dual gradient")
    return setmetatable({ v, val(g[1]), val(g[2]), val(g[3]) }, D)
end

-- Dual vec3 / mat3 from tables of numbers and duals (or C userdata: constant entries).
function ad.vec3(t)
    local v = vec(t, "ad.vec3")
    return newvec(v[1], v[2], v[3])
end
function ad.mat3(t)
    local A = mat(t, "ad.mat3")
    return newmat(ad.vec3(A[1]), ad.vec3(A[2]), ad.vec3(A[3]))
end

function ad.is_dual(x)
    local mt = getmetatable(x)
    return type(x) == "table" and type(mt) == "table" and rawget(mt, "__lf_dual") ~= nil
end

-- The value: a number for scalars, a C vec3 / mat3 for dual vectors / matrices.
function ad.value(x)
    local mt = getmetatable(x)
    if type(x) == "number" then return x end
    if is_rev(x) then return REV.value(x) end
    if mt == D then return x[1] end
    if mt == DV then return cvec3(val(x[1]), val(x[2]), val(x[3])) end
    if mt == DM then
        local t = {}
        for i = 1, 3 do
            local r = x[i]
            t[i] = { val(r[1]), val(r[2]), val(r[3]) }
        end
        return cmat3(t)
    end
    return x
end

local function dcomp(e, k)
    if type(e) == "number" then return 0 end
    return e[k + 1]
end

-- The three derivatives: numbers for a scalar, three C vec3 / mat3 for a dual vector / matrix.
-- A derivative that is not finite (the value went through a singular point, e.g. sqrt at 0 along a
-- direction in which its argument changes) is an error, not a silent inf/NaN.
local function finite_derivative(d, what)
    if type(d) ~= "number" then
        error(fmt("ad.grad: a dual value modified by hand (a derivative is %s, not a number)", typename(d)), 3)
    end
    if d ~= d or d == mhuge or d == -mhuge then
        error(fmt("ad.grad: the derivative of %s is %s (the value went through a singular point of a function, " ..
            "e.g. sqrt or |v| at 0)", what, tostring(d)), 3)
    end
    return d
end

function ad.grad(x)
    local mt = getmetatable(x)
    if type(x) == "number" then return 0, 0, 0 end
    if mt == D then
        return finite_derivative(x[2], "this dual"), finite_derivative(x[3], "this dual"),
            finite_derivative(x[4], "this dual")
    end
    if mt == DV then
        local g = {}
        for k = 1, 3 do
            g[k] = cvec3(finite_derivative(dcomp(x[1], k), "x"), finite_derivative(dcomp(x[2], k), "y"),
                finite_derivative(dcomp(x[3], k), "z"))
        end
        return g[1], g[2], g[3]
    end
    if mt == DM then
        local g = {}
        for k = 1, 3 do
            local t = {}
            for i = 1, 3 do
                local r = x[i]
                t[i] = { finite_derivative(dcomp(r[1], k), "an entry"), finite_derivative(dcomp(r[2], k), "an entry"),
                    finite_derivative(dcomp(r[3], k), "an entry") }
            end
            g[k] = cmat3(t)
        end
        return g[1], g[2], g[3]
    end
    if is_rev(x) then
        error(fmt("ad.grad: %s is a reverse-mode value: its derivatives exist only after the backward sweep " ..
            "(use lf.autodiff.reverse.gradient)", typename(x)), 2)
    end
    error(fmt("ad.grad: number or dual value expected, got %s", typename(x)), 2)
end

return ad
