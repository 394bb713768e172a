-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow.view.plot — line plots through gnuplot (exposed as lf.plot), and traj:plot.
--
--   lf.plot{
--     x = {...},                          -- abscissae (numbers); default 1, 2, ..., n
--     y = { {...}, {label = "err", data = {...}, style = "points"}, ... },
--                                         -- one or more series (a bare array of numbers is one series)
--     title = , xlabel = , ylabel = ,     -- plain text (gnuplot markup only with enhanced = true)
--     logx = bool | 2 | 10, logy = bool | 2 | 10,
--     style = "lines" | "linespoints" | "points" | "steps" | "impulses" | "dots"
--                                         -- default: linespoints for <= 50 points, else lines
--     slopes = { {order = 2, label = "h^2", through = {x, y}, shift = 1}, ... },
--                                         -- reference lines y = shift*y0*(x/x0)^order through the first
--                                         -- plottable point of the first series (or `through`)
--     key = "auto" | "top left" | "bottom right" | "outside" | "below" | false ...,
--     xrange = {lo, hi}, yrange = {lo, hi}, grid = true, size = {900, 600},
--     file = nil | "out/a.png" | "out/a.svg",
--     gnuplot = "gnuplot",                -- executable (env LIEFLOW_GNUPLOT overrides the default)
--   } -> image path, info
--
-- With `file`, <file without extension>.dat (x, then each series, then each slope line; %.17g;
-- NaN and +-inf written as "nan", which gnuplot skips) and <...>.gp are kept beside the image.
-- The script finds its data relative to itself, so `gnuplot out/a.gp` re-renders from any directory.
-- Without `file` the plot is drawn with gnuplot's dumb terminal (100x30 characters) on stdout
-- (io.write), for the REPL; the function then returns nil, info with info.text the drawing.
-- Without gnuplot, the .dat and .gp are written anyway and a message says how to render them;
-- the function then returns nil, info. info = {image=, data=, script=, rendered=, text=, message=}.
-- Errors name the offending argument; warnings (skipped points on log axes) go through M.warn.
-- info has a __tostring (one line), so that the REPL does not print the drawing a second time.
--
-- Files are complete or absent: .dat, .gp and the image are written to temporary files beside
-- them and renamed when complete (core.atomic_open; the image: gnuplot writes a temporary name
-- given with -e lf_tmp=..., renamed when gnuplot succeeded); a write error (full disk, /dev/full)
-- is an error with the OS's reason. gnuplot runs without a shell (core.spawn); the terminal
-- drawing gets its script and data on gnuplot's stdin (an inline datablock), so it leaves no
-- file anywhere, even when interrupted.
local core = require "lieflow.core"
local options = require "lieflow.options"
local trajectory = require "lieflow.run.trajectory"
local M = {}

