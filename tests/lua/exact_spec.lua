-- SPDX-License-Identifier: GPL-3.0-or-later
-- lf.exact.free_body from Lua: the closed-form free rigid body (core/solve/exact.c), angular velocity and
-- attitude, against lf.reference (rk8pd) and 50-digit values of an independent Taylor-series solution
-- (mpmath; the same values tests/c/test_exact.c checks the C function against), and the errors a user meets.
local lf = require "lieflow"
local exact = lf.exact or require("lieflow.core").exact

local J, w0 = {0.9144, 1.098, 1.66}, {0.45549, 0.82623, 0.03476} -- [K] §2.2 (McLachlan–Zanna)

describe("lf.exact.free_body", function()
  it("matches lf.reference for the [K] body at t = 100", function()
    local w = exact.free_body(J, w0, 100)
    assert.are.equal("userdata", type(w))
    local body = lf.rigidbody{inertia = J, R = lf.so3.I, omega = w0}
    local ref = lf.reference(body, 100, {rtol = 1e-14, atol = 1e-14})
    local d = (w - ref.omega):norm()
    print(string.format("  |free_body(t=100) - reference| = %.2e", d))
    assert.is_true(d < 1e-11, d)
  end)

  it("accepts vec3 arguments, t = 0 and negative t, and conserves 2E and |Pi|", function()
    local Jv, wv = lf.vec3(J), lf.vec3(w0)
    assert.is_true((exact.free_body(Jv, wv, 0) - wv):norm() < 1e-15)
    local function inv(w) return J[1] * w.x ^ 2 + J[2] * w.y ^ 2 + J[3] * w.z ^ 2,
                                 lf.vec3{J[1] * w.x, J[2] * w.y, J[3] * w.z}:norm() end
    local E0, M0 = inv(wv)
    for _, t in ipairs{-100, -3.5, 7.25, 1e3} do
      local E, M = inv(exact.free_body(Jv, wv, t))
      assert.is_true(math.abs(E - E0) < 1e-14 and math.abs(M - M0) < 1e-14)
    end
    local body = lf.rigidbody{inertia = J, R = lf.so3.I, omega = w0}
    local ref = lf.reference(body, -10, {rtol = 1e-14, atol = 1e-14})
    assert.is_true((exact.free_body(J, w0, -10) - ref.omega):norm() < 1e-12)
  end)

  it("handles the degenerate cases: principal axis, axisymmetric, sphere", function()
    assert.are.same({0, 1.5, 0}, exact.free_body(J, {0, 1.5, 0}, 50):totable())
    assert.are.same({0.1, 0.2, 0.3}, exact.free_body({2, 2, 2}, {0.1, 0.2, 0.3}, 50):totable())
    -- J = (2, 2, 4): w3 constant, (w1, w2) turns at rate (C - A) w3 / A = 0.625
    local w = exact.free_body({2, 2, 4}, {1, 0, 0.625}, 2)
    local th = 0.625 * 2
    assert.is_true((w - lf.vec3{math.cos(th), math.sin(th), 0.625}):norm() < 1e-15)
  end)

  it("reports non-positive moments and non-finite arguments clearly", function()
    assert.has_error(function() exact.free_body({1, 0, 2}, w0, 1) end,
                     "exact.free_body: moment of inertia J[2] = 0 must be finite and > 0")
    assert.has_error(function() exact.free_body({1, 2, -3}, w0, 1) end,
                     "exact.free_body: moment of inertia J[3] = -3 must be finite and > 0")
    local ok, msg = pcall(exact.free_body, J, w0, 0 / 0)
    assert.is_false(ok)
    assert.is_truthy(msg:find("argument #3 't' to 'lf.exact.free_body': finite number expected", 1, true), msg)
    ok, msg = pcall(exact.free_body, J, w0, math.huge)
    assert.is_false(ok)
    assert.is_truthy(msg:find("finite number expected", 1, true), msg)
    ok, msg = pcall(exact.free_body, J, w0, "soon")
    assert.is_false(ok)
    assert.is_truthy(msg:find("number expected, got string", 1, true), msg)
    ok, msg = pcall(exact.free_body, J, {1, 0 / 0, 0}, 1)
    assert.is_false(ok)
    assert.is_truthy(msg:find("omega0", 1, true), msg)
    ok, msg = pcall(exact.free_body, {1, 2}, w0, 1)
    assert.is_false(ok)
    assert.is_truthy(msg:find("'J'", 1, true), msg)
  end)
end)

