-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — the view of a motion as one self-contained web page: traj:animate(path [, opts]) and
-- lf.animate{traj1, traj2, ..., path = "x.html" [, opts]} (several trajectories side by side, in sync).
--
-- The page works offline, opened from a file: three.js and its OrbitControls are inlined from
-- Debian's libjs-three (/usr/share/javascript/three; LIEFLOW_THREE or opts.three name another
-- three.min.js, OrbitControls.js is looked for beside it under examples/js/controls/), the data is
-- JSON in the page, the viewer is scripts/lieflow/view/viewer_js.lua. Each trajectory is a panel:
-- the 3-D view (scripts/lieflow/run/scene.lua: boxes for rigid bodies, rods, needles or arrows for
-- unit vectors) and below it a plot of one column (energy_error by default) with a cursor at the
-- time shown; one time slider, play/pause and speed for all panels (a panel shows its last frame at
-- or before the common time); orbit (drag) and zoom (wheel) per panel.
--
-- Options: frames (budget per panel, default 2000: lieflow.view.frames), t0, t1 (the window shown;
-- the plot always covers the whole run), column (the plotted column), plot_points (default 1000),
-- titles = {...} (per panel; default "<method>, h = <h>"), title (the page's), trace = {x, y, z}
-- (a body-fixed point of every box, or true: the tip of every rod, drawn as a line up to the time
-- shown), duration (seconds that 1x takes to play the window, default 20), autoplay (default true),
-- scene (a scene description replacing traj.scene), three (path of three.min.js).
--
-- Size: three.js r111 and OrbitControls (880 KB), the viewer (~12 KB), then per panel 16 bytes
-- per frame (time and sample index as doubles) and per object and frame 16 bytes (a float32
-- quaternion) plus 12 for an object that moves (the double pendulum's second link), base64 (x 4/3),
-- and the plot (3 numbers per bucket as text). M.size_bound(...) is that bound; a 10^6-sample run
-- of one rigid body gives a page of about 0.93 MB.
local core = require "lieflow.core"
local options = require "lieflow.options"
local json = require "lieflow.files.json"
local trajectory = require "lieflow.run.trajectory"
local frames = require "lieflow.view.frames"
local viewer = require "lieflow.view.viewer_js"

local M = {}
M.THREE_DIR = "/usr/share/javascript/three"
M.DURATION = 20

local KEYS = {"path", "frames", "t0", "t1", "column", "plot_points", "titles", "title", "trace", "duration", "autoplay",
              "scene", "three"}

-- ------------------------------------------------------------------ encoding
local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local ENC = {}
for i = 0, 63 do ENC[i] = B64:sub(i + 1, i + 1) end

--- M.base64(s) -> the base64 text of the bytes of s.
function M.base64(s)
  local out, n = {}, #s
  for i = 1, n - 2, 3 do
    local a, b, c = s:byte(i, i + 2)
    local v = a << 16 | b << 8 | c
    out[#out + 1] = ENC[v >> 18] .. ENC[v >> 12 & 63] .. ENC[v >> 6 & 63] .. ENC[v & 63]
  end
  local r = n % 3
  if r == 1 then
    local v = s:byte(n) << 16
    out[#out + 1] = ENC[v >> 18] .. ENC[v >> 12 & 63] .. "=="
  elseif r == 2 then
    local a, b = s:byte(n - 1, n)
    local v = a << 16 | b << 8
    out[#out + 1] = ENC[v >> 18] .. ENC[v >> 12 & 63] .. ENC[v >> 6 & 63] .. "="
  end
  return table.concat(out)
end

-- numbers as little-endian float32 ("f") or float64 ("d"), base64
local function pack(nums, kind)
  local parts, fmt = {}, "<" .. kind:rep(256)
  for i = 1, #nums, 256 do
    local m = math.min(256, #nums - i + 1)
    parts[#parts + 1] = (m == 256 and fmt or "<" .. kind:rep(m)):pack(table.unpack(nums, i, i + m - 1))
  end
  return M.base64(table.concat(parts))
end
M.pack = pack

-- ------------------------------------------------------------------ options and assets
local function read_file(path, what)
  local f, err = io.open(path, "rb")
  if not f then
    error(("%s not found (%s): install Debian's libjs-three (apt-get install libjs-three) or set LIEFLOW_THREE to a three.min.js")
      :format(what, tostring(err)), 0)
  end
  local s = f:read("a")
  f:close()
  return s
end

--- M.assets(three) -> three.min.js text, OrbitControls.js text (read once per call).
function M.assets(three)
  local path = three or os.getenv("LIEFLOW_THREE") or (M.THREE_DIR .. "/three.min.js")
  local dir = path:match("^(.*)/[^/]*$") or "."
  local js = read_file(path, "three.js")
  local ok, orbit = pcall(read_file, dir .. "/examples/js/controls/OrbitControls.js", "OrbitControls.js")
  return js, ok and orbit or "/* OrbitControls.js not found: no orbit or zoom */"
end

local function check_opts(o, fn)
  options.check_keys(o, KEYS, fn, 0)
  local function num(k, pos)
    local v = o[k]
    if v ~= nil and (type(v) ~= "number" or v ~= v or (pos and v <= 0)) then
      error(("%s: option '%s' must be a %snumber, got %s"):format(fn, k, pos and "positive " or "", tostring(v)), 0)
    end
  end
  num("t0"); num("t1"); num("duration", true)
  for _, k in ipairs{"frames", "plot_points"} do
    local v = o[k]
    if v ~= nil and (math.type(v) ~= "integer" or v < 2) then
      error(("%s: option '%s' must be an integer >= 2, got %s"):format(fn, k, tostring(v)), 0)
    end
  end
  if o.trace ~= nil and o.trace ~= true and o.trace ~= false and type(o.trace) ~= "table" and type(o.trace) ~= "userdata" then
    error(("%s: option 'trace' must be a body-fixed point {x, y, z} or true, got %s"):format(fn, type(o.trace)), 0)
  end
end

-- ------------------------------------------------------------------ one panel
local function check_traj(traj, fn, i)
  if not trajectory.is_trajectory(traj) then
    error(("%s: entry %d must be a trajectory (lf.run), got %s"):format(fn, i, type(traj)), 0)
  end
  if type(rawget(traj, "state_layout")) ~= "table" or type(rawget(traj, "scene")) ~= "table" then
    error(("%s: trajectory %d has no recorded states: run it with lf.run{..., states = true}"):format(fn, i), 0)
  end
  if rawget(traj, "file") and not rawget(traj, "t") then
    error(("%s: trajectory %d was streamed to %s: traj:load() reads it back first"):format(fn, i, traj.file), 0)
  end
end

-- the default plotted column: energy_error, else the first column after t
local function plot_column(traj, column)
  if column ~= nil then
    if type(rawget(traj, column)) ~= "table" then error(("unknown column '%s' (columns: %s)")
      :format(tostring(column), table.concat(traj.columns, ", ")), 0) end
    return column
  end
  if rawget(traj, "energy_error") then return "energy_error" end
  return traj.columns[2]
end

local function trace_point(obj, trace)
  if not trace then return nil end
  if obj.shape == "box" then
    if trace == true then return {0.5 * obj.dims[1], 0.5 * obj.dims[2], 0.5 * obj.dims[3]} end
    local p = type(trace) == "userdata" and trace:totable() or trace
    return {p[1], p[2], p[3]}
  end
  return trace == true and {0, 0, obj.shape == "needle" and obj.length / 2 or obj.length} or nil
end

-- the run's events (lf.run's option events) as {t =, name =}: marked on the plot below the view
local function events_of(traj)
  local ev = rawget(traj, "events")
  if type(ev) ~= "table" or #ev == 0 then return nil end
  local out = {}
  for i, e in ipairs(ev) do out[i] = {t = e.t, name = tostring(e.name)} end
  return out
end

--- M.panel(traj, opts, title) -> the data of one panel (plain tables, arrays packed as base64).
function M.panel(traj, opts, title)
  local sc = opts.scene or traj.scene
  local idx = frames.select(traj, opts)
  local fr = frames.compute(traj, sc, idx)
  local objs, extent = {}, sc.extent
  for o, obj in ipairs(sc.objects) do
    local d = {}
    for k, v in pairs(obj) do d[k] = v end
    d.q = pack(fr.q[o], "f")
    d.p = fr.p[o] and pack(fr.p[o], "f") or nil
    d.trace = trace_point(obj, opts.trace)
    objs[o] = d
    if obj.pos_field and not sc.box then -- a body that translates: the view takes in its whole path
      local p = fr.p[o]
      for i = 1, #p do extent = math.max(extent, math.abs(p[i]) + 1) end
    end
  end
  local col = plot_column(traj, opts.column)
  return {title = title, up = sc.up, extent = extent, t = pack(fr.t, "d"), k = pack(idx, "d"), objects = objs,
          plot = frames.envelope(traj, col, opts.plot_points), nframes = #idx, box = sc.box, center = sc.center,
          site_colors = sc.site_colors, events = events_of(traj)}
end

-- ------------------------------------------------------------------ the page
local function html_escape(s) return (tostring(s):gsub("[&<>\"]", {["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;"})) end
-- text inside <script>: no "</script" may end it early
local function script_safe(s) return (s:gsub("</([sS][cC][rR][iI][pP][tT])", "<\\/%1")) end

--- M.html(data, three, orbit) -> the page (data: {title =, duration =, autoplay =, panels = {...}}).
function M.html(data, three, orbit)
  local title = html_escape(data.title)
  local j = json.encode(data):gsub("<", "\\u003c")
  return table.concat{
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", title, "</title>\n",
    "<meta name=\"generator\" content=\"lieflow ", html_escape(core.version or ""), "\">\n<style>", viewer.css, "</style></head>\n",
    "<body data-status=\"loading\">\n<div id=\"lf-head\"><h1>", title, "</h1>",
    "<button id=\"lf-play\">play</button> speed <select id=\"lf-speed\">",
    "<option>0.25</option><option>0.5</option><option selected>1</option><option>2</option><option>4</option><option>10</option>",
    "</select><input id=\"lf-slider\" type=\"range\" min=\"0\" max=\"1000\" value=\"0\"><span id=\"lf-time\"></span></div>\n",
    "<div id=\"lf-error\" hidden></div>\n<div id=\"lf-panels\"></div>\n",
    "<script id=\"lf-data\" type=\"application/json\">", j, "</script>\n",
    "<script>", viewer.guard, "</script>\n",
    "<script>/*lf:three*/", script_safe(three), "\n/*lf:three-end*/</script>\n",
    "<script>", script_safe(orbit), "</script>\n",
    "<script>", viewer.viewer, "</script>\n</body></html>\n"}
end

local function write(path, text, fn)
  local ok, err = pcall(function()
    local f <close> = core.atomic_open(path, fn)
    f:write(text)
    f:commit()
  end)
  if not ok then error(err, 0) end
  return path
end

--- M.page(list, opts, fn) -> the page's text for the trajectories of list (checked).
function M.page(list, opts, fn)
  check_opts(opts, fn)
  if #list < 1 then error(("%s: give at least one trajectory"):format(fn), 0) end
  local panels = {}
  for i, traj in ipairs(list) do
    check_traj(traj, fn, i)
    local title = opts.titles and opts.titles[i] or ("%s, h = %g"):format(tostring(traj.method), traj.h or 0 / 0)
    local ok, p = pcall(M.panel, traj, opts, title)
    if not ok then error(("%s: trajectory %d: %s"):format(fn, i, tostring(p)), 0) end
    panels[i] = p
  end
  local three, orbit = M.assets(opts.three)
  local data = {title = opts.title or (#list == 1 and panels[1].title or "lieflow"), duration = opts.duration or M.DURATION,
                autoplay = opts.autoplay ~= false, panels = panels}
  return M.html(data, three, orbit)
end

--- lf.animate{traj1, traj2, ..., path = "x.html", <options>} -> path.
function M.animate(spec)
  local fn = "lf.animate"
  if type(spec) ~= "table" then error(("%s: a table {traj1, traj2, ..., path = \"x.html\"} expected, got %s"):format(fn, type(spec)), 2) end
  local path = spec.path
  if type(path) ~= "string" or path == "" or path:find("\0", 1, true) then
    error(("%s: option 'path' (the page's file name) must be a non-empty string"):format(fn), 2)
  end
  local list, opts = {}, {}
  for k, v in pairs(spec) do if math.type(k) == "integer" then list[k] = v else opts[k] = v end end
  local ok, text = pcall(M.page, list, opts, fn)
  if not ok then error(text, 2) end
  local okw, err = pcall(write, path, text, fn)
  if not okw then error(err, 2) end
  return path
end

--- traj:animate(path [, opts]) -> path.
function M.animate_one(traj, path, opts)
  if opts ~= nil and type(opts) ~= "table" then error(("traj:animate: options table expected, got %s"):format(type(opts)), 3) end
  local spec = {traj, path = path}
  for k, v in pairs(opts or {}) do
    if k == "path" or math.type(k) == "integer" then error("traj:animate: the path is argument #1, and one trajectory only", 3) end
    spec[k] = v
  end
  local ok, res = pcall(M.animate, spec)
  if not ok then error((tostring(res):gsub("^lf%.animate", "traj:animate")), 3) end
  return res
end

--- traj:animate(path [, opts]) -> path: a self-contained web page showing the motion, a method of
--- every trajectory (added here, by the view, to the class of scripts/lieflow/run/trajectory.lua).
function trajectory.methods:animate(path, opts)
  trajectory.check(self, "traj:animate")
  return M.animate_one(self, path, opts)
end

--- M.size_bound(nframes, nobjects, nmoving, plot_points) -> the largest page (bytes) for one panel,
--- beyond the three.js assets: the bound the tests hold a page to.
function M.size_bound(nframes, nobjects, nmoving, plot_points)
  local data = 16 * nframes + (16 * nobjects + 12 * nmoving) * nframes
  return math.ceil(data * 4 / 3) + 3 * 26 * (plot_points or frames.PLOT_POINTS) + 600 * nobjects + 40000
end

return M