-- largest image side in pixels (a 10000 x 10000 RGBA image is 400 MB for cairo)
M.max_size = 10000
-- largest base of a log axis (gnuplot 5.4 does not finish with a base of 1e8 or more)
M.max_log_base = 1e6
-- seconds gnuplot may take before it is stopped (a bug of gnuplot's must not hang lf.plot)
M.timeout = 120

local DEFAULT_SIZE = { 900, 600 }
local DUMB_SIZE = { 100, 30 }
local STYLES = { lines = true, linespoints = true, points = true, steps = true, impulses = true,
                 dots = true }
-- reference slope lines: dark greys with distinct dash patterns
local SLOPE_STYLES = { "dt (10,6) lw 1.8 lc rgb '#303030'", "dt (3,4) lw 2 lc rgb '#606060'",
                       "dt (16,4,3,4) lw 1.8 lc rgb '#404040'", "dt (6,3,2,3,2,3) lw 1.8 lc rgb '#707070'" }
local KEY_WORDS = { top = true, bottom = true, left = true, right = true, center = true,
                    inside = true, outside = true, below = true, above = true, box = true,
                    nobox = true, opaque = true, noopaque = true, horizontal = true,
                    vertical = true, lmargin = true, rmargin = true, tmargin = true,
                    bmargin = true, reverse = true, noreverse = true, Left = true, Right = true }

--- Where warnings and the "gnuplot not found" message go (replaceable, e.g. by tests).
function M.warn(msg) io.stderr:write("lf.plot: ", msg, "\n") end

-- ------------------------------------------------------------------ small helpers
local function fail(msg) error("lf.plot: " .. msg, 0) end
local function is_autodiff(x)
  local mt = getmetatable(x)
  return type(mt) == "table" and rawget(mt, "__lf_dual") ~= nil
end

-- POSIX shell quoting
local function shq(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

-- a file argument that gnuplot cannot mistake for an option ("-a.gp" -> "./-a.gp")
local function file_arg(p)
  p = tostring(p)
  if p:sub(1, 1) == "-" then p = "./" .. p end
  return p
end

-- gnuplot string expression for arbitrary text: single-quoted pieces (no backquote command
-- substitution, no escapes) joined by "\n" for line breaks.
local function gq(s)
  s = tostring(s):gsub("\r\n?", "\n"):gsub("[%z\1-\9\11-\31\127]", " ")
  local parts = {}
  -- an apostrophe as a string of its own ("'"): gnuplot 5.4 misreads two doubled ones in a row ('a''''b')
  for line in (s .. "\n"):gmatch("(.-)\n") do parts[#parts + 1] = "'" .. line:gsub("'", "'.\"'\".'") .. "'" end
  return table.concat(parts, '."\\n".')
end

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

local function fmt(v)
  if not finite(v) then return "nan" end
  return string.format("%.17g", v)
end

local function file_size(p)
  local f = io.open(p, "rb")
  if not f then return nil end
  local n = f:seek("end")
  f:close()
  return n
end

-- the whole file or nothing (core.atomic_open); errors name what, the path and the OS's reason
local function write_file(p, s, what)
  local ok, err = pcall(function()
    local f <close> = core.atomic_open(p, "lf.plot: " .. what)
    f:write(s)
    f:commit()
  end)
  if not ok then error(err, 0) end
end

local function dirname(p)
  local d = p:match("^(.*)/[^/]*$")
  if d == nil then return "." end
  if d == "" then return "/" end
  return d
end

local function basename(p) return p:match("([^/]*)$") end

-- mkdir -p (core.mkdir_p: no shell)
local function mkdir_p(dir)
  if dir == "." or dir == "/" or dir == "" then return end
  local ok, err = pcall(core.mkdir_p, dir)
  if not ok then fail(tostring(err)) end
end

-- ------------------------------------------------------------------ gnuplot detection
local available_cache = {}

local function default_exe() return os.getenv("LIEFLOW_GNUPLOT") or "gnuplot" end

--- M.gnuplot_available([exe]) -> true, version string | false, reason. Needs gnuplot >= 5.
function M.gnuplot_available(exe)
  if exe ~= nil and (type(exe) ~= "string" or exe == "" or exe:find("\0", 1, true)) then
    error(("lf.gnuplot_available: path of the gnuplot executable (a non-empty string without NUL) expected, got %s")
      :format(type(exe) == "string" and ("%q"):format(exe) or type(exe)), 2)
  end
  exe = exe or default_exe()
  local c = available_cache[exe]
  if c then return c[1], c[2] end
  local ok, why = false, "gnuplot not found (" .. exe .. ")"
  local sok, status, code, out = pcall(core.spawn, { exe, "--version" })
  if sok and status == "exited" and code == 0 then
    local major, minor = out:match("gnuplot%s+(%d+)%.(%d+)")
    if major then
      if tonumber(major) >= 5 then
        ok, why = true, ("%s.%s"):format(major, minor)
      else
        why = ("gnuplot %s.%s at %s is too old (5.0 or newer needed)"):format(major, minor, exe)
      end
    end
  end
  available_cache[exe] = { ok, why }
  return ok, why
end

-- ------------------------------------------------------------------ validation
-- Arrays are read raw (rawlen, rawget) and copied: a __len or __index on them can neither lie
-- about the data nor run later while the files are written.
local function check_array(a, name, n)
  if type(a) ~= "table" then
    fail(("%s: array of numbers expected, got %s"):format(name, type(a)))
  end
  local len = rawlen(a)
  if len == 0 then fail(("%s: empty"):format(name)) end
  if n and len ~= n then
    fail(("%s: length %d, but x has length %d"):format(name, len, n))
  end
  local copy = {}
  for i = 1, len do
    local v = rawget(a, i)
    if type(v) ~= "number" then
      fail(("%s[%d]: number expected, got %s"):format(name, i, type(v)))
    end
    copy[i] = v
  end
  return len, copy
end

local function log_base(v, name)
  if v == nil or v == false then return nil end
  if v == true then return true end -- base chosen later
  if type(v) == "number" and v > 1 and v <= M.max_log_base then return v end
  fail(("%s: true, false or a base in (1, %g] expected, got %s"):format(name, M.max_log_base, tostring(v)))
end

local function check_style(s, name)
  if s == nil then return nil end
  if type(s) ~= "string" or not STYLES[s] then
    fail(("%s: one of lines, linespoints, points, steps, impulses, dots expected, got %s")
      :format(name, tostring(s)))
  end
  return s
end

local function check_text(s, name)
  if s == nil then return nil end
  if type(s) ~= "string" and type(s) ~= "number" then
    fail(("%s: string expected, got %s"):format(name, type(s)))
  end
  return tostring(s)
end

local function check_range(r, name)
  if r == nil then return nil end
  if type(r) ~= "table" then fail(("%s: {lo, hi} expected, got %s"):format(name, type(r))) end
  for i = 1, 2 do
    if r[i] ~= nil and (type(r[i]) ~= "number" or not finite(r[i])) then
      fail(("%s[%d]: finite number or nil expected"):format(name, i))
    end
  end
  return { r[1], r[2] }
end

local function check_key(k)
  if k == nil or k == "auto" then return "auto" end
  if k == false or k == "off" or k == "none" then return false end
  if type(k) ~= "string" then fail(("key: string or false expected, got %s"):format(type(k))) end
  for w in k:gmatch("%S+") do
    if not KEY_WORDS[w] then
      fail(("key: unknown word %q (use e.g. \"top left\", \"bottom right\", \"outside\", " ..
        "\"below\", false)"):format(w))
    end
  end
  return k
end

local function is_power_of_two(v)
  if not (v > 0 and finite(v)) then return false end
  local m = math.frexp(v)
  return m == 0.5
end

-- ------------------------------------------------------------------ preparation
local PLOT_KEYS = {"x", "y", "title", "xlabel", "ylabel", "logx", "logy", "style", "key", "xrange", "yrange", "grid",
                   "enhanced", "file", "size", "gnuplot", "slopes"}

-- The series of spec.y (P.series: data copied, label, style, what names it in messages), the
-- abscissae (P.x: spec.x copied, or 1..n) and their number P.n.
local function prepare_series(spec, P)
  local y = spec.y
  if y == nil then fail("y: missing (one or more series: y = {{...}, {label = , data = }})") end
  -- (tables are read raw, their metatables not consulted; an autodiff value is not a series)
  if type(y) ~= "table" or is_autodiff(y) then fail(("y: table of series expected, got %s"):format(options.kind(y))) end
  if type(rawget(y, 1)) == "number" or (rawget(y, "data") ~= nil) then y = { y } end -- a single series
  if rawlen(y) == 0 then fail("y: no series") end

  local n, xcopy
  if spec.x ~= nil then n, xcopy = check_array(spec.x, "x") end
  P.series = {}
  for k = 1, rawlen(y) do
    local s = rawget(y, k)
    local name = ("y[%d]"):format(k)
    if type(s) ~= "table" or is_autodiff(s) then
      fail(("%s: series expected (array of numbers or {label = , data = }), got %s")
        :format(name, options.kind(s)))
    end
    local data, label, style = s, nil, nil
    local sdata, slabel, sstyle = rawget(s, "data"), rawget(s, "label"), rawget(s, "style")
    if sdata ~= nil or slabel ~= nil or sstyle ~= nil then
      data = sdata
      if data == nil then fail(name .. ".data: missing") end
      label = check_text(slabel, name .. ".label")
      style = check_style(sstyle, name .. ".style")
    end
    local what = label and ("%s (%q)"):format(name, label) or name
    if type(data) ~= "table" then
      fail(("%s: array of numbers expected, got %s"):format(what, type(data)))
    end
    n = n or rawlen(data)
    local _, copy = check_array(data, what, n)
    P.series[k] = { data = copy, label = label, style = style, what = what }
  end
  if spec.x ~= nil then
    P.x = xcopy
  else
    P.x = {}
    for i = 1, n do P.x[i] = i end
  end
  P.n = n
end

-- Titles, log axes (true: the base is chosen later), style, key, ranges, grid, enhanced text.
local function prepare_axes(spec, P)
  P.title = check_text(spec.title, "title")
  P.xlabel = check_text(spec.xlabel, "xlabel")
  P.ylabel = check_text(spec.ylabel, "ylabel")
  P.logx = log_base(spec.logx, "logx")
  P.logy = log_base(spec.logy, "logy")
  P.style = check_style(spec.style, "style") or (P.n <= 50 and "linespoints" or "lines")
  P.key = check_key(spec.key)
  P.xrange = check_range(spec.xrange, "xrange")
  P.yrange = check_range(spec.yrange, "yrange")
  P.grid = spec.grid ~= false
  P.enhanced = spec.enhanced == true
  if P.logx and P.xrange then
    for i = 1, 2 do
      if P.xrange[i] and P.xrange[i] <= 0 then fail("xrange: must be positive with logx") end
    end
  end
  if P.logy and P.yrange then
    for i = 1, 2 do
      if P.yrange[i] and P.yrange[i] <= 0 then fail("yrange: must be positive with logy") end
    end
  end
end

-- The output: the image file (P.file, P.base, P.ext), its size, the gnuplot executable (P.exe).
local function prepare_output(spec, P)
  if spec.file ~= nil then
    if type(spec.file) ~= "string" or spec.file == "" then
      fail(("file: path string expected, got %s"):format(type(spec.file) == "string" and '""' or type(spec.file)))
    end
    if spec.file:find("\0", 1, true) then fail("file: the path contains a NUL byte") end
    local base, ext = spec.file:match("^(.*)%.([^./]+)$")
    ext = ext and ext:lower()
    if ext ~= "png" and ext ~= "svg" then
      fail(("file: extension .png or .svg expected, got %s"):format(spec.file))
    end
    if basename(base) == "" then fail("file: empty file name " .. spec.file) end
    P.file, P.base, P.ext = spec.file, base, ext
  end
  if spec.size ~= nil then
    local s = spec.size
    local function side(v) return type(v) == "number" and v >= 1 and v <= M.max_size end -- false for NaN
    if type(s) ~= "table" or not side(s[1]) or not side(s[2]) then
      local got = type(s) ~= "table" and type(s)
        or ("{%s, %s}"):format(tostring(s[1]), tostring(s[2]))
      fail(("size: {width, height} in pixels, each from 1 to %d, expected, got %s"):format(M.max_size, got))
    end
    P.size = { math.floor(s[1] + 0.5), math.floor(s[2] + 0.5) }
  end
  if spec.gnuplot ~= nil and (type(spec.gnuplot) ~= "string" or spec.gnuplot == ""
      or spec.gnuplot:find("\0", 1, true)) then
    fail("gnuplot: path of the gnuplot executable expected")
  end
  P.exe = spec.gnuplot or default_exe()
end

-- Which points are plottable: finite, and positive on log axes. Returns xok (the abscissae that
-- are); marks each series' points (s.ok), leaves out (s.skip) the series with none, and lists the
-- others in P.plotted; warns about what is skipped.
local function mark_plottable(P)
  local x, n = P.x, P.n
  local xok, nxbad, nxnan = {}, 0, 0
  for i = 1, n do
    local v = x[i]
    if not finite(v) then
      xok[i] = false; nxnan = nxnan + 1
    elseif P.logx and v <= 0 then
      xok[i] = false; nxbad = nxbad + 1
    else
      xok[i] = true
    end
  end
  if nxbad > 0 then
    M.warn(("x: %d non-positive value(s) skipped on the logarithmic x axis"):format(nxbad))
  end
  local plotted = {}
  for _, s in ipairs(P.series) do
    local good, nbad = 0, 0
    s.ok = {}
    for i = 1, n do
      local v = s.data[i]
      local ok = xok[i] and finite(v)
      if ok and P.logy and v <= 0 then ok = false; nbad = nbad + 1 end
      s.ok[i] = ok
      if ok then good = good + 1 end
    end
    if nbad > 0 then
      M.warn(("%s: %d non-positive value(s) skipped on the logarithmic y axis"):format(s.what, nbad))
    end
    if good == 0 then
      M.warn(("%s: no plottable points (all NaN/inf%s); series left out"):format(s.what,
        (P.logx or P.logy) and " or non-positive on a log axis" or ""))
      s.skip = true
    else
      plotted[#plotted + 1] = s
    end
  end
  if #plotted == 0 then
    fail("y: no plottable points in any series (all NaN/inf" ..
      ((P.logx or P.logy) and " or non-positive on a log axis)" or ")"))
  end
  P.plotted = plotted
  return xok
end

-- One reference slope line, slopes[k] = sl: its column y = shift y0 (x/x0)^order through (x0, y0)
-- (`through`, or the first plottable point of the first plotted series), NaN where x is not
-- plottable or, on a log y axis, where the line is not positive.
local function slope_line(P, sl, k, xok)
  local x, n = P.x, P.n
  local name = ("slopes[%d]"):format(k)
  if type(sl) ~= "table" then fail(name .. ": {order = , label = } expected") end
  if type(sl.order) ~= "number" or not finite(sl.order) then
    fail(name .. ".order: number expected")
  end
  local label = check_text(sl.label, name .. ".label")
  local shift = sl.shift or 1
  if type(shift) ~= "number" or not finite(shift) or shift <= 0 then
    fail(name .. ".shift: positive number expected")
  end
  local x0, y0
  if sl.through ~= nil then
    local t = sl.through
    if type(t) ~= "table" or type(t[1]) ~= "number" or type(t[2]) ~= "number"
        or not finite(t[1]) or not finite(t[2]) then
      fail(name .. ".through: {x, y} with finite numbers expected")
    end
    x0, y0 = t[1], t[2]
  else
    local s = P.plotted[1]
    for i = 1, n do
      if s.ok[i] then x0, y0 = x[i], s.data[i]; break end
    end
  end
  if x0 == 0 then fail(name .. ": the anchor point has x = 0") end
  local col = {}
  for i = 1, n do
    local v = x[i]
    col[i] = xok[i] and shift * y0 * (v / x0) ^ sl.order or (0 / 0)
    if P.logy and not (col[i] > 0) then col[i] = 0 / 0 end
  end
  return {
    order = sl.order, data = col,
    label = label or ("slope %s"):format(string.format("%g", sl.order)),
  }
end

local function prepare(spec)
  if type(spec) ~= "table" then fail("table argument expected, e.g. lf.plot{x = ..., y = {...}}") end
  local okk, kerr = pcall(options.check_keys, spec, PLOT_KEYS, "lf.plot", 0)
  if not okk then error(kerr, 0) end
  local P = {}
  prepare_series(spec, P)
  prepare_axes(spec, P)
  prepare_output(spec, P)
  local xok = mark_plottable(P)

  -- reference slope lines
  P.slopes = {}
  if spec.slopes ~= nil then
    if type(spec.slopes) ~= "table" then fail("slopes: array of {order = , label = } expected") end
    local list = spec.slopes
    if list.order ~= nil then list = { list } end
    for k, sl in ipairs(list) do P.slopes[#P.slopes + 1] = slope_line(P, sl, k, xok) end
  end

  -- base of the log axes: 2 when every plottable x is a power of two (h = 2^-k), else 10
  if P.logx == true then
    local all2, cnt = true, 0
    for i = 1, P.n do
      if xok[i] then
        cnt = cnt + 1
        if not is_power_of_two(P.x[i]) then all2 = false; break end
      end
    end
    P.logx = (all2 and cnt >= 2) and 2 or 10
  end
  if P.logy == true then P.logy = 10 end
  return P
end

-- ------------------------------------------------------------------ key placement
-- Count the points (and a few points along each segment) that fall in each corner of the plot,
-- in axis coordinates (logarithmic where the axis is), and pick the emptiest corner.
local function auto_key(P, nentries)
  local function tx(v) return P.logx and math.log(v) or v end
  local function ty(v) return P.logy and math.log(v) or v end
  local pts = {}
  local lines = {}
  for _, s in ipairs(P.plotted) do lines[#lines + 1] = { data = s.data, ok = s.ok } end
  for _, sl in ipairs(P.slopes) do
    local ok = {}
    for i = 1, P.n do ok[i] = finite(sl.data[i]) end
    lines[#lines + 1] = { data = sl.data, ok = ok }
  end
  local xmin, xmax, ymin, ymax = math.huge, -math.huge, math.huge, -math.huge
  for _, l in ipairs(lines) do
    local prev
    for i = 1, P.n do
      if l.ok[i] and finite(l.data[i]) and not (P.logy and l.data[i] <= 0)
          and not (P.logx and P.x[i] <= 0) and finite(P.x[i]) then
        local px, py = tx(P.x[i]), ty(l.data[i])
        if prev then
          for j = 1, 7 do
            local a = j / 8
            pts[#pts + 1] = { prev[1] + a * (px - prev[1]), prev[2] + a * (py - prev[2]) }
          end
        end
        pts[#pts + 1] = { px, py }
        prev = { px, py }
        xmin, xmax = math.min(xmin, px), math.max(xmax, px)
        ymin, ymax = math.min(ymin, py), math.max(ymax, py)
      else
        prev = nil
      end
    end
  end
  if #pts == 0 then return "top right" end
  local dx = (xmax > xmin) and (xmax - xmin) or 1
  local dy = (ymax > ymin) and (ymax - ymin) or 1
  local kh = math.min(0.6, 0.08 + 0.07 * nentries)
  local kw = 0.45
  local corners = { { "top right", 1, 1 }, { "top left", 0, 1 }, { "bottom right", 1, 0 },
                    { "bottom left", 0, 0 } }
  local best, bestc = "top right", math.huge
  for _, c in ipairs(corners) do
    local cnt = 0
    for _, p in ipairs(pts) do
      local u, v = (p[1] - xmin) / dx, (p[2] - ymin) / dy
      local inx, iny
      if c[2] == 1 then inx = u >= 1 - kw else inx = u <= kw end
      if c[3] == 1 then iny = v >= 1 - kh else iny = v <= kh end
      if inx and iny then cnt = cnt + 1 end
    end
    if cnt < bestc then best, bestc = c[1], cnt end
  end
  -- every corner crowded (e.g. oscillating time series): put the key under the plot
  if bestc > math.max(3, 0.01 * #pts) then return "below" end
  return best
end

-- ------------------------------------------------------------------ files
local function data_text(P)
  local cols = { "x" }
  for k, s in ipairs(P.series) do cols[#cols + 1] = (s.label or ("y" .. k)):gsub("%s+", "_") end
  for _, sl in ipairs(P.slopes) do cols[#cols + 1] = ("slope_%g"):format(sl.order) end
  local out = { "# lieflow plot data: " .. table.concat(cols, " ") }
  if P.title then out[#out + 1] = "# title: " .. P.title:gsub("\n", " ") end
  for i = 1, P.n do
    local row = { fmt(P.x[i]) }
    for _, s in ipairs(P.series) do row[#row + 1] = fmt(s.data[i]) end
    for _, sl in ipairs(P.slopes) do row[#row + 1] = fmt(sl.data[i]) end
    out[#out + 1] = table.concat(row, " ")
  end
  return table.concat(out, "\n") .. "\n"
end

local function style_clause(style, dumb)
  if style == "lines" or style == "steps" then
    return ("with %s lw 2"):format(style)
  elseif style == "linespoints" then
    return dumb and "with linespoints" or "with linespoints lw 2 pt 7 ps 0.9"
  elseif style == "points" then
    return dumb and "with points" or "with points pt 7 ps 0.9"
  elseif style == "impulses" then
    return "with impulses lw 2"
  end
  return "with " .. style
end

-- tick label for m * 10^k: plain below 10^4 and above 10^-3, else m×10^{k} (enhanced text)
local function tick_label(v)
  if v >= 1e-3 and v < 1e4 then return ("%.6g"):format(v) end
  local k = math.floor(math.log(v, 10) + 1e-9)
  local m = v / 10.0 ^ k
  if m > 9.9999 then m, k = m / 10, k + 1 end
  if math.abs(m - 1) < 1e-6 then return ("10^{%d}"):format(k) end
  return ("%s×10^{%d}"):format(("%.4g"):format(m), k)
end

-- The script's first lines: where the data is (an inline datablock, or the data file found next
-- to the script), the terminal and output, the title and the axis labels.
local function script_head(P, mode, datname, imgname, inline, add, txt)
  add("# lieflow plot script (gnuplot >= 5). Re-render with: gnuplot <this file>")
  if inline then
    add("$lieflow_data << EOD")
    add((inline:gsub("\n$", "")))
    add("EOD")
    add("datafile = '$lieflow_data'")
  else
    add("# Data and image are found next to this script, whatever the working directory.")
    add('if (!exists("ARG0")) ARG0 = ""')
    add("scriptdir = ARG0; i = strlen(scriptdir)")
    add('while (i > 0 && scriptdir[i:i] ne "/") { i = i - 1 }')
    -- "./", not "": a name starting with $ would otherwise be taken for a datablock
    add('scriptdir = (i > 0) ? scriptdir[1:i] : "./"')
    add("datafile = scriptdir." .. gq(datname))
  end
  -- lf.plot renders to a temporary name (-e "lf_tmp='...'") and renames it when complete
  local output = "set output scriptdir.(exists(\"lf_tmp\") ? lf_tmp : " .. (imgname and gq(imgname) or "''") .. ")"
  if mode == "png" then
    local s = P.size or DEFAULT_SIZE
    add(("set terminal pngcairo enhanced size %d,%d font 'Sans,12' linewidth 1"):format(s[1], s[2]))
    add(output)
  elseif mode == "svg" then
    local s = P.size or DEFAULT_SIZE
    add(("set terminal svg enhanced size %d,%d font 'Sans,12' background 'white'")
      :format(s[1], s[2]))
    add(output)
  else
    add(("set terminal dumb size %d,%d"):format(DUMB_SIZE[1], DUMB_SIZE[2]))
  end
  add("set encoding utf8")
  if P.title then add("set title " .. txt(P.title)) end
  if P.xlabel then add("set xlabel " .. txt(P.xlabel)) end
  if P.ylabel then add("set ylabel " .. txt(P.ylabel)) end
end

-- The span lo, hi of the positive finite values plotted on axis ax ("x" or "y"; on y the series'
-- plottable points and the slope lines).
local function positive_span(P, ax)
  local lo, hi = math.huge, -math.huge
  local function scan(v)
    if finite(v) and v > 0 then lo = math.min(lo, v); hi = math.max(hi, v) end
  end
  if ax == "x" then
    for i = 1, P.n do scan(P.x[i]) end
  else
    for _, s in ipairs(P.plotted) do
      for i = 1, P.n do if s.ok[i] then scan(s.data[i]) end end
    end
    for _, sl in ipairs(P.slopes) do for i = 1, P.n do scan(sl.data[i]) end end
  end
  return lo, hi
end

-- A log axis ax over less than two decades, lo..hi: gnuplot would stretch the axis to whole
-- decades with one or two labels; use the data range (plus a margin) and ticks at 1, 2, 5 x 10^k
-- instead.
local function short_log_axis(ax, lo, hi, add)
  local function ticks(mults)
    local t = {}
    for k = math.floor(math.log(lo, 10)) - 1, math.ceil(math.log(hi, 10)) + 1 do
      for _, m in ipairs(mults) do
        local v = m * 10.0 ^ k
        if v >= lo / 1.15 and v <= hi * 1.15 then t[#t + 1] = v end
      end
    end
    return t
  end
  local t = ticks({ 1, 2, 5 })
  if #t < 3 then t = ticks({ 1, 1.5, 2, 3, 5, 7 }) end
  if #t < 3 then t = ticks({ 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9 }) end
  local labels = {}
  for _, v in ipairs(t) do labels[#labels + 1] = ("%s %s"):format(gq(tick_label(v)), fmt(v)) end
  if #labels > 0 then add(("set %stics (%s)"):format(ax, table.concat(labels, ", "))) end
  add(("set m%stics default"):format(ax))
  local m = (hi / lo) ^ 0.04
  -- (nearly) constant data: the range would be (nearly) empty, which gnuplot refuses on a
  -- log axis ("Can't plot with an empty y range"); take a 5% margin instead
  if m < 1 + 1e-6 then m = 1.05 end
  add(("set %srange [%s:%s]"):format(ax, fmt(math.min(lo / m, t[1] or lo)),
    fmt(math.max(hi * m, t[#t] or hi))))
end

-- The axes: log scales and their labels, ranges, grid.
local function script_axes(P, dumb, add)
  for _, ax in ipairs({ "x", "y" }) do
    local base = P["log" .. ax]
    if base then
      add(("set logscale %s %s"):format(ax, string.format("%g", base)))
      -- span of the plotted values on this axis
      local lo, hi = positive_span(P, ax)
      local fixed = P[ax .. "range"] ~= nil
      if dumb then
        add(("set format %s '%%g'"):format(ax))
      elseif base == 2 then
        add(("set format %s '2^{%%L}'"):format(ax))
      elseif hi / lo >= 100 or fixed or not (hi >= lo) then
        add(("set format %s '10^{%%L}'"):format(ax))
      else
        short_log_axis(ax, lo, hi, add)
      end
    end
  end
  if P.xrange then
    add(("set xrange [%s:%s]"):format(P.xrange[1] and fmt(P.xrange[1]) or "*",
      P.xrange[2] and fmt(P.xrange[2]) or "*"))
  end
  if P.yrange then
    add(("set yrange [%s:%s]"):format(P.yrange[1] and fmt(P.yrange[1]) or "*",
      P.yrange[2] and fmt(P.yrange[2]) or "*"))
  end
  if P.grid then
    if dumb then
      -- the dumb terminal draws grids as dots everywhere; keep it readable without
    else
      add("set grid xtics ytics lt 1 lw 1 lc rgb '#dcdcdc'")
    end
  end
end

-- The key and the plot command (one entry per series not left out, then the slope lines).
local function script_plot(P, dumb, add, txt)
  local entries = {}
  local nentries = 0
  for _, s in ipairs(P.plotted) do if s.label then nentries = nentries + 1 end end
  nentries = nentries + #P.slopes
  local single_unlabelled = (#P.plotted == 1 and not P.plotted[1].label and #P.slopes == 0)
  if P.key == false or single_unlabelled then
    add("set key off")
  else
    local where = P.key == "auto" and auto_key(P, math.max(nentries, #P.plotted)) or P.key
    if dumb then
      add("set key " .. where)
    else
      -- under the plot the box needs the extra height to clear the x label
      local extra = (where:match("below") or where:match("bmargin")) and " height 1" or ""
      add(("set key %s spacing 1.3%s box lt 1 lc rgb '#a0a0a0' opaque width 1"):format(where, extra))
    end
  end

  for k, s in ipairs(P.series) do
    if not s.skip then
      local t = s.label and ("title " .. txt(s.label))
        or (single_unlabelled and "notitle" or ("title " .. gq("series " .. k) .. " noenhanced"))
      entries[#entries + 1] = ("datafile using 1:%d %s %s"):format(k + 1,
        style_clause(s.style or P.style, dumb), t)
    end
  end
  for j, sl in ipairs(P.slopes) do
    local col = 1 + #P.series + j
    -- slope labels are meant as formulas: gnuplot enhanced text (h^2 -> h squared)
    entries[#entries + 1] = ("datafile using 1:%d with lines %s title %s"):format(col,
      dumb and "" or SLOPE_STYLES[(j - 1) % #SLOPE_STYLES + 1], gq(sl.label))
  end
  add("plot " .. table.concat(entries, ", \\\n     "))
end

-- mode: "png" | "svg" | "dumb". inline: the data text, put into the script as a datablock
-- (then datname is not used): the script is self-contained and can go to gnuplot's stdin.
local function script_text(P, mode, datname, imgname, inline)
  local dumb = mode == "dumb"
  local L = {}
  local function add(s) L[#L + 1] = s end
  local function txt(s) return gq(s) .. (P.enhanced and "" or " noenhanced") end
  script_head(P, mode, datname, imgname, inline, add, txt)
  script_axes(P, dumb, add)
  add("set datafile commentschars '#'")
  script_plot(P, dumb, add, txt)
  if not dumb then add("unset output") end
  return table.concat(L, "\n") .. "\n"
end

-- run gnuplot (no shell) with args and input on stdin; returns ok, stdout text, stderr text
-- (with "(gnuplot exit N)" or "(gnuplot signal N)" appended on failure)
local function run_gnuplot(exe, args, input)
  local argv = { exe }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  local okc, status, code, out, err = pcall(core.spawn, argv, input, M.timeout)
  if not okc then
    if tostring(status):find("interrupted!", 1, true) then error(status, 0) end
    return false, "", tostring(status)
  end
  local ok = status == "exited" and code == 0
  if not ok then
    err = ("%s(gnuplot %s %s)"):format(err ~= "" and (err .. "\n") or "",
      status == "exited" and "exit" or status == "timeout" and "stopped after" or "signal",
      status == "timeout" and (tostring(code) .. " s") or tostring(code))
  end
  return ok, out, err
end

-- one-line summary of an info table (what the REPL prints instead of the whole drawing)
local info_mt = { __name = "lf.plot.info" }
info_mt.__tostring = function(i)
  if i.text then
    local lines = select(2, i.text:gsub("\n", "")) or 0
    return ("lf.plot: drawn in the terminal (%d lines; info.text)"):format(lines)
  end
  if i.rendered then return ("lf.plot: %s (data %s, script %s)"):format(i.image, i.data, i.script) end
  return ("lf.plot: not rendered; data %s, script %s"):format(tostring(i.data), tostring(i.script))
end

local function how_to_render(exe, why, script)
  return ("%s. The data and the gnuplot script were written; to render the figure install gnuplot " ..
    "(e.g. apt-get install gnuplot-nox) and run:\n    gnuplot %s"):format(why, shq(file_arg(script)))
end

--- M.plot(spec) -> image path (nil in dumb mode or without gnuplot), info
function M.plot(spec)
  local okp, P = pcall(prepare, spec)
  if not okp then error(P, 2) end

  local have, why = M.gnuplot_available(P.exe)
  local info = setmetatable({ rendered = false }, info_mt)

  if P.file then
    mkdir_p(dirname(P.file))
    local datpath, gppath = P.base .. ".dat", P.base .. ".gp"
    write_file(datpath, data_text(P), "data file")
    write_file(gppath, script_text(P, P.ext, basename(datpath), basename(P.file)), "gnuplot script")
    info.image, info.data, info.script = P.file, datpath, gppath
    if not have then
      info.message = how_to_render(P.exe, why, gppath)
      M.warn(info.message)
      return nil, info
    end
    -- gnuplot writes a temporary image beside the final one; renamed only when complete
    local tmpname = (".lfplot-%d-%d.tmp"):format(math.random(1 << 30), os.time()) -- no quotes: safe in gnuplot
    local tmppath = dirname(P.file) .. "/" .. tmpname
    local okr, ok, _, err = pcall(run_gnuplot, P.exe, { "-e", ("lf_tmp = '%s'"):format(tmpname), file_arg(gppath) })
    if not okr then os.remove(tmppath); error(ok, 0) end
    if not ok then
      os.remove(tmppath)
      error(("lf.plot: gnuplot failed on %s:\n%s"):format(gppath, err), 2)
    end
    local size = file_size(tmppath)
    if not size or size == 0 then
      os.remove(tmppath)
      error(("lf.plot: gnuplot ran but produced no image for %s%s"):format(P.file,
        err:match("%S") and (":\n" .. err) or " (no message from gnuplot)"), 2)
    end
    local okm, merr = os.rename(tmppath, P.file)
    if not okm then
      os.remove(tmppath)
      error(("lf.plot: cannot rename the image to %s: %s"):format(P.file, tostring(merr)), 2)
    end
    if err:match("%S") then M.warn("gnuplot: " .. err:gsub("%s+$", "")) end
    info.rendered = true
    return P.file, info
  end

  if not have then
    -- no gnuplot: leave the data and a script beside it (in a fresh temporary name) to render later
    local tmp = os.tmpname()
    local datpath, gppath = tmp .. ".dat", tmp .. ".gp"
    local okw, werr = pcall(function()
      write_file(datpath, data_text(P), "data file")
      write_file(gppath, script_text(P, "dumb", basename(datpath)), "gnuplot script")
    end)
    os.remove(tmp)
    if not okw then os.remove(datpath); error(werr, 2) end
    info.data, info.script = datpath, gppath
    info.message = how_to_render(P.exe, why, gppath)
    M.warn(info.message)
    return nil, info
  end
  -- terminal drawing (REPL): script and data on gnuplot's stdin, no files
  local ok, out, err = run_gnuplot(P.exe, {}, script_text(P, "dumb", nil, nil, data_text(P)))
  if not ok then error(("lf.plot: gnuplot failed:\n%s"):format(err), 2) end
  if err:match("%S") then M.warn("gnuplot: " .. err:gsub("%s+$", "")) end
  io.write(out)
  io.flush()
  info.text, info.rendered = out, true
  return nil, info
end

--- traj:plot{y={"energy_error", ...}, x="t", file=, title=, ...}: columns against t with lf.plot
--- (other fields go to lf.plot unchanged). Returns what lf.plot returns. A method of every
--- trajectory, added here, by the view, to the class of scripts/lieflow/run/trajectory.lua.
function trajectory.methods:plot(opts)
  trajectory.check(self, "traj:plot")
  trajectory.check_in_memory(self, "traj:plot")
  opts = opts or {}
  if type(opts) ~= "table" or getmetatable(opts) ~= nil then
    error(("traj:plot: options table expected, got %s"):format(getmetatable(opts) ~= nil and "a table with a metatable" or type(opts)), 2)
  end
  local ys = opts.y or {"energy_error"}
  if type(ys) == "string" then ys = {ys} end
  local series = {}
  for i, y in ipairs(ys) do
    if type(y) == "string" then
      if not self[y] or type(self[y]) ~= "table" then
        error(("traj:plot: unknown column '%s' (columns: %s)"):format(y, table.concat(self.columns, ", ")), 2)
      end
      series[i] = {label = y, data = self[y]}
    else
      series[i] = y
    end
  end
  local xname = opts.x or "t"
  if type(xname) == "string" and type(self[xname]) ~= "table" then
    error(("traj:plot: unknown column '%s'"):format(xname), 2)
  end
  local p = {}
  for k, v in pairs(opts) do p[k] = v end
  p.x = type(xname) == "string" and self[xname] or xname
  p.y = series
  p.xlabel = p.xlabel or (type(xname) == "string" and xname or nil)
  if p.title == nil and self.method ~= nil and type(self.h) == "number" then
    p.title = ("%s, h = %g"):format(tostring(self.method), self.h)
  end
  return M.plot(p)
end

return M