describe("lf.exact.free_body attitude (second result)", function()
  local function maxdiff(A, B)
    local d = 0
    for i = 1, 3 do for j = 1, 3 do d = math.max(d, math.abs(A[i][j] - B[i][j])) end end
    return d
  end

  it("returns R(t) as a mat3, R0 = I by default, and R0 / w0 exactly at t = 0", function()
    local w, R = exact.free_body(J, w0, 0)
    assert.are.equal("userdata", type(R))
    assert.are.same(lf.so3.I:totable(), R:totable())
    assert.are.same(w0, w:totable())
    local R0 = lf.so3.exp{0.3, -1.1, 2.0}
    local _, R1 = exact.free_body(J, w0, 0, R0)
    assert.are.same(R0:totable(), R1:totable())
  end)

  it("matches lf.reference (rk8pd) in R and omega, both directions of time", function()
    local R0 = lf.so3.exp{0.3, -1.1, 2.0}
    for _, T in ipairs{10, -10} do
      local w, R = exact.free_body(J, w0, T, R0)
      local ref = lf.reference(lf.rigidbody{inertia = J, R = R0, omega = w0}, T, {rtol = 1e-14, atol = 1e-14})
      local dR, dw = maxdiff(R, ref.R), (w - ref.omega):norm()
      print(string.format("  t = %g: |R - R_rk8pd| = %.2e, |w - w_rk8pd| = %.2e", T, dR, dw))
      assert.is_true(dR < 1e-13 and dw < 1e-13, dR .. " " .. dw)
    end
  end)

  -- J = (1, 2, 3), R0 = I: values from a 50-60 digit Taylor-series integration (mpmath), near and at the
  -- separatrix (1 - m = 5.4e-12, 4.9e-13 and 1.1e-49)
  local HP = {
    {w0 = {1e-25, 1, 2e-25}, t = 25.0, w = {-2.286280533584063368733e-19, 1.0, 1.319984681509149119121e-19},
     R = {0.9912028118634735980833, 1.395137770848604338239e-19, -0.132351750097773028902, -1.143141159448687909422e-19, 1.0, 1.979974114831163137148e-19, 0.132351750097773028902, -1.811259176975709811348e-19, 0.9912028118634735980833}},
    {w0 = {1e-25, 1, 2e-25}, t = 50.0, w = {-4.24258370364219872077e-13, 1.0, 2.449456843357342889485e-13},
     R = {0.964966028492113274069, 3.01098839491994176833e-13, -0.2623748537039287859144, -2.121291851822368967961e-13, 1.0, 3.67418526503325062357e-13, 0.2623748537039287859144, -2.988890323858148244562e-13, 0.964966028492113274069}},
    {w0 = {1e-25, 1, 2e-25}, t = 100.0, w = {-0.9526296122095372868747, 0.3041329017740543759305, 0.5500009630471851554519},
     R = {0.5597263027816364859943, 0.8284876318507499277712, 0.01774006326753232220072, -0.4763148061047686434373, 0.3041329017740543759305, 0.8250014445707777331779, 0.6781081561666814575042, -0.4702248631546716144409, 0.5648521103894309660989}},
    {w0 = {1e-25, 1, 2e-25}, t = 200.0, w = {-1.118010112921806672055e-25, -1.0, 2.020721538826956124712e-25},
     R = {-0.5127038069401056297567, 2.388986874386131597067e-25, 0.8585655515737414527073, -2.878349807712074968545e-25, -1.0, 1.063688111633246495702e-25, 0.8585655515737414527073, -1.925895046049192758264e-25, 0.5127038069401056297567}},
    {w0 = {7e-7, 1, 1.4e-6}, t = 25.0, w = {-0.9756627766414739843768, 0.2192764152314134465334, 0.5632991667338474926405},
     R = {0.7529955280278770893875, 0.5953703663526989188488, 0.2802353682872161013271, -0.4878325792447442873895, 0.2192778300463201220346, 0.8449476953501899654864, 0.4416074154692591366574, -0.7729497785233075693462, 0.4555562868442613456557}},
    {w0 = {7e-7, 1, 1.4e-6}, t = 50.0, w = {-3.46433879923604486731e-7, -1.000000000000184991783, 0.000001355238777627878868101},
     R = {0.2552597257020790418994, 0.000001571299392237347825789, 0.9668725212932832059016, -0.000002292990138670395951763, -0.9999999999948835369841, 0.000002230498207953226257121, 0.9668725212918410188839, -0.000002786385517418000212972, -0.2552597256971700409421}},
    {w0 = {7e-7, 1, 1.4e-6}, t = 100.0, w = {5.161908000548403296604e-10, 1.000000000000244999867, 0.000001340397983989946867084},
     R = {-0.8696849448688558857302, 0.000001342669663931632676798, -0.4936072291474795011017, -7.319273551082751920443e-7, 0.9999999999916933025873, 0.000004009697890393900808274, 0.4936072291487629549274, 0.000003848458522440226368142, -0.8696849448606489393929}},
    {w0 = {7e-7, 1, 1.4e-6}, t = 200.0, w = {-6.989217817679108987317e-7, 1.000000000000000754171, 0.00000139982042384367178749},
     R = {0.5127038066630903216321, -0.000001273586462761577249734, 0.858565551738220206259, 0.000001274080435434223758658, 0.9999999999989273168757, 7.225546986623883619009e-7, -0.8585655517382194733634, 7.234250274809475177164e-7, 0.512703806664163004506}},
    {w0 = {1.4e-6, 1, 7e-7}, t = 25.0, w = {0.1727211482293016937724, 0.9849707635033192153342, -0.09972060142410963154678},
     R = {0.9866172915723908578978, -0.1053974485929835459021, -0.1244093959492178959117, 0.08635973826213521820099, 0.9849706936036577392717, -0.1495818449853620620449, 0.1383051538362015699845, 0.1368360718963343299368, 0.9808912140754069575745}},
    {w0 = {1.4e-6, 1, 7e-7}, t = 50.0, w = {0.00001239607876758043904682, -0.9999999999241486155911, -0.000007145459369699020655153},
     R = {0.2552597256967140723945, -0.000009481012642155469125905, 0.9668725212494916533498, 0.000005004141428455341724843, -0.9999999999255744745037, -0.0000111269771075113896213, 0.9668725212830266684932, 0.000007678635963916623191112, -0.2552597256302719050251}},
    {w0 = {1.4e-6, 1, 7e-7}, t = 100.0, w = {0.0001174528741527973641446, 0.999999993103391152842, 0.000067810244178769073702},
     R = {-0.8696849418911903704826, 0.0001019809382871988727086, -0.4936072238608396366411, 0.00005881692894328653487458, 0.9999999929684558407773, 0.0001029740605137190745344, 0.4936072308914099551842, 0.00006052252882245775945368, -0.8696849417741678977715}},
    {w0 = {1.4e-6, 1, 7e-7}, t = 200.0, w = {0.01056068007822631364182, 0.999944234464225186805, 0.006097211472595379209223},
     R = {0.5126759307471057373742, -0.01055883407558891528715, 0.8585172689326365695859, 0.005280882660216356408562, 0.9999442420176627038173, 0.009144677908544633802211, -0.8585659568786301861329, -0.0001545272991429535315679, 0.512703104935396262475}},
  }
  it("agrees with 50-digit values near the separatrix (as the C function does)", function()
    local worst = 0
    for _, c in ipairs(HP) do
      local w, R = exact.free_body({1, 2, 3}, c.w0, c.t)
      local dR, dw = maxdiff(R, lf.mat3(c.R)), (w - lf.vec3(c.w)):norm()
      worst = math.max(worst, dR, dw)
    end
    print(string.format("  max |R - R_mp|, |w - w_mp| = %.2e", worst))
    assert.is_true(worst < 5e-14, worst)
  end)

  it("takes R0 on the left, conserves R J omega, keeps R a rotation", function()
    local R0 = lf.so3.exp{-0.4, 0.9, 0.25}
    local Jv = lf.vec3(J)
    local pi0 = R0 * lf.vec3{J[1] * w0[1], J[2] * w0[2], J[3] * w0[3]}
    local worst_pi, worst_orth, worst_left = 0, 0, 0
    for _, t in ipairs{-1e3, -37.5, 0.1, 3.25, 100, 1e3} do
      local w, R = exact.free_body(Jv, w0, t, R0)
      local _, RI = exact.free_body(Jv, w0, t)
      worst_left = math.max(worst_left, maxdiff(R, R0 * RI))
      worst_pi = math.max(worst_pi, (R * lf.vec3{J[1] * w.x, J[2] * w.y, J[3] * w.z} - pi0):norm() / pi0:norm())
      worst_orth = math.max(worst_orth, maxdiff(R:T() * R, lf.so3.I))
    end
    print(string.format("  |R(t;R0) - R0 R(t;I)| %.1e, |R J w - pi0|/|pi0| %.1e, |R^T R - I| %.1e",
                        worst_left, worst_pi, worst_orth))
    assert.is_true(worst_left < 1e-15 and worst_pi < 2e-15 and worst_orth < 2e-15)
  end)

  it("handles the degenerate cases: principal-axis spin, sphere, rest, axisymmetric", function()
    -- spin about a principal axis and a spherical body: R = R0 exp(t hat(omega0))
    for _, c in ipairs{{J, {0, 1.5, 0}}, {{2, 2, 2}, {0.1, 0.2, 0.3}}} do
      local w, R = exact.free_body(c[1], c[2], 2.5)
      assert.is_true(maxdiff(R, lf.so3.exp(lf.vec3(c[2]) * 2.5)) < 1e-15)
      assert.are.same(c[2], w:totable())
    end
    local w, R = exact.free_body(J, {0, 0, 0}, 7)
    assert.are.same({0, 0, 0}, w:totable())
    assert.are.same(lf.so3.I:totable(), R:totable())
    -- J = (2, 2, 4): R(t) = exp(t hat(pi)/A) exp(-l t hat(e3)), l = (C - A) w3 / A (precession about pi)
    local wa = {1, 0, 0.625}
    local _, Ra = exact.free_body({2, 2, 4}, wa, 2)
    local pi = lf.vec3{2, 0, 2.5}
    local Rx = lf.so3.exp(pi * (2 / 2)) * lf.so3.exp{0, 0, -0.625 * 2}
    assert.is_true(maxdiff(Ra, Rx) < 1e-15, maxdiff(Ra, Rx))
  end)

  it("gives finite results or clear errors for extreme moments (issue 13)", function()
    local w, R = exact.free_body({1, 1e-300, 1e300}, {0, 1, 1}, 0)
    assert.are.same({0, 1, 1}, w:totable())
    assert.are.same(lf.so3.I:totable(), R:totable())
    w, R = exact.free_body({1, 1e-150, 1e150}, {0, 1, 1}, 0)
    assert.are.same({0, 1, 1}, w:totable())
    local ok, msg = pcall(exact.free_body, {1, 1e-300, 1e300}, {0, 1, 1}, 1)
    assert.is_false(ok)
    assert.is_truthy(msg:find("too disparate", 1, true), msg)
    assert.is_truthy(msg:find("1e-300", 1, true), msg)
    ok, msg = pcall(exact.free_body, {1, 1e-150, 1e150}, {0, 1, 1}, 1)
    assert.is_false(ok)
    assert.is_truthy(msg:find("t = 1 too long", 1, true), msg)
    -- a short time is fine: w2 gains (J3 - J1)/J2 w3 w1 t = 3e299 t
    w, R = exact.free_body({1, 1e-150, 1e150}, {0.3, 1, 1}, 1e-240)
    assert.is_true(math.abs(w.y / (1 + 3e59) - 1) < 1e-13 and math.abs(w.x - 0.3) < 1e-15, tostring(w))
    for i = 1, 3 do for j = 1, 3 do assert.is_true(R[i][j] == R[i][j] and math.abs(R[i][j]) <= 1) end end
  end)

  it("reports a bad R0 clearly", function()
    local ok, msg = pcall(exact.free_body, J, w0, 1, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1.01}})
    assert.is_false(ok)
    assert.is_truthy(msg:find("argument #4 'R0' to 'lf.exact.free_body'", 1, true), msg)
    assert.is_truthy(msg:find("not a rotation", 1, true), msg)
    ok, msg = pcall(exact.free_body, J, w0, 1, "I")
    assert.is_false(ok)
    assert.is_truthy(msg:find("'R0'", 1, true), msg)
    ok, msg = pcall(exact.free_body, J, w0, 1e17)
    assert.is_false(ok)
    assert.is_truthy(msg:find("too long", 1, true), msg)
  end)
end)
