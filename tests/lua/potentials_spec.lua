-- SPDX-License-Identifier: GPL-3.0-or-later
-- The Lua constructors of the built-in potentials, over the registry of C classes
-- (core.potential_classes(), not a list kept here): for every class, lf.potential.<name> is made
-- from its record; with the same parameters (the defaults, and random ones drawn from the schema,
-- given as vec3/mat3 values or plain tables) the constructor's potential and the record's
-- (core.potential_create: the parameter vector as it is, lf_potential_create) give the same U and
-- torque bit for bit at random rotations, the same name and tostring, also through a rigid body;
-- unknown and missing parameters and values of the wrong type are refused naming the constructor.
-- The classes of positions (gravity, central: c.positions) are compared through bodies with a mass.
-- The torque against differences of U, and the lanes, are tested in C (tests/c/test_potentials.c).
local lf = require "lieflow"
local T = require "testlib"
local core = lf.core

local classes = core.potential_classes()

-- a value for parameter q (its Lua form and its entries in the parameter vector), from the default
-- d (entries) moved at random
local function random_value(q, d, plain)
  if q.type == "rotation" then
    local R = lf.so3.random(math.random(1, 1e6))
    local e = {}
    for i = 1, 3 do for j = 1, 3 do e[#e + 1] = R[i][j] end end
    return plain and {R[1]:totable(), R[2]:totable(), R[3]:totable()} or R, e
  end
  local e = {}
  for k = 1, q.size do e[k] = d[k] + (1 + math.abs(d[k])) * (2 * math.random() - 1) end
  if q.type == "number" then return e[1], e end
  if q.type == "vec3" then return plain and {e[1], e[2], e[3]} or lf.vec3(e), e end
  local rows = {{e[1], e[2], e[3]}, {e[4], e[5], e[6]}, {e[7], e[8], e[9]}}
  return plain and rows or lf.mat3(rows), e
end

-- named parameters and the parameter vector of the same random potential of class c
local function random_params(c, plain)
  local named, vec, k = {}, {}, 1
  for _, q in ipairs(c.params) do
    local d = {}
    for i = 1, q.size do d[i] = c.defaults[k + i - 1] end
    local v, e = random_value(q, d, plain)
    named[q.name] = v
    for i = 1, q.size do vec[k + i - 1] = e[i] end
    k = k + q.size
  end
  return named, vec
end

-- U and torque of a and b equal bit for bit at 10 random rotations (and through a rigid body). A
-- potential of the positions (c.positions) acts on bodies with a mass only: compared through two
-- such bodies at random positions, the forces too, and its potential:energy(R) refused by name.
local function same_potential(a, b, label)
  assert.are.equal(b.name, a.name)
  assert.are.equal(tostring(b), tostring(a))
  assert.are.equal(b.positions, a.positions)
  if a.positions then
    T.has(T.errmsg(a.energy, a, lf.so3.I), "potential:energy(R): the potential " .. a.name .. " depends on the bodies' positions")
    T.has(T.errmsg(a.torque, a, lf.so3.I), "sys:potential(x, R)")
    local function body(p)
      return lf.bodies{{inertia = {2, 2, 4}, mass = 3, x = {1, 0, 0}}, {inertia = {1, 2, 3}, mass = 0.5, x = {0, 2, 0}},
                       potential = p}
    end
    local A, B = body(a), body(b)
    for s = 1, 10 do
      local Rs = {lf.so3.random(1000 + s), lf.so3.random(2000 + s)}
      local xs = {lf.vec3{1 + s, -0.5, 0.3 * s}, lf.vec3{-2, 0.25 * s, 1}}
      assert(A:potential(xs, Rs) == B:potential(xs, Rs), ("%s: U differs at seed %d"):format(label, s))
      local ta, tb, fa, fb = A:torque(xs, Rs), B:torque(xs, Rs), A:force(xs, Rs), B:force(xs, Rs)
      for i = 1, 2 do
        for _, k in ipairs{"x", "y", "z"} do
          assert(ta[i][k] == tb[i][k], ("%s: torque %d.%s differs at seed %d"):format(label, i, k, s))
          assert(fa[i][k] == fb[i][k], ("%s: force %d.%s differs at seed %d"):format(label, i, k, s))
        end
      end
    end
    return
  end
  local body = lf.rigidbody{inertia = {2, 2, 4}, potential = a}
  for s = 1, 10 do
    local R = lf.so3.random(1000 + s)
    local ta, tb, ts = a:torque(R), b:torque(R), body:torque(R)
    assert(a:energy(R) == b:energy(R), ("%s: U differs at seed %d"):format(label, s))
    assert(body:potential(R) == b:energy(R), ("%s: U through a body differs at seed %d"):format(label, s))
    for _, k in ipairs{"x", "y", "z"} do
      assert(ta[k] == tb[k], ("%s: torque.%s differs at seed %d: %a vs %a"):format(label, k, s, ta[k], tb[k]))
      assert(ts[k] == tb[k], ("%s: torque.%s through a body differs at seed %d"):format(label, k, s))
    end
  end
end

local function has_required(c)
  for _, q in ipairs(c.params) do if q.required then return true end end
  return false
end

describe("lf.potential over the registry of C potential classes", function()
  it("has one constructor per registered class, and free, point_masses and the sites'", function()
    assert(#classes >= 4, "the registry lists " .. #classes .. " classes")
    local seen = {}
    for _, c in ipairs(classes) do
      assert.is_function(lf.potential[c.name], c.name)
      assert.is_string(c.formula)
      assert.is_boolean(c.positions)
      seen[c.name] = true
      local n = 0
      for _, q in ipairs(c.params) do
        assert.is_true(q.size == ({number = 1, vec3 = 3, mat3 = 9, rotation = 9})[q.type], q.name)
        n = n + q.size
      end
      assert.are.equal(c.npar, n)
      assert.are.equal(c.npar, #c.defaults)
    end
    for name in pairs(lf.potential) do
      assert(seen[name] or name == "free" or name == "point_masses" or name == "sites" or name == "sites_stats",
             "lf.potential." .. name .. " is not a registered class")
    end
  end)

  for _, c in ipairs(classes) do
    local ctor = lf.potential[c.name]
    local fn = "potential." .. c.name

    it(c.name .. ": random parameters by name = the record's parameter vector, bit for bit", function()
      math.randomseed(#c.name)
      for set = 1, 6 do
        local named, vec = random_params(c, set % 2 == 0)
        same_potential(ctor(named), core.potential_create(c.name, vec), ("%s set %d"):format(c.name, set))
      end
    end)

    it(c.name .. ": the defaults of the schema (or the required parameters demanded)", function()
      if has_required(c) then
        local msg = T.errmsg(ctor, {})
        T.has(msg, fn .. ": field")
        T.has(msg, "required")
        for _, q in ipairs(c.params) do if q.required then T.has(msg, q.name .. " (" .. q.doc .. ")") end end
      else
        same_potential(ctor{}, core.potential_create(c.name, c.defaults), c.name .. " defaults")
        same_potential(ctor(), core.potential_create(c.name, c.defaults), c.name .. " defaults, no table")
      end
    end)

    it(c.name .. ": a parameter given by name wins over its alternatives, which are not read then", function()
      if #c.alternatives == 0 then return end
      math.randomseed(7)
      local named, vec = random_params(c)
      for _, a in ipairs(c.alternatives) do named[a] = "not read" end
      same_potential(ctor(named), core.potential_create(c.name, vec), c.name .. " with alternatives")
    end)

    it(c.name .. ": refuses unknown parameters, values of the wrong type, a non-table", function()
      local msg = T.errmsg(ctor, {no_such_parameter = 1})
      T.has(msg, "lf." .. fn .. ": unknown parameter 'no_such_parameter'")
      for _, q in ipairs(c.params) do
        local named = random_params(c)
        named[q.name] = "a string"
        T.has(T.errmsg(ctor, named), fn .. ": field '" .. q.name .. "'")
        if q.type ~= "number" then
          named[q.name] = {1, 2}
          T.has(T.errmsg(ctor, named), fn .. ": field '" .. q.name .. "'")
        end
      end
      T.has(T.errmsg(ctor, 5), fn .. ": table of parameters expected, got number")
      T.has(T.errmsg(core.potential_create, c.name, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), "potential_create: " .. c.name)
    end)
  end

  it("rotation parameters are checked, as every rotation the binding reads", function()
    for _, c in ipairs(classes) do
      for _, q in ipairs(c.params) do
        if q.type == "rotation" then
          local named = random_params(c)
          named[q.name] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1.1}}
          T.has(T.errmsg(lf.potential[c.name], named), "potential." .. c.name .. ": field '" .. q.name .. "'")
        end
      end
    end
  end)

  it("core.potential_create refuses unknown classes and non-finite parameters", function()
    T.has(T.errmsg(core.potential_create, "no_such", {}), "unknown potential class 'no_such'")
    T.has(T.errmsg(core.potential_create, "top", {0 / 0, 0, 0, 1}), "finite number expected")
    T.has(T.errmsg(core.potential_create, "stress", {0.3, 1, 0, 0, 0, 1, 0, 0, 0, 2}), "stress potential: Rm is not a rotation")
  end)
end)
