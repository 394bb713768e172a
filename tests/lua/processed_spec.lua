-- SPDX-License-Identifier: GPL-3.0-or-later
-- Processed compositions from Lua (core/method/compose.h; the orders and the by-hand equality are
-- measured in tests/c/test_compose.c): the schemes' processors, there and back, checkpoints and
-- files that resume bit for bit, lf.run, refusals.
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has = T.errmsg, T.has

local function wall()
  return lf.rigidbody{inertia = {2, 3, 4.5}, R = lf.so3.I, omega = {1, 2 / 3, 2 / 4.5},
                      potential = lf.potential.coulomb_wall()}
end

local processed = {}
for _, sc in ipairs(lf.compose_schemes()) do
  if sc.processor then processed[#processed + 1] = sc end
end

describe("processed compositions", function()
  it("the schemes list their kernel and processor", function()
    assert.is_true(#processed >= 2)
    for _, sc in ipairs(processed) do
      assert.is_true(sc.form == "symmetric" or sc.form == "rkn", sc.form)
      -- the stages (symmetric) or the kicks and the flows (rkn) each sum to 1
      local sums = {0, 0}
      for i, c in ipairs(sc.coefficients) do
        local k = sc.form == "rkn" and 2 - i % 2 or 1
        sums[k] = sums[k] + c
      end
      assert.is_true(math.abs(sums[1] - 1) < 1e-14 and (sc.form ~= "rkn" or math.abs(sums[2] - 1) < 1e-14), sc.name)
      assert.is_true(#sc.processor >= 1)
    end
  end)

  for _, sc in ipairs(processed) do
    for _, base in ipairs(sc.form == "rkn" and {"split_exact"} or {"split_exact", "vlv"}) do
      it(base .. " + " .. sc.name .. ": there and back; a checkpoint and a file resume bit for bit", function()
        local m = lf.compose(base, sc.name)
        local it = lf.integrator(m, wall(), {h = 0.1})
        local s0 = it:state()
        it:step(25)
        it.h = -0.1
        it:step(25)
        local e = it:error(s0)
        assert.is_true(e.R < 1e-12 and e.omega < 1e-12, ("%g %g"):format(e.R, e.omega))
        it.h = 0.1
        it:step(7)
        local c = it:checkpoint()
        assert.is_true(c.h_proc == 0.1 and type(c.kernel) == "table")
        local path = os.tmpname()
        it:save(path)
        it:step(9)
        local a = it:state()
        for _, resumed in ipairs{lf.integrator(m, wall(), {h = 0.1}):restore(c), lf.load(path, wall(), m)} do
          resumed:step(9)
          local b = resumed:state()
          assert.are.equal(a.t, b.t)
          assert.are.equal(0, (a.R - b.R):norm())
          assert.are.equal(0, (a.omega - b.omega):norm())
        end
        os.remove(path)
      end)
    end
  end

  it("lf.run's samples are the processed states, converging at the effective order", function()
    local m = lf.compose("split_exact", "rkn6p")
    local ref = lf.run(wall(), {method = "split_exact_s6", h = 0.005, T = 2, every = 40, states = true})
    local err = {}
    for _, h in ipairs{0.1, 0.05} do
      local every = math.floor(0.2 / h + 0.5)
      local tr = lf.run(wall(), {method = m, h = h, T = 2, every = every, states = true})
      local it = lf.integrator(m, wall(), {h = h})
      assert.are.equal(#ref.t, #tr.t)
      for k = 2, #tr.t do -- each sample is the state the integrator shows after that call
        it:step(every)
        assert.are.equal(0, (tr:state(k).R - it.R):norm())
      end
      -- the kernel's own variable is far from it (the processor is not the identity)
      assert.is_true((it:checkpoint().kernel.R - it.R):norm() > 1e-3)
      err[h] = (tr:state(#tr.t).R - ref:state(#ref.t).R):norm()
    end
    -- measured 3.9e-11 and 3.3e-13 (slope 6.9 before the asymptotic 6); the kernel alone has order 2
    assert.is_true(err[0.05] < 1e-10 and err[0.1] / err[0.05] > 2 ^ 6.5, ("%g %g"):format(err[0.1], err[0.05]))
  end)

  it("refuses reversible adaptive steps, Lua bases and a kernel without h_proc", function()
    local m = lf.compose("split_exact", processed[1].name)
    has(errmsg(lf.integrator, m, wall(), {h = 0.1, adapt = true}), "processed method")
    local lm = lf.method{name = "mine", order = 2, symmetric = true, step = function(s) return s end}
    has(errmsg(lf.compose, lm, processed[1].name), "is processed")
    local it = lf.integrator(m, wall(), {h = 0.1}):step(3)
    local c = it:checkpoint()
    c.h_proc = nil
    has(errmsg(it.restore, it, c), "needs h_proc > 0")
    c = it:checkpoint()
    c.kernel = nil
    has(errmsg(it.restore, it, c), "without a kernel state")
  end)
end)
