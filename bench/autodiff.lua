-- lieflow benchmark: the cost of the torques of a Lua potential by forward-mode and reverse-mode
-- autodiff, against one plain evaluation of U (C vec3/mat3 userdata and numbers), for n bodies.
-- Run: make bench  (or build/lieflow bench/autodiff.lua [seconds-per-sample] [max-n])
--
-- Two pair potentials of bodies on a cubic lattice (spacing 1.5), each with a field term so that one
-- body has a potential, and pairs within a cutoff (a neighbour list built outside U, as molecular
-- dynamics codes do, so that one evaluation of U is O(n)):
--   dipole: U = sum_i -B . mu_i + sum_pairs (mu_i . mu_j - 3 (mu_i . e)(mu_j . e)) / r^3, mu_i = R_i m
--           (vec3 arithmetic: dot products through the C userdata)
--   lj:     U = sum_i -B . mu_i + sum_pairs 4 ((1/d^2)^6 - (1/d^2)^3), d = s_i - s_j, s_i = x_i + R_i a
--           (mostly scalar arithmetic on numbers)
-- Timing: CPU time (os.clock), medians of interleaved repeats (the machine is shared). Forward mode
-- at n = 1000 costs minutes; it is estimated from 10 of its n passes (one pass per body), marked "~".
local lf = lf or require "lieflow"
local ad = lf.autodiff
local budget = tonumber(arg and arg[1]) or 0.05 -- CPU seconds per sample
local max_n = tonumber(arg and arg[2]) or 1000
local ROUNDS = 5

local B, m, a = lf.vec3 { 0.1, -0.2, 0.5 }, lf.vec3 { 0.3, -0.2, 0.9 }, lf.vec3 { 0.4, 0.1, -0.2 }

