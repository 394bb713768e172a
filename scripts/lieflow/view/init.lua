-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — lf.view(traj | {traj1, traj2, ...} [, opts]) -> path: the page of lf.animate, written to a
-- private temporary file and opened in the user's browser when there is a display.
--
-- The page goes to <dir>/lieflow-view-<uid>/view-<n>.html, <dir> = $XDG_RUNTIME_DIR, else $TMPDIR,
-- else /tmp; that directory is made with mode 0700, or must already be a directory (not a link) of
-- this user with no permissions for others (core.private_dir): one that another user could have
-- planted is refused, with the reason. The page is written atomically (core.atomic_open).
-- With a display ($DISPLAY or $WAYLAND_DISPLAY) and opts.open ~= false, the browser is the first
-- entry of $BROWSER (a colon-separated list of commands) that is found and trusted (when $BROWSER is
-- set, nothing else), else xdg-open. It runs as
-- `setsid -f <browser> <page>` through core.spawn: no shell (argv only), its standard streams on
-- /dev/null, in a session of its own, so lf.view returns at once. Every executable used (setsid and
-- the browser) must be trusted: an absolute path, or found on an absolute entry of $PATH, whose real
-- file and every directory above it belong to root or to you and are not writable by group or
-- others; else an error names the file and why. Without a display, or with open = false, the path
-- is printed ("lf.view: the page is file:///..."). The other options are lf.animate's.
--
-- This is the view layer (scripts/lieflow/view/): loading it (`require "lieflow"` does) loads the
-- modules that add the trajectory methods that need the view: traj:animate (view/animate.lua),
-- traj:write_gltf (view/gltf.lua), traj:plot (view/plot.lua).
local core = require "lieflow.core"
local options = require "lieflow.options"
local trajectory = require "lieflow.run.trajectory"
local animate = require "lieflow.view.animate"
require "lieflow.view.gltf" -- (traj:write_gltf)
require "lieflow.view.plot" -- (traj:plot)

local M = {}
local counter = 0

-- why the file at path (and the directories above it) may not be trusted, or nil
local function distrust(path)
  local info, err = core.file_info(path)
  if not info then return ("'%s': %s"):format(path, err) end
  local real = info.real
  if not real then return ("'%s' is a dangling link"):format(path) end
  local uid = core.uid()
  local p = real
  while p do
    if p == "" then p = "/" end
    local i = core.file_info(p)
    if not i then return ("'%s' cannot be examined"):format(p) end
    if i.uid ~= 0 and i.uid ~= uid then
      return ("'%s' belongs to user %d (neither root nor you): another user could have planted it"):format(p, i.uid)
    end
    if i.mode & 0x12 ~= 0 then -- (octal 022)
      return ("'%s' is writable by %s (mode %04o): another user could have replaced it"):format(p,
        i.mode & 0x2 ~= 0 and "others" or "its group", i.mode)
    end
    p = p ~= "/" and p:match("^(.*)/[^/]*$") or nil
  end
  return nil
end
M.distrust = distrust

--- M.find(cmd) -> the trusted path of an executable, or nil, reason.
function M.find(cmd)
  if cmd:find("/", 1, true) then
    if cmd:sub(1, 1) ~= "/" then return nil, ("'%s' is a relative path: refused"):format(cmd) end
    local why = distrust(cmd)
    if why then return nil, why end
    return cmd
  end
  local first_why
  for dir in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    if dir:sub(1, 1) == "/" then
      local p = dir .. "/" .. cmd
      local info = core.file_info(p)
      if info and (info.kind == "file" or info.kind == "link") and info.mode & 0x49 ~= 0 then
        local why = distrust(p)
        if not why then return p end
        first_why = first_why or why
      end
    end
  end
  return nil, first_why or ("'%s' not found on PATH"):format(cmd)
end

-- the browser command: the first usable entry of $BROWSER (when set, nothing else), else xdg-open
local function browser()
  local list, reasons = os.getenv("BROWSER"), {}
  if list and list ~= "" then
    for cmd in list:gmatch("[^:]+") do
      if cmd:find("%s") then reasons[#reasons + 1] = ("'%s' has arguments (no shell runs it)"):format(cmd)
      else
        local p, why = M.find(cmd)
        if p then return p end
        reasons[#reasons + 1] = why
      end
    end
    return nil, "$BROWSER: " .. table.concat(reasons, "; ")
  end
  return M.find("xdg-open")
end

--- M.dir() -> the private directory of the pages.
function M.dir()
  local base = os.getenv("XDG_RUNTIME_DIR")
  if not base or base == "" or base:sub(1, 1) ~= "/" then base = os.getenv("TMPDIR") end
  if not base or base == "" or base:sub(1, 1) ~= "/" then base = "/tmp" end
  return core.private_dir(("%s/lieflow-view-%d"):format(base, core.uid()))
end

--- lf.view(traj | {traj, ...} [, opts]) -> path (see the header).
function M.view(what, opts)
  local fn = "lf.view"
  if opts ~= nil and type(opts) ~= "table" then error(("%s: options table expected, got %s"):format(fn, type(opts)), 2) end
  local spec, open = {}, true
  if trajectory.is_trajectory(what) then spec[1] = what
  elseif type(what) == "table" then -- read raw: a table whose __index never returns nil must not loop forever
    for i = 1, rawlen(what) do spec[i] = rawget(what, i) end
  else error(("%s: a trajectory or an array of trajectories expected, got %s"):format(fn, type(what)), 2) end
  for k, v in pairs(opts or {}) do
    if k == "open" then open = v ~= false
    elseif math.type(k) ~= "integer" and k ~= "path" then spec[k] = v end
  end
  local okd, dir = pcall(M.dir)
  if not okd then error(("%s: %s"):format(fn, options.strip_position(dir)), 2) end
  counter = counter + 1
  spec.path = ("%s/view-%d-%d-%d.html"):format(dir, os.time(), math.random(1 << 30), counter)
  local ok, err = pcall(animate.animate, spec)
  if not ok then error((options.strip_position(err):gsub("^lf%.animate", fn)), 2) end
  local display = (os.getenv("DISPLAY") or "") ~= "" or (os.getenv("WAYLAND_DISPLAY") or "") ~= ""
  if not (open and display) then
    print(("lf.view: the page is file://%s%s"):format(spec.path, display and "" or " (no display: open it in a browser)"))
    return spec.path
  end
  local b, why = browser()
  if not b then error(("%s: the page is %s, but no browser can be started: %s"):format(fn, spec.path, why), 2) end
  local setsid, why2 = M.find("setsid")
  if not setsid then error(("%s: the page is %s, but setsid cannot be used: %s"):format(fn, spec.path, why2), 2) end
  local okr, status, code = pcall(core.spawn, {setsid, "-f", b, spec.path}, nil, 10, "null")
  if not okr or status ~= "exited" or code ~= 0 then
    error(("%s: the page is %s, but starting %s failed (%s %s)"):format(fn, spec.path, b, tostring(status), tostring(code)), 2)
  end
  return spec.path
end

return M
