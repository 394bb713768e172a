-- SPDX-License-Identifier: GPL-3.0-or-later
-- busted spec for scripts/lieflow/view/plot.lua (lf.plot: gnuplot line plots, PNG/SVG/dumb terminal).
-- Run: cd /work/main && LUA_PATH="scripts/?.lua;scripts/?/init.lua;;" LUA_CPATH="build/lua/?.so;;" \
--        lua5.4 /usr/bin/busted --lua=lua5.4 tests/lua/plot_spec.lua
-- Tests that need gnuplot are pending when it is not installed; the no-gnuplot path is always tested.
local P = require "lieflow.view.plot"

local HAVE = P.gnuplot_available()
local it_gp = HAVE and it or pending

-- ---------------------------------------------------------------- helpers
local T = require "testlib"
local shq, read, make_tmpdir = T.shq, T.read, T.make_tmpdir

local function exists(p) return read(p) ~= nil end


-- data rows of a .dat file (comment lines dropped), each an array of strings
local function dat_rows(path)
  local rows = {}
  for line in assert(read(path), "missing " .. path):gmatch("[^\n]+") do
    if not line:match("^#") then
      local r = {}
      for w in line:gmatch("%S+") do r[#r + 1] = w end
      rows[#rows + 1] = r
    end
  end
  return rows
end

-- capture M.warn messages while running f
local function with_warnings(f)
  local got, old = {}, P.warn
  P.warn = function(msg) got[#got + 1] = msg end
  local ok, a, b = pcall(f)
  P.warn = old
  if not ok then error(a, 0) end
  return got, a, b
end

-- capture io.write output while running f
local function capture_stdout(f)
  local tmp = os.tmpname()
  local fh = assert(io.open(tmp, "w"))
  local old = io.output()
  io.output(fh)
  local ok, a, b = pcall(f)
  io.output(old)
  fh:close()
  local out = read(tmp)
  os.remove(tmp)
  if not ok then error(a, 0) end
  return out, a, b
end

local function expect_error(spec, pattern)
  local old = P.warn
  P.warn = function() end
  local ok, err = pcall(P.plot, spec)
  P.warn = old
  assert.is_false(ok, "expected an error matching " .. pattern)
  assert.is_truthy(tostring(err):find(pattern, 1, true),
    ("error %q does not contain %q"):format(tostring(err), pattern))
  return err
end

-- h = 2^-k, errors 1e-2 h^2
local hs, errs, errs4 = {}, {}, {}
for k = 1, 6 do
  hs[k] = 2.0 ^ -k
  errs[k] = 1e-2 * hs[k] ^ 2
  errs4[k] = 3e-3 * hs[k] ^ 4
end

local TMP
setup(function() TMP = make_tmpdir() end)
teardown(function()
  if TMP and TMP:match("^/tmp/") then os.execute("rm -rf -- " .. shq(TMP)) end
end)

-- ---------------------------------------------------------------- tests
describe("lf.plot", function()
  it("reports whether gnuplot is available", function()
    local ok, why = P.gnuplot_available("/nonexistent/gnuplot")
    assert.is_false(ok)
    assert.is_truthy(why:find("not found", 1, true))
    if HAVE then
      local ok2, ver = P.gnuplot_available()
      assert.is_true(ok2)
      assert.is_truthy(ver:match("^%d+%.%d+$"))
    end
  end)

  it_gp("writes a PNG with its .dat and .gp beside it (creating the directory)", function()
    local file = TMP .. "/png/nested/conv.png"
    local warnings, path, info = with_warnings(function()
      return P.plot{
        x = hs,
        y = { { label = "vlv", data = errs }, { label = "rkmk4", data = errs4, style = "points" } },
        logx = true, logy = true, title = "order plot", xlabel = "h", ylabel = "error",
        slopes = { { order = 2, label = "h^2" } },
        file = file,
      }
    end)
    assert.are.equal(file, path)
    assert.are.same({}, warnings)
    assert.is_true(info.rendered)
    local png = assert(read(file))
    assert.are.equal("\137PNG\r\n\26\n", png:sub(1, 8))
    assert.is_true(#png > 5000)
    -- data: x, vlv, rkmk4, slope column; exact round trip with %.17g
    local dat = TMP .. "/png/nested/conv.dat"
    assert.are.equal(dat, info.data)
    assert.is_truthy(read(dat):match("^# lieflow plot data: x vlv rkmk4 slope_2\n"))
    local rows = dat_rows(dat)
    assert.are.equal(#hs, #rows)
    for i, r in ipairs(rows) do
      assert.are.equal(4, #r)
      assert.are.equal(hs[i], tonumber(r[1]))
      assert.are.equal(errs[i], tonumber(r[2]))
      assert.are.equal(errs4[i], tonumber(r[3]))
      assert.are.equal(r[2], string.format("%.17g", errs[i]))
      -- reference line through the first point of the first series: 1e-2 h^2 exactly
      assert.is_true(math.abs(tonumber(r[4]) - errs[i]) <= 1e-15 * errs[i])
    end
    local gp = assert(read(TMP .. "/png/nested/conv.gp"))
    assert.is_truthy(gp:find("set terminal pngcairo", 1, true))
    assert.is_truthy(gp:find("size 900,600", 1, true))
    assert.is_truthy(gp:find("set logscale x 2", 1, true))
    assert.is_truthy(gp:find("set logscale y 10", 1, true))
    assert.is_truthy(gp:find("'order plot'", 1, true))
    assert.is_truthy(gp:find("with points", 1, true))
  end)

  it_gp("re-renders from the kept .gp file, from any working directory", function()
    local file = TMP .. "/rerender/a.png"
    P.plot{ x = { 1, 2, 3 }, y = { { 1, 4, 9 } }, title = "squares", file = file }
    assert.is_true(os.remove(file))
    assert.is_true(os.execute("cd / && gnuplot " .. shq(TMP .. "/rerender/a.gp") .. " 2>/dev/null"))
    assert.are.equal("\137PNG", assert(read(file)):sub(1, 4))
  end)

  it_gp("writes an SVG (chosen by the extension) with the requested size", function()
    local file = TMP .. "/svg/e.SVG"
    local path = P.plot{
      x = { 0, 1, 2, 3 }, y = { { label = "energy_error", data = { 0, 1e-3, -2e-3, 5e-4 } } },
      title = "energy error", size = { 640, 480 }, file = file,
    }
    assert.are.equal(file, path)
    local svg = assert(read(file))
    assert.is_truthy(svg:find("<svg", 1, true))
    assert.is_truthy(svg:find("energy error", 1, true))
    assert.is_truthy(svg:find("energy_error", 1, true)) -- labels are plain text (no subscript)
    assert.is_truthy(svg:find('width="640"', 1, true))
    assert.is_truthy(exists(TMP .. "/svg/e.gp"))
    assert.is_truthy(exists(TMP .. "/svg/e.dat"))
  end)

  it_gp("writes NaN and inf as nan, which gnuplot skips", function()
    local file = TMP .. "/nan/n.png"
    local warnings, path = with_warnings(function()
      return P.plot{ x = { 1, 2, 3, 4 }, y = { { 1, 0 / 0, math.huge, -math.huge } }, file = file }
    end)
    assert.is_truthy(table.concat(warnings):find("empty y range", 1, true)) -- gnuplot's own warning
    assert.are.equal(file, path)
    local rows = dat_rows(TMP .. "/nan/n.dat")
    assert.are.same({ { "1", "1" }, { "2", "nan" }, { "3", "nan" }, { "4", "nan" } }, rows)
  end)

  it_gp("skips non-positive values on log axes with a warning", function()
    local file = TMP .. "/log/l.png"
    local warnings, path = with_warnings(function()
      return P.plot{
        x = { 0, 1, 2, 3 },
        y = { { label = "a", data = { 1, -1, 4, 9 } }, { label = "b", data = { 0, 0, 0, -1 } } },
        logx = true, logy = true, file = file,
      }
    end)
    assert.are.equal(file, path)
    local all = table.concat(warnings, "\n")
    assert.is_truthy(all:find("x: 1 non-positive", 1, true))
    assert.is_truthy(all:find('y[1] ("a"): 1 non-positive', 1, true))
    assert.is_truthy(all:find('y[2] ("b")', 1, true))
    assert.is_truthy(all:find("left out", 1, true))
    -- the data file keeps the raw values
    local rows = dat_rows(TMP .. "/log/l.dat")
    assert.are.same({ "0", "1", "0" }, rows[1])
    assert.are.equal("-1", rows[2][2])
    assert.are.equal("\137PNG", assert(read(file)):sub(1, 4))
  end)

  it_gp("draws in the terminal with the dumb terminal when no file is given", function()
    local out, path, info = capture_stdout(function()
      return P.plot{ x = hs, y = { { label = "err", data = errs } }, logx = true, logy = true,
                     title = "REPL convergence", slopes = { { order = 2 } } }
    end)
    assert.is_nil(path)
    assert.is_truthy(out:find("REPL convergence", 1, true))
    assert.is_truthy(out:find("slope 2", 1, true))
    assert.are.equal(out, info.text)
    local lines = 0
    for _ in out:gmatch("\n") do lines = lines + 1 end
    assert.is_true(lines >= 25 and lines <= 32)
  end)

  it_gp("takes a single bare series and defaults x to 1..n", function()
    local out = capture_stdout(function() P.plot{ y = { 3, 1, 2 }, title = "bare" } end)
    assert.is_truthy(out:find("bare", 1, true))
  end)

  it("quotes paths and texts safely (spaces, quotes, backquotes)", function()
    local dir = TMP .. "/it's a dir"
    local file = dir .. "/q `x`.png"
    local warnings, path, info = with_warnings(function()
      return P.plot{ x = { 1, 2 }, y = { { label = "it's", data = { 1, 2 } } },
                     title = "`echo INJECTED` and 'quotes'\nsecond line p'' = -sin p", file = file,
                     gnuplot = (not HAVE) and "/nonexistent/gnuplot" or nil }
    end)
    local gp = assert(read(dir .. "/q `x`.gp"))
    -- an apostrophe is a string of its own: gnuplot 5.4 misreads two doubled ones in a row ('p'''')
    assert.is_truthy(gp:find([['`echo INJECTED` and '."'".'quotes'."'".''."\n".'second line p'."'".''."'".' = -sin p']],
                             1, true))
    assert.is_truthy(gp:find([[title 'it'."'".'s']], 1, true))
    if HAVE then
      assert.are.equal(file, path)
      assert.are.equal("\137PNG", assert(read(file)):sub(1, 4))
      assert.are.same({}, warnings)
    else
      assert.is_nil(path)
      assert.is_false(info.rendered)
    end
  end)

  describe("without gnuplot", function()
    it("writes .dat and .gp and says how to render them", function()
      local file = TMP .. "/nognuplot/sub/fig.png"
      local warnings, path, info = with_warnings(function()
        return P.plot{ x = hs, y = { { label = "err", data = errs } }, logx = true, logy = true,
                       slopes = { { order = 2, label = "h^2" } }, title = "no gnuplot here",
                       file = file, gnuplot = "/nonexistent/gnuplot" }
      end)
      assert.is_nil(path)
      assert.is_false(info.rendered)
      assert.is_false(exists(file))
      local gpfile = TMP .. "/nognuplot/sub/fig.gp"
      assert.are.equal(gpfile, info.script)
      assert.is_true(exists(gpfile))
      assert.are.equal(#hs, #dat_rows(TMP .. "/nognuplot/sub/fig.dat"))
      assert.are.equal(1, #warnings)
      local msg = warnings[1]
      assert.is_truthy(msg:find("not found", 1, true))
      assert.is_truthy(msg:find("/nonexistent/gnuplot", 1, true))
      assert.is_truthy(msg:find("apt-get install gnuplot-nox", 1, true))
      assert.is_truthy(msg:find("gnuplot " .. shq(gpfile), 1, true))
      -- the written script is complete: a real gnuplot renders it as promised
      if HAVE then
        assert.is_true(os.execute("gnuplot " .. shq(gpfile) .. " 2>/dev/null"))
        assert.are.equal("\137PNG", assert(read(file)):sub(1, 4))
      end
    end)

    it("in REPL mode also writes the files and prints the message", function()
      local warnings, path, info = with_warnings(function()
        return P.plot{ x = { 1, 2, 3 }, y = { { 1, 2, 3 } }, gnuplot = "/nonexistent/gnuplot" }
      end)
      assert.is_nil(path)
      assert.is_truthy(warnings[1]:find("not found", 1, true))
      assert.is_true(exists(info.script))
      assert.is_true(exists(info.data))
      os.remove(info.script)
      os.remove(info.data)
    end)
  end)

  it("reports gnuplot's stderr and exit status when it fails", function()
    local fake = TMP .. "/fake gnuplot.sh"
    local f = assert(io.open(fake, "w"))
    f:write('#!/bin/sh\nif [ "$1" = --version ]; then echo "gnuplot 5.4 patchlevel 0"; exit 0; fi\n',
      'echo "fake gnuplot: boom" >&2\nexit 3\n')
    f:close()
    assert(os.execute("chmod +x " .. shq(fake)))
    local err = expect_error({ x = { 1, 2 }, y = { { 1, 2 } }, file = TMP .. "/fail/f.png",
                               gnuplot = fake }, "gnuplot failed")
    assert.is_truthy(err:find("fake gnuplot: boom", 1, true))
    assert.is_truthy(err:find("exit 3", 1, true))
  end)

  describe("validates its input and names the argument", function()
    local x3 = { 1, 2, 3 }
    it("needs a table with y", function()
      expect_error(nil, "table argument expected")
      expect_error({ x = x3 }, "y: missing")
      expect_error({ x = x3, y = {} }, "y: no series")
      expect_error({ x = x3, y = 5 }, "y: table of series expected")
      expect_error({ x = x3, y = { "energy" } }, "y[1]: series expected")
    end)
    it("checks x", function()
      expect_error({ x = {}, y = { {} } }, "x: empty")
      expect_error({ x = { 1, "2", 3 }, y = { x3 } }, "x[2]: number expected, got string")
      expect_error({ x = 7, y = { x3 } }, "x: array of numbers expected, got number")
    end)
    it("checks the series", function()
      expect_error({ x = x3, y = { x3, { label = "err", data = { 1, 2 } } } },
        'y[2] ("err"): length 2, but x has length 3')
      expect_error({ x = x3, y = { { 1, 2, true } } }, "y[1][3]: number expected, got boolean")
      expect_error({ x = x3, y = { { label = "a" } } }, "y[1].data: missing")
      expect_error({ x = x3, y = { { label = "a", data = {} } } }, 'y[1] ("a"): empty')
      expect_error({ x = x3, y = { { data = x3, style = "bars" } } }, "y[1].style: one of lines")
      expect_error({ x = x3, y = { { 0 / 0, 0 / 0, 0 / 0 } } }, "y: no plottable points")
    end)
    it("checks the options", function()
      local function with(opts)
        local s = { x = x3, y = { x3 } }
        for k, v in pairs(opts) do s[k] = v end
        return s
      end
      expect_error(with{ style = "histogram" }, "style: one of lines")
      expect_error(with{ file = "out/a.pdf" }, "file: extension .png or .svg expected")
      expect_error(with{ file = "out/noext" }, "file: extension .png or .svg expected")
      expect_error(with{ file = 3 }, "file: path string expected")
      expect_error(with{ key = "top; system('x')" }, 'key: unknown word "top;"')
      expect_error(with{ logx = "yes" }, "logx: true, false or a base")
      expect_error(with{ size = { 900 } }, "size: {width, height}")
      expect_error(with{ xrange = { 0, 1 }, logx = true }, "xrange: must be positive with logx")
      expect_error(with{ title = {} }, "title: string expected")
      expect_error(with{ slopes = { { label = "h^2" } } }, "slopes[1].order: number expected")
      expect_error(with{ slopes = { { order = 2, through = { 1 } } } }, "slopes[1].through")
      expect_error(with{ gnuplot = "" }, "gnuplot: path of the gnuplot executable expected")
    end)
    it("raises the error at the caller's line", function()
      local ok, err = pcall(function() P.plot{ x = { 1 }, y = { { 1, 2 } } } end)
      assert.is_false(ok)
      assert.is_truthy(err:find("plot_spec.lua:%d+: lf.plot: y%[1%]"))
    end)
  end)
end)
