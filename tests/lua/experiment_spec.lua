-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow.experiment: the pure helpers of the example scripts (labels, step-size strings, error
-- ratios, arrays) and the bookkeeping that writes summary.json and raises on failures.
local lf = require "lieflow"
local experiment = require "lieflow.experiment"

local nan = 0 / 0

-- a fresh path under the temporary directory (experiment.start creates it)
local function fresh_path()
  local p = os.tmpname()
  os.remove(p)
  return p
end

local function read(path)
  local f = assert(io.open(path))
  local s = f:read("a")
  f:close()
  return s
end

-- runs f with print captured; returns the printed lines and f's pcall results
local function capture(f, ...)
  local lines, saved = {}, print
  _G.print = function(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    lines[#lines + 1] = table.concat(t, "\t")
  end
  local res = table.pack(pcall(f, ...))
  _G.print = saved
  return lines, table.unpack(res, 1, res.n)
end

local function labels(series)
  local l = {}
  for i, s in ipairs(series) do l[i] = s.label end
  return l
end

describe("experiment.label_hidden_series", function()
  it("marks a series that a later one with the same values (within 1 %) hides", function()
    local ys = {{label = "a", data = {1, 2, 3}}, {label = "b", data = {1.005, 2, 3}}, {label = "c", data = {5, 6, 7}}}
    experiment.label_hidden_series(ys)
    assert.same({"a (under b)", "b", "c"}, labels(ys))
  end)
  it("leaves series apart that differ by more than 1 % anywhere", function()
    local ys = {{label = "a", data = {1, 2, 3}}, {label = "b", data = {1, 2, 3.1}}}
    assert.same({"a", "b"}, labels(experiment.label_hidden_series(ys)))
  end)
  it("names the first later match only, and each series once along a chain", function()
    local ys = {{label = "a", data = {1, 1}}, {label = "b", data = {1, 1}}, {label = "c", data = {1, 1}}}
    assert.same({"a (under b)", "b (under c)", "c"}, labels(experiment.label_hidden_series(ys)))
  end)
  it("treats NaN (a failed run) as equal only to NaN, and needs one number in common", function()
    local same_nan = {{label = "a", data = {nan, 2}}, {label = "b", data = {nan, 2}}}
    assert.same({"a (under b)", "b"}, labels(experiment.label_hidden_series(same_nan)))
    local one_nan = {{label = "a", data = {nan, 2}}, {label = "b", data = {1, 2}}}
    assert.same({"a", "b"}, labels(experiment.label_hidden_series(one_nan)))
    local all_nan = {{label = "a", data = {nan, nan}}, {label = "b", data = {nan, nan}}}
    assert.same({"a", "b"}, labels(experiment.label_hidden_series(all_nan)))
  end)
  it("compares the first n points only, with a given tolerance", function()
    local ys = {{label = "a", data = {1, 2, 9}}, {label = "b", data = {1, 2, 3}}}
    assert.same({"a (under b)", "b"}, labels(experiment.label_hidden_series(ys, 2)))
    local zs = {{label = "a", data = {1, 2}}, {label = "b", data = {1.05, 2}}}
    assert.same({"a (under b)", "b"}, labels(experiment.label_hidden_series(zs, nil, 0.1)))
  end)
end)

describe("experiment step-size strings", function()
  it("writes powers of two", function()
    assert.equal("2^-3", experiment.pow2_str(0.125))
    assert.equal("2^0", experiment.pow2_str(1))
    assert.equal("2^-10", experiment.pow2_str(2 ^ -10 * (1 + 1e-9)))
  end)
  it("writes a range of steps, or one step", function()
    assert.equal("2^-5 ... 2^-12", experiment.range_str{2 ^ -5, 2 ^ -6, 2 ^ -12})
    assert.equal("2^-5 ... 2^-9", experiment.range_str{2 ^ -5, 2 ^ -9})
    assert.equal("2^-7", experiment.range_str{2 ^ -7})
  end)
end)

describe("experiment.error_ratio_range", function()
  local steps = {0.5, 0.25, 0.125, 0.0625}
  local a = {{err_R = 1, err_omega = 1}, {err_R = 1, err_omega = 3}, {failed = "newton"}, {err_R = 1, err_omega = 1}}
  local b = {{err_R = 2, err_omega = 2}, {err_R = 2, err_omega = 2}, {err_R = 1, err_omega = 1}, {err_R = 4, err_omega = 2}}
  it("gives the smallest and largest max(ratio in R, ratio in w) over the steps in [hmin, hmax]", function()
    local lo, hi = experiment.error_ratio_range(a, b, steps, 0, 1)
    assert.equal(0.5, lo)   -- h = 0.0625: max(1/4, 1/2); h = 0.5: max(1/2, 1/2)
    assert.equal(1.5, hi)   -- h = 0.25: max(1/2, 3/2); h = 0.125 failed in a and is skipped
    lo, hi = experiment.error_ratio_range(a, b, steps, 0.1, 0.3)
    assert.equal(1.5, lo)
    assert.equal(1.5, hi)
  end)
  it("gives math.huge, 0 when no step qualifies", function()
    local lo, hi = experiment.error_ratio_range(a, b, steps, 0.1, 0.2)
    assert.equal(math.huge, lo)
    assert.equal(0, hi)
  end)
end)

describe("experiment array helpers", function()
  it("max_abs, max_deviation, slice, max_over_min, join", function()
    assert.equal(3, experiment.max_abs{1, -3, 2})
    assert.equal(2, experiment.max_abs({1, -3, 2, 0}, 3, 4))
    assert.equal(0, experiment.max_abs{})
    assert.equal(4, experiment.max_deviation{1, -3, 2})
    assert.same({1, 2}, experiment.slice({1, 2, 3}, 2))
    assert.equal(4, experiment.max_over_min{2, 8, 4})
    assert.equal("1.5, 2", experiment.join({1.5, 2}, "%g"))
    assert.equal("a1|b2", experiment.join({"a", "b"}, function(v, i) return v .. i end, "|"))
  end)
  it("on_grid interpolates the polyline, NaN outside it", function()
    local r = experiment.on_grid({-1, 0, 0.5, 1, 2, 3}, {0, 1, 2}, {0, 10, 30})
    assert.is_true(r[1] ~= r[1])
    assert.same({0, 5, 10, 30}, {r[2], r[3], r[4], r[5]})
    assert.is_true(r[6] ~= r[6])
    local one = experiment.on_grid({0, 1}, {1}, {7})
    assert.is_true(one[1] ~= one[1])
    assert.equal(7, one[2])
    local none = experiment.on_grid({0}, {}, {})
    assert.is_true(none[1] ~= none[1])
  end)
end)

describe("experiment bookkeeping", function()
  it("start: quick from the script's arg, check collects failures", function()
    local dir = fresh_path()
    local study = experiment.start("demo", {"--quick"}, dir .. "/out")
    assert.equal(dir .. "/out", study.out)
    local probe = assert(io.open(dir .. "/out/probe", "w"), "start did not create the output directory")
    probe:close()
    assert.is_true(study.quick)
    assert.is_false(experiment.start("demo", {}, dir .. "/out").quick)
    assert.is_nil(experiment.start("demo", nil, dir .. "/out").quick)
    study.check(true, "not recorded")
    study.check(false, "recorded")
    assert.same({"recorded"}, study.failures)
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("finish writes summary.json, prints the differences and raises on failures", function()
    local dir = fresh_path()
    local study = experiment.start("demo", {}, dir .. "/demo")
    study.summary.value = 1.5
    study.check(false, "first")
    study.check(false, "second")
    study.differences[1] = "a difference"
    local lines, ok, err = capture(experiment.finish, study, {files = "Figures, CSVs and summary.json",
                                                              reproduced = {"not printed"}})
    assert.is_false(ok)
    assert.truthy(tostring(err):find("demo does not reproduce the paper:\n  first\n  second", 1, true))
    assert.same({"Difference from the paper: a difference", "\nFigures, CSVs and summary.json in " .. dir .. "/demo/"}, lines)
    local s = lf.json.decode(read(dir .. "/demo/summary.json"))
    assert.equal("demo", s.experiment)
    assert.equal(1.5, s.value)
    assert.same({"first", "second"}, s.failures)
    assert.same({"a difference"}, s.differences)
    assert.equal(lf.drift_rule, s.drift_rule)
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("finish without failures writes empty lists as JSON arrays and prints the reproduced lines", function()
    local dir = fresh_path()
    local study = experiment.start("demo", {}, dir)
    local lines, ok = capture(experiment.finish, study, {reproduced = {"line 1", "line 2"}})
    assert.is_true(ok)
    assert.same({"\nFigures and summary.json in " .. dir .. "/", "line 1", "line 2"}, lines)
    local text = read(dir .. "/summary.json")
    assert.truthy(text:find('"failures": []', 1, true))
    assert.truthy(text:find('"differences": []', 1, true))
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("report's error names the caller's line and uses the given message", function()
    local study = {name = "demo", out = "nowhere", failures = {"broken"}, differences = {}}
    local _, ok, err = capture(function() experiment.report(study, {failure = "stress test does not reproduce the papers"}) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("experiment_spec.lua:%d+: stress test does not reproduce the papers:\n  broken$"))
  end)
end)
