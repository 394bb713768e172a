-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow.run.autodiff — automatic differentiation of Lua functions, on the expression graph.
--
-- A function is differentiated by running it once on traced values (lieflow.core: shared/trace.c): numbers,
-- vec3 and mat3 that record every operation — arithmetic, the methods of vec3 / mat3, lf.math and the
-- maps of lf.so3, lf.s2, lf.quat — into a graph in C, each node with its value at that point. One
-- reverse sweep over the graph gives the gradient with respect to every input (lf.autodiff.torque,
-- r3_gradient, lie_gradient, reverse.gradient); a dual made by lf.autodiff.dual carries three
-- directional derivatives forward (lf.autodiff.grad). The same graph, traced once for every input
-- instead of at one point, is what compiled models run (lf.compile, compile = on systems).
--
-- Inside a function being differentiated, comparisons (<, <=, ==) compare the values at the point;
-- a traced value kept after the function returned is refused when used again; a traced value
-- given to a function of plain numbers (a local alias `local sqrt = math.sqrt` taken outside the
-- function) is an error that says so. lf.autodiff.natural (applied by lieflow to the functions it
-- differentiates) gives a function a `math` that accepts traced values.
local core = require "lieflow.core"

local type, error, getmetatable, ipairs, select = type, error, getmetatable, ipairs, select
local fmt = string.format

local function typename(x)
    local mt = getmetatable(x)
    if type(mt) == "table" and type(rawget(mt, "__name")) == "string" then return mt.__name end
    return type(x)
end

local function callable(f) return type(f) == "function" or (getmetatable(f) and getmetatable(f).__call ~= nil) end

local ad = { math = core.math }

--- ad.natural(fn) -> fn: fn (and the Lua functions it reaches through upvalues) sees lf.math as math.
function ad.natural(fn)
    if type(fn) ~= "function" then error(fmt("lf.autodiff.natural: function expected, got %s", typename(fn)), 2) end
    return core.natural(fn)
end

--- ad.explain(message, what) -> message with the cause explained when a traced value reached a
--- function of plain numbers.
function ad.explain(msg, what)
    msg = tostring(msg)
    if msg:find("number expected, got", 1, true) and (msg:find("got lf.traced", 1, true) or msg:find("got table", 1, true)) then
        return fmt("%s cannot be differentiated: it passes a traced value to a function of plain numbers " ..
            "(a local alias like `local sqrt = math.sqrt`? call math.sqrt in it; or give the derivative " ..
            "yourself): %s", what, msg)
    end
    return msg
end

-- f's gradient at the arguments (one evaluation on traced values, one sweep); errors carry `what`
local function gradient(f, what, ...)
    local r = table.pack(pcall(core.trace_gradient, f, ...))
    if not r[1] then
        local m = tostring(r[2]):gsub("^f%(x%) cannot", what .. " cannot"):gsub("^autodiff: f%(x%)", what)
        error(m, 0)
    end
    return table.unpack(r, 2, r.n)
end

-- ================================================================ forward mode: dual values

--- ad.dual(v [, grad]) -> a traced number with value v and derivatives grad = {d1, d2, d3}.
function ad.dual(v, grad)
    if type(v) ~= "number" then error(fmt("ad.dual: number expected, got %s", typename(v)), 2) end
    if grad ~= nil and type(grad) ~= "table" and not core.is_traced(grad) then
        error(fmt("ad.dual: gradient {d1, d2, d3} expected, got %s", typename(grad)), 2)
    end
    if grad ~= nil and type(grad) ~= "table" then grad = grad:totable() end
    return core.dual(v, grad)
end

--- ad.vec3(t), ad.mat3(t): vectors and matrices of numbers and duals (lf.vec3 / lf.mat3 make the same).
function ad.vec3(t) return core.vec3(t) end
function ad.mat3(t) return core.mat3(t) end

ad.is_dual = core.is_traced
ad.value = core.traced_value

--- ad.grad(x) -> d1, d2, d3: numbers for a number, vec3 or mat3 for a dual vector or matrix.
function ad.grad(x)
    -- (a derivative that is not finite is an error of core.traced_grad)
    local r = table.pack(pcall(core.traced_grad, x))
    if not r[1] then error(r[2], 2) end
    return r[2], r[3], r[4]
end

-- ================================================================ gradients of Lua functions

-- tau_i = trhat(R_i^T G_i), G_i = dU/dR_i: the body torque tau . y = -d/de U(R exp(e hat y))
local function trhat_torque(R, G)
    local M = R:T() * G
    return core.vec3(M[2][3] - M[3][2], M[3][1] - M[1][3], M[1][2] - M[2][1])
end

-- R as a mat3 (one rotation) or an array of mat3 (several), each checked to be a rotation; nil and
-- a message otherwise
local function rotations(R)
  local function one(x, what)
    if type(x) ~= "table" and type(x) ~= "userdata" then return nil end
    local ok, M = pcall(core.mat3, x)
    if not ok then return nil end
    local rot, why = pcall(core.so3.log, M)
    if not rot then return nil, fmt("%s is not a rotation (%s)", what, tostring(why):gsub("^.-: ", "")) end
    return M
  end
  local M, why = one(R, "R")
  if M or why then return M, why end
  if type(R) ~= "table" or getmetatable(R) ~= nil or #R == 0 then return nil end
  local list = {}
  for i = 1, #R do
    local Mi, whyi = one(R[i], fmt("R[%d]", i))
    if not Mi then return nil, whyi or fmt("R[%d] is %s, expected a rotation (mat3)", i, typename(R[i])) end
    list[i] = Mi
  end
  return list, nil, true
