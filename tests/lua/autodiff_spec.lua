-- SPDX-License-Identifier: GPL-3.0-or-later
-- busted spec for lf.autodiff: derivatives of Lua functions on the expression graph (lua/shared/trace.c,
-- lua/lib/autodiff.c, scripts/lieflow/run/autodiff.lua): dual numbers (forward mode), torques and gradients
-- (reverse mode), checked against hand derivatives, central differences and the C built-ins.
-- Run: cd /work/main && LUA_PATH="scripts/?.lua;scripts/?/init.lua;;" LUA_CPATH="build/lua/?.so;;" \
--        lua5.4 /usr/bin/busted --lua=lua5.4 tests/lua/autodiff_spec.lua
local core = require "lieflow.core"
local ad = require "lieflow.run.autodiff"
local M = ad.math
local so3 = core.so3

-- ---------------------------------------------------------------- helpers
local worst = {} -- label -> worst measured relative difference, printed at the end
local function record(label, r)
    if not worst[label] or r > worst[label] then worst[label] = r end
end

local function close(a, b, rtol, scale)
    local s = scale or math.max(math.abs(a), math.abs(b), 1e-300)
    return math.abs(a - b) <= rtol * s
end

local function assert_close(a, b, rtol, what, scale)
    assert(close(a, b, rtol, scale), string.format("%s: %.17g vs %.17g (rel %.3g)", what or "", a, b,
        math.abs(a - b) / (scale or math.max(math.abs(a), math.abs(b), 1e-300))))
end

-- flatten a number / C vec3 / C mat3 into an array of numbers
local function flat(x)
    if type(x) == "number" then return { x } end
    local t = x:totable()
    if type(t[1]) == "table" then
        return { t[1][1], t[1][2], t[1][3], t[2][1], t[2][2], t[2][3], t[3][1], t[3][2], t[3][3] }
    end
    return t
end

local function seeds(p)
    return { ad.dual(p[1], { 1, 0, 0 }), ad.dual(p[2], { 0, 1, 0 }), ad.dual(p[3], { 0, 0, 1 }) }
end

-- V{...}: a dual vec3 when any entry is dual, else a C vec3
local function V(p)
    if ad.is_dual(p[1]) or ad.is_dual(p[2]) or ad.is_dual(p[3]) then return ad.vec3(p) end
    return core.vec3(p)
end

local function vnorm(t)
    local s = 0
    for i = 1, #t do s = s + t[i] * t[i] end
    return math.sqrt(s)
end