local function lattice(n)
    local x, R = {}, {}
    local side = math.ceil(n ^ (1 / 3) - 1e-9)
    for i = 1, n do
        local p, q, r = (i - 1) % side, ((i - 1) // side) % side, (i - 1) // (side * side)
        x[i] = lf.vec3 { 1.5 * p, 1.5 * q, 1.5 * r }
        R[i] = lf.so3.random(1000 + i)
    end
    -- neighbour pairs within the cutoff 1.5 sqrt 2 (faces and edges of the lattice cell)
    local pi, pj = {}, {}
    for i = 1, n do
        for j = i + 1, n do
            if (x[j] - x[i]):norm() < 1.5 * math.sqrt(2) + 1e-9 then
                pi[#pi + 1], pj[#pj + 1] = i, j
            end
        end
    end
    return x, R, pi, pj
end

local potentials = {}

function potentials.dipole(x, pi, pj)
    local e, c = {}, {}
    for k = 1, #pi do
        local d = x[pj[k]] - x[pi[k]]
        local r = d:norm()
        e[k], c[k] = d / r, 1 / (r * r * r)
    end
    return function(Rs)
        if Rs.T then Rs = { Rs } end -- lf.bodies hands one body's U the rotation itself
        local mu, U = {}, 0
        for i = 1, #Rs do
            mu[i] = Rs[i] * m
            U = U - B:dot(mu[i])
        end
        for k = 1, #pi do
            local mi, mj, ek = mu[pi[k]], mu[pj[k]], e[k]
            U = U + c[k] * (mi:dot(mj) - 3 * mi:dot(ek) * mj:dot(ek))
        end
        return U
    end
end

function potentials.lj(x, pi, pj)
    return function(Rs)
        if Rs.T then Rs = { Rs } end
        local s, U = {}, 0
        for i = 1, #Rs do
            U = U - B:dot(Rs[i] * m)
            s[i] = x[i] + Rs[i] * a
        end
        for k = 1, #pi do
            local d = s[pi[k]] - s[pj[k]]
            local i6 = (1 / d:dot(d)) ^ 3
            U = U + 4 * (i6 * i6 - i6)
        end
        return U
    end
end

-- CPU seconds per call of f: repeat it until the sample takes `budget`
local function per_call(f)
    local reps, t = 1, 0
    while true do
        local t0 = os.clock()
        for _ = 1, reps do f() end
        t = os.clock() - t0
        if t >= budget then return t / reps end
        reps = reps * (t < budget / 8 and 8 or 2)
    end
end

local function median(t)
    table.sort(t)
    return t[(#t + 1) // 2]
end

-- medians of interleaved samples of several functions (a name -> function table; a nil entry skipped)
local function interleaved(fs, names, rounds)
    local samples = {}
    for _, k in ipairs(names) do samples[k] = {} end
    for _ = 1, rounds do
        for _, k in ipairs(names) do
            if fs[k] then table.insert(samples[k], per_call(fs[k])) end
        end
    end
    local out = {}
    for _, k in ipairs(names) do out[k] = fs[k] and median(samples[k]) end
    return out
end

-- one forward pass: the torque of body i (the others fixed), as ad.torque does it for each body
local function forward_pass(U, R, i)
    local Rs = {}
    for j = 1, #R do Rs[j] = R[j] end
    return ad.torque(function(Ri)
        Rs[i] = Ri
        return U(Rs)
    end, R[i], 1, "forward")
end

-- a time in s as "12.3us", "4.56ms" or "7.89s"
local function fmt_time(t)
    if t < 1e-3 then return ("%.1fus"):format(t * 1e6) end
    if t < 1 then return ("%.2fms"):format(t * 1e3) end
    return ("%.2fs"):format(t)
end

local function maxreldiff(t1, t2)
    local worst = 0
    for i = 1, #t1 do
        local s = math.max(t1[i]:norm(), t2[i]:norm(), 1e-300)
        worst = math.max(worst, (t1[i] - t2[i]):norm() / s)
    end
    return worst
end

local cpu = require("lieflow.experiment").cpu_name()
print(("lieflow %s benchmark — torques of a Lua pair potential by autodiff, one core (%s)"):format(lf.version, cpu))
print("columns: pairs; CPU time of one plain U evaluation; of the torques by forward mode (n passes of 3")
print("directions) and by reverse mode (one taped evaluation, one backward sweep); their ratios to plain;")
print("the largest relative difference between the two torques. Medians of " .. ROUNDS .. " interleaved samples.")

local ns = {}
for _, n in ipairs { 1, 10, 100, 1000 } do if n <= max_n then ns[#ns + 1] = n end end
local results = {}
for _, pname in ipairs { "dipole", "lj" } do
    print()
    print(("%-7s %5s %7s %12s %12s %12s %9s %9s %9s"):format(pname, "n", "pairs", "plain", "forward",
        "reverse", "fwd/plain", "rev/plain", "diff"))
    for _, n in ipairs(ns) do
        local x, R, pi, pj = lattice(n)
        local U = potentials[pname](x, pi, pj)
        -- the two modes agree: every body up to n = 100, 10 of them at n = 1000
        local tr = ad.torque(U, R, n, "reverse")
        local tf, trs = {}, {}
        local stride = n <= 100 and 1 or n // 10
        for i = stride, n, stride do
            tf[#tf + 1] = forward_pass(U, R, i)
            trs[#trs + 1] = tr[i]
        end
        local diff = maxreldiff(tf, trs)
        local full = n <= 100
        local t = interleaved({
            plain = function() return U(R) end,
            reverse = function() return ad.torque(U, R, n, "reverse") end,
            forward = full and function() return ad.torque(U, R, n, "forward") end or nil,
            pass = not full and function() return forward_pass(U, R, n // 2) end or nil,
        }, { "plain", "reverse", "forward", "pass" }, ROUNDS)
        local fwd = t.forward or t.pass * n
        results[pname .. n] = { plain = t.plain, forward = fwd, reverse = t.reverse }
        print(("%-7s %5d %7d %12s %12s %12s %9.1f %9.2f %9.1e"):format("", n, #pi, fmt_time(t.plain),
            (full and "" or "~") .. fmt_time(fwd), fmt_time(t.reverse), fwd / t.plain, t.reverse / t.plain, diff))
    end
end

-- The crossover: forward against reverse torques for a few bodies (all pairs).
print()
print("crossover (dipole, all pairs): CPU time of the torques by forward mode / by reverse mode")
local line = {}
for _, n in ipairs { 1, 2, 3, 4 } do
    local x, R = lattice(n)
    local pi, pj = {}, {}
    for i = 1, n do for j = i + 1, n do pi[#pi + 1], pj[#pj + 1] = i, j end end
    local U = potentials.dipole(x, pi, pj)
    local t = interleaved({
        forward = function() return ad.torque(U, R, n, "forward") end,
        reverse = function() return ad.torque(U, R, n, "reverse") end,
    }, { "forward", "reverse" }, ROUNDS)
    line[#line + 1] = ("n = %d: %.2f"):format(n, t.forward / t.reverse)
end
print("  " .. table.concat(line, ", "))

-- Integrating lf.bodies with vlv: body-steps per second with each autodiff mode.
print()
print("vlv on lf.bodies (h = 0.01), body-steps/s with the torque by autodiff = forward / reverse / auto")
print(("%-7s %5s %12s %12s %12s"):format("", "n", "forward", "reverse", "auto"))
for _, pname in ipairs { "dipole", "lj" } do
    for _, n in ipairs(ns) do
        local x, R, pi, pj = lattice(n)
        local U = potentials[pname](x, pi, pj)
        local function system(mode)
            local spec = { potential = U, autodiff = mode }
            for i = 1, n do spec[i] = { inertia = { 1, 1.5, 2 }, R = R[i], omega = { 0.1, -0.2, 0.3 } } end
            return lf.bodies(spec)
        end
        local its = {}
        for _, mode in ipairs { "forward", "reverse", "auto" } do
            its[mode] = lf.integrator("vlv", system(mode), { h = 0.01 })
        end
        -- forward mode at n = 1000 takes minutes per step: its rate is the one of its torque (above)
        local full = n <= 100
        local t = interleaved({
            forward = full and function() its.forward:step() end or nil,
            reverse = function() its.reverse:step() end,
            auto = function() its.auto:step() end,
        }, { "forward", "reverse", "auto" }, ROUNDS)
        local fwd = t.forward or results[pname .. n].forward
        print(("%-7s %5d %12s %12.0f %12.0f"):format(pname, n, (full and "" or "~") .. ("%.0f"):format(n / fwd),
            n / t.reverse, n / t.auto))
    end
end