end

--- ad.torque(U, R [, nb [, mode]]) -> tau or {tau_1, ...}: the body torque(s) of a potential U(R)
--- (U(Rs) for an array of rotations). mode ("forward", "reverse", "auto") is accepted for
--- compatibility: one reverse sweep gives every torque.
function ad.torque(U, R, nb, mode)
    if not callable(U) then error(fmt("autodiff torque: potential function U expected, got %s", typename(U)), 2) end
    if mode ~= nil and mode ~= "forward" and mode ~= "reverse" and mode ~= "auto" then
        error(fmt("autodiff torque: autodiff mode must be \"forward\", \"reverse\" or \"auto\", got %s", tostring(mode)), 2)
    end
    if nb ~= nil and math.type(nb) ~= "integer" and not (type(nb) == "number" and nb == math.floor(nb) and nb < 2^31) then
        error(fmt("autodiff torque: the number of bodies must be an integer >= 1, got %s", tostring(nb)), 2)
    end
    local Rs, why, many = rotations(R)
    if not Rs then
        error(fmt("autodiff torque: %s", why or ("a rotation (mat3) or an array of rotations expected, got " .. typename(R))), 2)
    end
    if nb ~= nil and nb > 1 and not many then
        error(fmt("autodiff torque: array of %d rotations expected, got %s", nb, typename(R)), 2)
    end
    local what = many and "potential U(Rs)" or "potential U(R)"
    local u, G = gradient(type(U) == "function" and core.natural(U) or U, what, Rs)
    if u ~= u or u == math.huge or u == -math.huge then error(fmt("%s is not finite (%s) at this R", what, tostring(u)), 2) end
    if not many then return trhat_torque(Rs, G) end
    local taus = {}
    for i = 1, #Rs do taus[i] = trhat_torque(Rs[i], G[i]) end
    return taus
end

--- ad.r3_gradient(V, qs) -> {dV/dq_1, ...}: the Euclidean gradients of a function of n vectors.
function ad.r3_gradient(V, qs)
    if not callable(V) then error(fmt("ad.r3_gradient: function V(qs) expected, got %s", typename(V)), 2) end
    if type(qs) ~= "table" or getmetatable(qs) ~= nil or rawlen(qs) == 0 then -- (read raw: a __len may lie)
        error(fmt("ad.r3_gradient: qs must be an array of vec3 (a plain table of one or more), got %s%s", typename(qs),
            type(qs) == "table" and getmetatable(qs) ~= nil and " with a metatable" or ""), 2)
    end
    local _, g = gradient(type(V) == "function" and core.natural(V) or V, "V(qs)", qs)
    return g
end

--- ad.lie_jacobian(f, t, y, factors, trivialization) -> D (nd rows of nd numbers): the Jacobian of a
--- Lie-group ODE's f along the action, D[i][j] = d/de f(t, exp(e e_j) . y)_i at e = 0.
function ad.lie_jacobian(f, t, y, factors, triv)
    if type(f) ~= "function" then error(fmt("autodiff lie_jacobian: function f expected, got %s", typename(f)), 2) end
    return core.lie_jacobian(core.natural(f), t, y, factors, triv)
end

--- ad.lie_gradient(H, y, factors, trivialization [, mode]) -> {g_1, ...}: the trivialized differential
--- g_j = d/de H(exp(e e_j) . y) at e = 0.
function ad.lie_gradient(H, y, factors, triv, mode)
    if type(H) ~= "function" then error(fmt("autodiff lie_gradient: function H expected, got %s", typename(H)), 2) end
    return core.lie_gradient(core.natural(H), y, factors, triv)
end

local NDIM = { so3 = 3, s2 = 3, s3 = 3, gl3 = 9, ts2 = 6, tgl3 = 18, se3 = 6 }

--- ad.algebra_elements(g, factors) -> one algebra element per factor from a flat array.
function ad.algebra_elements(g, names)
    local out, o = {}, 0
    for i, n in ipairs(names) do
        if type(n) ~= "string" then error(fmt("autodiff: factor names are strings (\"so3\", \"s2\", ...), got %s", typename(n)), 2) end
        local nd = NDIM[n] or tonumber(n:match("^r(%d+)$"))
        if not nd then error(fmt("autodiff: unknown factor '%s'", n), 2) end
        local function slice(a, b) local t = {} for k = a, b do t[#t + 1] = g[o + k] end return t end
        if n == "ts2" or n == "se3" then out[i] = { slice(1, 3), slice(4, 6) }
        elseif n == "tgl3" then out[i] = { slice(1, 9), slice(10, 18) }
        else out[i] = slice(1, nd) end
        o = o + nd
    end
    return out
end

-- ================================================================ reverse mode (the same sweep)

ad.reverse = {
    --- gradient(f, x1, ...) -> f(x1, ...), df/dx1, ...: each gradient in its argument's shape.
    gradient = function(f, ...)
        if not callable(f) then error(fmt("reverse.gradient: function f expected, got %s", typename(f)), 2) end
        if select("#", ...) == 0 then error("reverse.gradient: at least one argument to differentiate at", 2) end
        return gradient(type(f) == "function" and core.natural(f) or f, "f(x)", ...)
    end,
    torque = function(U, R, nb) return ad.torque(U, R, nb, "reverse") end,
    lie_gradient = function(H, y, factors, triv) return ad.lie_gradient(H, y, factors, triv, "reverse") end,
    -- names of earlier versions (functions of their own, so that lf.help finds their entries)
    is_value = function(x) return core.is_traced(x) end,
    value = function(x) return core.traced_value(x) end,
}

return ad