-- Compare the derivatives of f: R^3 -> number/vec3/mat3 (written once, evaluated on duals and on
-- numbers) with a 4-point central difference. Returns the worst difference relative to the norm of
-- the Jacobian column. Also checks that the dual value equals the plain value.
local function jac_check(f, p, label, rtol, h)
    h = h or 1e-3
    local y = f(seeds(p))
    local y0 = flat(f(p))
    local yv = flat(ad.value(y))
    assert.are.equal(#y0, #yv)
    for i = 1, #y0 do assert_close(yv[i], y0[i], 1e-14, label .. " value", math.max(vnorm(y0), 1)) end
    local g = { ad.grad(y) }
    local wrst = 0
    for k = 1, 3 do
        local function at(s)
            local q = { p[1], p[2], p[3] }
            q[k] = q[k] + s
            return flat(f(q))
        end
        local a, b, c, d = at(h), at(-h), at(2 * h), at(-2 * h)
        local fd = {}
        for i = 1, #a do fd[i] = (8 * (a[i] - b[i]) - (c[i] - d[i])) / (12 * h) end
        local gk = flat(g[k])
        local scale = math.max(vnorm(fd), 1e-8)
        for i = 1, #fd do
            local r = math.abs(gk[i] - fd[i]) / scale
            if r > wrst then wrst = r end
        end
    end
    record(label, wrst)
    assert(wrst <= (rtol or 1e-6), string.format("%s: derivative differs from finite differences by %.3g", label, wrst))
    return wrst
end

-- U(R exp(e hat e_k)) derivative by a 4-point central difference: the torque is minus it.
local function fd_torque(U, R, h)
    h = h or 1e-3
    local tau = {}
    for k = 1, 3 do
        local function u(s)
            local x = { 0, 0, 0 }
            x[k] = s
            return U(R * so3.exp(x))
        end
        tau[k] = -(8 * (u(h) - u(-h)) - (u(2 * h) - u(-2 * h))) / (12 * h)
    end
    return tau
end

local function reldiff(a, b) -- arrays or vec3
    a, b = flat(core.vec3(a)), flat(core.vec3(b))
    local d = { a[1] - b[1], a[2] - b[2], a[3] - b[3] }
    return vnorm(d) / math.max(vnorm(b), 1e-300)
end

local I = so3.I
local Rm = so3.exp { 2.5 / math.sqrt(2), 0, 2.5 / math.sqrt(2) }

-- ---------------------------------------------------------------- specs
describe("lieflow.run.autodiff", function()
    it("every traced map is in the dispatch table of traced values", function()
        local disp = getmetatable(ad.dual(1)).__lf_dual
        for _, name in ipairs { "__add", "__sub", "__mul", "__div", "__unm", "dot", "cross", "T", "det", "trace",
            "norm", "so3.exp", "so3.log", "so3.cay", "so3.hat", "so3.vee", "so3.dist", "so3.angle", "so3.dexp",
            "so3.dexpinv", "so3.dcay", "so3.dcayinv", "so3.cayinv", "so3.Ad", "s2.dist", "s2.exp", "s2.midpoint",
            "s2.retract", "s2.retract_inv", "s2.tangent", "quat.mul", "quat.exp", "quat.log", "quat.to_matrix",
            "quat.from_matrix", "quat.conj", "vec3", "mat3" } do
            assert.is_function(disp[name], name)
        end
    end)

    describe("dual scalars", function()
        local x = ad.dual(1.3, { 1, 0, 0 })
        local y = ad.dual(-0.7, { 0, 1, 0 })
        local z = ad.dual(2.1, { 0, 0, 1 })

        local function check(d, v, g1, g2, g3, tol)
            tol = tol or 1e-15
            assert.is_true(ad.is_dual(d))
            assert_close(ad.value(d), v, tol, "value")
            local a, b, c = ad.grad(d)
            assert_close(a, g1, tol, "d1", math.max(1, math.abs(g1)))
            assert_close(b, g2, tol, "d2", math.max(1, math.abs(g2)))
            assert_close(c, g3, tol, "d3", math.max(1, math.abs(g3)))
        end

        it("construct, read and print", function()
            assert.are.equal(1.3, ad.value(x))
            assert.are.same({ 1, 0, 0 }, { ad.grad(x) })
            assert.are.same({ 0, 0, 0 }, { ad.grad(ad.dual(5)) })
            assert.are.same({ 0, 0, 0 }, { ad.grad(4) })
            assert.are.equal(4, ad.value(4))
            assert.is_false(ad.is_dual(4))
            assert.is_false(ad.is_dual({ 1, 2, 3 }))
            assert.is_false(ad.is_dual(core.vec3 { 1, 2, 3 }))
            assert.are.equal("traced{1.3}", tostring(x))
            assert.is_truthy(getmetatable(x).__lf_dual)
        end)

        it("arithmetic matches hand derivatives", function()
            check(x + y, 0.6, 1, 1, 0)
            check(x + 2, 3.3, 1, 0, 0)
            check(2 + x, 3.3, 1, 0, 0)
            check(x - y, 2.0, 1, -1, 0)
            check(1 - x, 1 - 1.3, -1, 0, 0)
            check(x - 1, 1.3 - 1, 1, 0, 0)
            check(x * y, 1.3 * -0.7, -0.7, 1.3, 0)
            check(3 * x, 3.9, 3, 0, 0)
            check(x * 3, 3.9, 3, 0, 0)
            check(x / y, 1.3 / -0.7, 1 / -0.7, -1.3 / 0.49, 0)
            check(1 / x, 1 / 1.3, -1 / 1.69, 0, 0)
            check(x / 2, 0.65, 0.5, 0, 0)
            check(-x, -1.3, -1, 0, 0)
            check(x ^ 2, 1.69, 2.6, 0, 0)
            check(x ^ 3, 1.3 ^ 3, 3 * 1.69, 0, 0)
            check(x ^ 0.5, math.sqrt(1.3), 0.5 / math.sqrt(1.3), 0, 0)
            check(2 ^ x, 2 ^ 1.3, 2 ^ 1.3 * math.log(2), 0, 0)
            check(x ^ z, 1.3 ^ 2.1, 2.1 * 1.3 ^ 1.1, 0, 1.3 ^ 2.1 * math.log(1.3))
            check(y ^ 2, 0.49, 0, -1.4, 0)        -- negative base, constant exponent
            check(y ^ ad.dual(3), -0.343, 0, 3 * 0.49, 0) -- dual exponent without derivative
            -- a composite: f = x y^2 / z + x, df = (y^2/z + 1, 2 x y / z, -x y^2 / z^2)
            check(x * y * y / z + x, 1.3 * 0.49 / 2.1 + 1.3, 0.49 / 2.1 + 1, 2 * 1.3 * -0.7 / 2.1,
                -1.3 * 0.49 / 2.1 ^ 2, 1e-14)
        end)

        it("compares on values", function()
            assert.is_true(y < x)
            assert.is_true(x > y)
            assert.is_true(x < 2)
            assert.is_true(2 > x)
            assert.is_true(x <= 1.3)
            assert.is_true(1.3 >= x)
            assert.is_false(x < 1.3)
            assert.is_true(x == ad.dual(1.3, { 0, 5, 0 }))
            assert.is_false(x == y)
            assert.has_error(function() return x < "a" end)
        end)

        it("ad.math on numbers returns the math.* results", function()
            for _, f in ipairs { "sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "abs" } do
                assert.are.equal(math[f](0.37), M[f](0.37), f)
            end
            assert.are.equal(math.atan(0.3, -0.4), M.atan(0.3, -0.4))
            assert.are.equal(math.atan(0.3, -0.4), M.atan2(0.3, -0.4))
            assert.are.equal(math.log(8, 2), M.log(8, 2))
            assert.are.equal(2 ^ 0.3, M.pow(2, 0.3))
            assert.are.equal(-3, M.min(4, -3, 5))
            assert.are.equal(5, M.max(4, -3, 5))
            assert.are.equal(math.pi, M.pi)
        end)

        it("ad.math on duals matches hand derivatives", function()
            local u = ad.dual(0.37, { 1, 0, 0 })
            local v = 0.37
            check(M.sqrt(u), math.sqrt(v), 0.5 / math.sqrt(v), 0, 0)
            check(M.exp(u), math.exp(v), math.exp(v), 0, 0)
            check(M.log(u), math.log(v), 1 / v, 0, 0)
            check(M.log(u, 2), math.log(v, 2), 1 / (v * math.log(2)), 0, 0)
            check(M.sin(u), math.sin(v), math.cos(v), 0, 0)
            check(M.cos(u), math.cos(v), -math.sin(v), 0, 0)
            check(M.tan(u), math.tan(v), 1 / math.cos(v) ^ 2, 0, 0, 1e-14)
            check(M.asin(u), math.asin(v), 1 / math.sqrt(1 - v * v), 0, 0)
            check(M.acos(u), math.acos(v), -1 / math.sqrt(1 - v * v), 0, 0)
            check(M.atan(u), math.atan(v), 1 / (1 + v * v), 0, 0)
            check(M.abs(-u), v, 1, 0, 0)
            check(M.abs(u), v, 1, 0, 0)
            check(M.pow(u, 3), v ^ 3, 3 * v * v, 0, 0)
            -- atan2(y, x): d = (x dy - y dx) / (x^2 + y^2)
            local yy, xx = ad.dual(0.3, { 1, 0, 0 }), ad.dual(-0.4, { 0, 1, 0 })
            check(M.atan2(yy, xx), math.atan(0.3, -0.4), -0.4 / 0.25, -0.3 / 0.25, 0)
            check(M.atan(yy, xx), math.atan(0.3, -0.4), -0.4 / 0.25, -0.3 / 0.25, 0)
            check(M.atan2(yy, -0.4), math.atan(0.3, -0.4), -0.4 / 0.25, 0, 0)
            check(M.atan2(0.3, xx), math.atan(0.3, -0.4), 0, -0.3 / 0.25, 0)
            -- min / max select the chosen argument (its value and derivatives)
            check(M.min(u, 1, 2), 0.37, 1, 0, 0)
            check(M.min(u, -1, 2), -1, 0, 0, 0)
            check(M.max(u, -1, 0.2), 0.37, 1, 0, 0)
        end)

        it("ad.math rejects other types clearly", function()
            assert.has_error(function() M.sqrt("x") end)
            assert.has_error(function() M.exp(ad.vec3 { ad.dual(1), 2, 3 }) end,
                "argument #1 to 'math.exp': a number expected, got a traced vec3")
            -- the standard math library refuses duals (it does not silently drop the derivative)
            assert.has_error(function() math.sqrt(x) end)
        end)
    end)

    describe("dual vec3 and mat3", function()
        local a = ad.vec3 { ad.dual(1, { 1, 0, 0 }), 2, ad.dual(-3, { 0, 0, 2 }) }

        it("index like the C userdata", function()
            assert.are.equal(ad.value(a[1]), ad.value(a.x))
            assert.are.equal(2, a.y) -- a constant component is a plain number
            assert.are.equal(-3, ad.value(a.z))
            assert.are.equal(3, #a)
            assert.has_error(function() return a[4] end, "vec3 index out of range: 4 (expected 1, 2 or 3)")
            local A = ad.mat3(so3.random(2) * ad.dual(1, { 1, 0, 0 }))
            assert.are.equal(so3.random(2)[2][3], ad.value(A[2][3]))
            assert.are.equal("lf.traced", getmetatable(A[1]).__name)
            assert.has_error(function() return A[0] end)
            assert.is_truthy(tostring(a):find("^traced vec3{1, 2, %-3}"))
            assert.is_truthy(tostring(A):find("^traced mat3{"))
            local t = a:totable()
            assert.are.equal(2, t[2])
            assert.is_true(ad.is_dual(t[1])) -- the entries, so derivatives survive totable()
            assert.are.equal(so3.random(2)[3][1], ad.value(A:totable()[3][1]))
            assert.are.same(flat(so3.random(2):T()), flat(ad.value(A:T())))
        end)

        it("mix with C userdata, plain tables and numbers", function()
            local R = so3.random(5)
            local A = R * ad.dual(1, { 1, 0, 0 }) -- traced, with the value of R
            local v = core.vec3 { 0.3, -1.2, 2 }
            local checks = {
                { A * v,                         R * v },
                { R * ad.vec3(v),                R * v },
                { A * { 0.3, -1.2, 2 },          R * v },
                { ad.vec3(v) * A,                v * R },
                { A * R,                         R * R },
                { R * A,                         R * R },
                { A * A:T(),                     R * R:T() },
                { A + R,                         R + R },
                { R - A,                         R - R },
                { A - { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, R - I },
                { A + { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }, R + I },
                { 2 * A,                         2 * R },
                { A * 2,                         2 * R },
                { A / 4,                         R / 4 },
                { -A,                            -R },
                { ad.vec3(v) + v,                v + v },
                { v - ad.vec3(v),                v - v },
                { ad.dual(2) * v,                2 * v },
                { v * ad.dual(2),                2 * v },
                { ad.vec3(v) / ad.dual(2),       v / 2 },
                { v:cross(ad.vec3 { 1, 2, 3 }),  v:cross(core.vec3 { 1, 2, 3 }) },
                { ad.vec3 { 1, 2, 3 }:cross(v),  core.vec3 { 1, 2, 3 }:cross(v) },
                { v:dot(ad.vec3 { 1, 2, 3 }),    v:dot(core.vec3 { 1, 2, 3 }) },
                { A:det(),                       R:det() },
                { A:trace(),                     R:trace() },
                { A:norm(),                      R:norm() },
                { A:inv(),                       R:inv() },
                { A:col(2),                      R:col(2) },
                { A:row(3),                      R:row(3) },
                { ad.vec3(v):norm(),             v:norm() },
                { ad.vec3(v):normalized(),       v:normalized() },
            }
            for n, c in ipairs(checks) do
                local x, y = flat(ad.value(c[1])), flat(c[2])
                for i = 1, #y do assert_close(x[i], y[i], 1e-15, "check " .. n, math.max(1, vnorm(y))) end
            end
            assert.has_error(function() return ad.vec3(v) * v end,
                "attempt to multiply two vec3 (use v:dot(w) or v:cross(w))")
            assert.has_error(function() return A + v end)
            assert.has_error(function() return A + 1 end)
            assert.has_error(function() return 1 / A end)
            assert.has_error(function() return A * "x" end)
            assert.is_true(A == R * ad.dual(1))      -- a dual's comparisons compare values
            assert.is_false(A == R:T() * ad.dual(1))
        end)

        it("derivatives of vector / matrix operations match finite differences", function()
            local R0 = so3.random(7)
            local w = core.vec3 { 0.2, -0.5, 1.1 }
            local function Mof(p) -- a non-symmetric matrix depending on p
                local x = V(p)
                return R0 * so3.hat(x) + x[1] * R0:T() + p[2] * p[3] * I
            end
            local p = { 0.3, -0.8, 1.7 }
            local fs = {
                dot = function(q) return V(q):dot(w) * V(q):dot(V(q)) end,
                cross = function(q) return V(q):cross(w):cross(V(q)) end,
                vnorm = function(q) return V(q):norm() end,
                normalized = function(q) return V(q):normalized() end,
                matvec = function(q) return Mof(q) * w end,
                vecmat = function(q) return V(q) * R0 end,
                matmul = function(q) return Mof(q) * Mof(q):T() end,
                det = function(q) return Mof(q):det() end,
                trace = function(q) return (Mof(q) * R0):trace() end,
                mnorm = function(q) return Mof(q):norm() end,
                inv = function(q) return Mof(q):inv() end,
                index = function(q) return Mof(q)[2][3] * Mof(q)[3].x end,
            }
            for name, f in pairs(fs) do jac_check(f, p, "op " .. name, 1e-8) end
        end)
    end)

    describe("SO(3) maps on duals", function()
        local R0 = so3.random(11)
        local function rot(q) return R0 * so3.exp(V(q)) end

        it("exp: values equal C, derivatives match finite differences, also at 0", function()
            for _, p in ipairs { { 0, 0, 0 }, { 1e-9, -2e-9, 3e-9 }, { 1e-3, 2e-3, -1e-3 }, { 0.2, 0.25, -0.3 },
                { 0.3, 0.3, -0.2 }, { 0.7, -0.2, 0.5 }, { 1.5, 2, -0.3 }, { 2, -2, 1 } } do
                jac_check(function(q) return so3.exp(V(q)) end, p, "so3.exp", 1e-9)
            end
            -- at 0 the derivative along e_k is exactly hat(e_k)
            local E = so3.exp(ad.vec3(seeds { 0, 0, 0 }))
            local g1, g2, g3 = ad.grad(E)
            assert.are.same(flat(so3.hat { 1, 0, 0 }), flat(g1))
            assert.are.same(flat(so3.hat { 0, 1, 0 }), flat(g2))
            assert.are.same(flat(so3.hat { 0, 0, 1 }), flat(g3))
        end)

        it("cay", function()
            for _, p in ipairs { { 0, 0, 0 }, { 0.3, -0.2, 0.1 }, { 2, 1, -3 } } do
                jac_check(function(q) return so3.cay(V(q)) end, p, "so3.cay", 1e-9)
            end
        end)

        it("hat and vee", function()
            local p = { 0.4, -1, 2 }
            jac_check(function(q) return so3.hat(V(q)) end, p, "so3.hat", 1e-9)
            jac_check(function(q) return so3.vee(R0 * so3.hat(V(q)) + so3.hat(V(q)) * R0) end, p, "so3.vee", 1e-9)
        end)

        it("log, small and large angles and near pi", function()
            -- log(exp(x)) = x: at 0 the derivative is the identity
            local L = so3.log(so3.exp(ad.vec3(seeds { 0, 0, 0 })))
            local g = { ad.grad(L) }
            for k = 1, 3 do
                local e = flat(g[k])
                for i = 1, 3 do assert_close(e[i], i == k and 1 or 0, 1e-15, "dlog at I", 1) end
            end
            for _, x in ipairs { { 0, 0, 0 }, { 1e-5, 0, -2e-5 }, { 0.05, 0.02, -0.03 }, { 0.5, -0.3, 0.2 },
                { 1.2, 0.3, -0.4 }, { 1.5, 0.6, 0.3 }, { 2, -1, 0.5 }, { 2.8, 0.5, -0.4 }, { 3.1, 0.05, 0 } } do
                local B = so3.exp(x)
                jac_check(function(q) return so3.log(B * so3.exp(V(q))) end, { 0, 0, 0 }, "so3.log", 1e-7, 1e-4)
                jac_check(function(q) return so3.log(so3.exp(V(q)) * B) end, { 0.01, -0.02, 0.03 }, "so3.log", 1e-7,
                    1e-4)
            end
        end)

        it("dist and angle", function()
            for _, p in ipairs { { 0.3, -0.2, 0.1 }, { 1, 2, -0.5 } } do
                jac_check(function(q) return so3.dist(rot(q), Rm) end, p, "so3.dist", 1e-8)
                jac_check(function(q) return so3.dist(Rm, rot(q)) end, p, "so3.dist", 1e-8)
                jac_check(function(q) return so3.dist(rot(q), I) end, p, "so3.dist", 1e-8)
                jac_check(function(q) return so3.angle(rot(q), Rm) end, p, "so3.angle", 1e-8)
                jac_check(function(q) return so3.angle(Rm, rot(q)) end, p, "so3.angle", 1e-8)
                jac_check(function(q) return so3.angle(rot(q)) end, p, "so3.angle", 1e-8)
            end
        end)
    end)

    describe("torques of Lua potentials", function()
        local B, m = core.vec3 { 0.3, -1.2, 2.0 }, core.vec3 { 0.5, 0.1, -0.7 }
        local R1 = so3.random(21)
        local potentials = {
            stress = function(R) return (so3.dist(R, I) - 1) ^ 2 - 0.3 / so3.dist(R, Rm) end,
            top = function(R) return 20 * R[3][3] end,
            field = function(R) return -B:dot(R * m) end,
            field_rev = function(R) return -(R * m):dot(B) end,
            trace_det = function(R) return M.exp(0.3 * R:trace()) + R:det() ^ 2 * R[1][2] end,
            log_norm = function(R) return so3.log(R):norm() end,
            log_norm2 = function(R) return so3.log(R1:T() * R):norm() ^ 2 end,
            acos = function(R) return M.acos((R:trace() - 1) / 2) ^ 2 end,
            atan2 = function(R) return M.atan2(R[2][1], R[1][1]) + M.atan(R.x or R[3][2]) end,
            angle = function(R) return so3.angle(R, Rm) ^ 3 + so3.angle(R) end,
            tables = function(R) return (R * { 0, 0, 1 }):dot { 1, 2, 3 } + (R:T() * R1 - I):norm() end,
            cross = function(R) return R[1]:cross(R[2]):dot(m) + R:col(2):cross(B).z end,
            exp_inside = function(R) return so3.dist(R * so3.exp { 0.1, 0.2, 0.3 }, so3.cay { 1, -1, 0.5 }) end,
            inv = function(R) return R:inv()[1][2] + M.sqrt(2 + R[1][1]) end,
            minmax = function(R) return M.max(R[1][1], R[2][2]) + M.abs(R[3][1]) - M.min(R[1][3], 0.1) end,
            trig = function(R) return M.sin(R[1][1]) * M.cos(R[2][2]) + M.tan(0.5 * R[3][3]) + M.asin(0.9 * R[1][2]) end,
            logs = function(R) return M.log(2 + R[1][1]) + M.pow(1.5 + R[2][1], 1.5) + (2.2 + R[3][3]) ^ R[1][1] end,
            division = function(R) return 1 / (3 + R:trace()) - R[1][3] / (1.5 + R[2][2]) end,
        }
        it("match finite differences along R exp(e hat e_k)", function()
            for name, U in pairs(potentials) do
                for seed = 1, 5 do
                    local R = so3.random(100 + seed)
                    local tau = ad.torque(U, R)
                    assert.are.equal("lf.vec3", getmetatable(tau).__name)
                    local fd = fd_torque(U, R)
                    local r = reldiff(tau, fd)
                    record("torque vs FD: " .. name, r)
                    assert(r <= 1e-7, string.format("%s seed %d: rel diff %.3g", name, seed, r))
                end
            end
        end)

        it("a potential independent of R has zero torque", function()
            assert.are.same({ 0, 0, 0 }, ad.torque(function() return 4.5 end, R1):totable())
            assert.are.same({ 0, 0, 0 }, ad.torque(function(R) return ad.value(R[1][1]) end, R1):totable())
        end)

        it("several bodies: one pass per body", function()
            local U = function(Rs)
                return potentials.stress(Rs[1]) + potentials.top(Rs[2]) + 0.7 * so3.dist(Rs[1], Rs[2]) ^ 2
                    + Rs[3][1][2] * Rs[2][2][1]
            end
            local Rs = { so3.random(31), so3.random(32), so3.random(33) }
            local taus = ad.torque(U, Rs, 3)
            assert.are.equal(3, #taus)
            for i = 1, 3 do
                local fd = fd_torque(function(Ri)
                    local t = { Rs[1], Rs[2], Rs[3] }
                    t[i] = Ri
                    return U(t)
                end, Rs[i])
                local r = reldiff(taus[i], fd)
                record("torque vs FD: 3 bodies", r)
                assert(r <= 1e-7, string.format("body %d: rel diff %.3g", i, r))
            end
            -- nb inferred from an array
            local t2 = ad.torque(U, Rs)
            for i = 1, 3 do assert.are.same(taus[i]:totable(), t2[i]:totable()) end
            -- the same through the C system (lf.bodies with a Lua potential and no torque)
            local sys = core.bodies { { inertia = { 1, 2, 3 }, R = Rs[1] }, { inertia = { 1, 2, 3 }, R = Rs[2] },
                { inertia = { 1, 2, 3 }, R = Rs[3] }, potential = U }
            local tc = sys:torque(Rs)
            for i = 1, 3 do
                local r = reldiff(tc[i], taus[i])
                assert(r <= 1e-15, "system torque differs")
            end
        end)

        it("errors are clear", function()
            assert.has_error(function() ad.torque(function() return "abc" end, R1) end,
                "potential U(R) returned string, expected a number")
            assert.has_error(function() ad.torque(function(R) return R[1] end, R1) end,
                "potential U(R) returned lf.traced, expected a number")
            assert.has_error(function() ad.torque(function() return nil end, R1) end,
                "potential U(R) returned nil, expected a number")
            local ok, err = pcall(ad.torque, function() error("boom in U") end, R1)
            assert.is_false(ok)
            assert.is_truthy(tostring(err):find("boom in U", 1, true))
            -- through the C system: the message names the autodiff torque and keeps U's message
            local body = core.rigidbody { inertia = { 1, 2, 3 }, R = R1, compile = false, potential = function(R) return "abc" end }
            ok, err = pcall(body.torque, body, R1)
            assert.is_false(ok)
            assert.is_truthy(err:find("potential U(R) returned string, expected a number", 1, true))
            body = core.rigidbody { inertia = { 1, 2, 3 }, R = R1, compile = false, potential = function(R) error("boom in U") end }
            ok, err = pcall(body.torque, body, R1)
            assert.is_false(ok)
            assert.is_truthy(err:find("boom in U", 1, true))
            -- a C function without autodiff support refuses a dual instead of dropping the derivative
            body = core.rigidbody { inertia = { 1, 2, 3 }, R = R1, potential = function(R) return so3.project(R):det() end }
            ok, err = pcall(body.torque, body, R1)
            assert.is_false(ok)
            assert.is_truthy(err:find("so3.project of a traced value: not supported", 1, true), err)
        end)
    end)

    describe("acceptance: built-in C potentials", function()
        local B, m = core.vec3 { 0.4, -1.3, 2.2 }, core.vec3 { -0.6, 0.25, 0.9 }
        local cases = {
            stress = { core.potential.stress {},
                function(R) return (so3.dist(R, I) - 1) ^ 2 - 0.3 / so3.dist(R, Rm) end },
            top = { core.potential.top {}, function(R) return 20 * R[3][3] end },
            coulomb_wall = { core.potential.coulomb_wall(), function(R)
                local s = 1.1 + R[3][3]
                return 1 / s - 0.001 / s ^ 10
            end },
            field = { core.potential.field { B = B, m = m }, function(R) return -B:dot(R * m) end },
        }
        for name, c in pairs(cases) do
            it(name .. ": ad.torque equals pot:torque(R) to 1e-12 at 20 random attitudes", function()
                local pot, U = c[1], c[2]
                local body = core.rigidbody { inertia = { 2, 2, 4 }, R = I, potential = U }
                for seed = 1, 20 do
                    local R = so3.random(seed)
                    assert_close(U(R), pot:energy(R), 1e-14, name .. " energy")
                    local tc = pot:torque(R)
                    local r = reldiff(ad.torque(U, R), tc)
                    record("C potential: " .. name, r)
                    assert(r <= 1e-12, string.format("%s seed %d: rel diff %.3g", name, seed, r))
                    -- through the C system (rigidbody with a Lua potential and no torque)
                    local r2 = reldiff(body:torque(R), tc)
                    record("C potential via rigidbody: " .. name, r2)
                    assert(r2 <= 1e-12, string.format("%s seed %d via rigidbody: rel diff %.3g", name, seed, r2))
                end
            end)
        end
    end)

    it("reports the worst measured differences", function()
        local names = {}
        for k in pairs(worst) do names[#names + 1] = k end
        table.sort(names)
        io.stdout:write("\n")
        for _, k in ipairs(names) do io.stdout:write(string.format("  %-44s %.3g\n", k, worst[k])) end
    end)
end)

describe("potentials written with the standard math library", function()
  local lf = require "lieflow"
  local Rm = lf.so3.exp{2.5 / math.sqrt(2), 0, 2.5 / math.sqrt(2)}
  it("differentiate like ones written with lf.math (math.sqrt, math.cos ... in U)", function()
    local function dist(A, B)
      local s = 0
      for i = 1, 3 do for j = 1, 3 do s = s + (A[i][j] - B[i][j]) ^ 2 end end
      return math.sqrt(s)
    end
    local function U(R) return (dist(R, lf.so3.I) - 1) ^ 2 - 0.3 / dist(R, Rm) + 0.1 * math.cos(R[3][3]) end
    local function Ulf(R)
      local M = lf.math
      local s1, s2 = 0, 0
      for i = 1, 3 do for j = 1, 3 do
        s1 = s1 + (R[i][j] - lf.so3.I[i][j]) ^ 2
        s2 = s2 + (R[i][j] - Rm[i][j]) ^ 2
      end end
      return (M.sqrt(s1) - 1) ^ 2 - 0.3 / M.sqrt(s2) + 0.1 * M.cos(R[3][3])
    end
    local R = lf.so3.exp{0.2, 0.7, -0.1}
    local a = lf.rigidbody{inertia = {2, 2, 4}, potential = U}:torque(R)
    local b = lf.rigidbody{inertia = {2, 2, 4}, potential = Ulf}:torque(R)
    assert.is_true((a - b):norm() < 1e-15)
    -- the function still works on plain numbers, and its chunk's other functions keep their math
    assert.is_number(U(R))
    assert.are.equal(math.sqrt, _ENV.math.sqrt)
  end)
  it("explain what cannot be differentiated (a local alias of math.sqrt)", function()
    local sqrt = math.sqrt
    local function U(R) return sqrt(R[1][1] + 2) end
    local body = lf.rigidbody{inertia = {2, 2, 4}, potential = U}
    local ok, msg = pcall(body.torque, body, lf.so3.I)
    assert.is_false(ok)
    assert.is_truthy(msg:find("local alias", 1, true), msg)
    assert.is_truthy(msg:find("give the derivative yourself", 1, true), msg)
  end)
end)
