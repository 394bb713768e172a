-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow code-cache fuzzer (issue 22): lf.compile against a cache directory that another user, a
-- crash or a race has left in a hostile state (core/graph/jit.c is the security boundary).
--
-- Each case applies one to three random actions to the cache directory $XDG_CACHE_HOME/lieflow:
--   the directory made group/world-writable, given to another owner (nobody), replaced by a
--   symbolic link to another directory; one of its objects truncated, its bytes flipped, emptied,
--   swapped with another object, replaced by a symbolic link (to another object or to a file outside
--   the cache), by a FIFO or by a directory, made world-writable or given to nobody; stray
--   temporary files; or a repair (what a user would do: chmod 700, the foreign entries removed).
-- Some cases also start a racer: a shell loop that swaps objects and links in and out of the
-- directory while lf.compile checks and loads (a file appearing between check and load).
-- Then one of a pool of small functions is compiled (backend "auto", or "native" every 3rd case)
-- and evaluated. Findings:
--   * a value that differs from the plain Lua function by more than 1e-12 (relative): the code of
--     another key was loaded;
--   * "auto" raising, or "native" raising an error that does not name the cache directory or the
--     compiler, or one with a position in lieflow's own .lua files;
--   * after a repair and no racer, a cache that still refuses native code (stuck);
--   * a file outside the cache (the targets of the links) changed, or an entry of another owner
--     removed (refused entries are left in place);
-- and, for the harness (tests/fuzz/run.sh), a crash or a hang of the process.
--
-- Usage: XDG_CACHE_HOME=$PWD/cache lieflow tests/fuzz/cache_fuzz.lua [--seed N] [--cases N] [--seconds S] [--verbose]
--   --verbose: each case on stderr before it runs
--   Refuses to run unless XDG_CACHE_HOME is inside the working directory (it damages that cache on
--   purpose). Needs root for the actions that change an owner (skipped otherwise) and a C compiler
--   (without one it says so and exits 0). Exit 0: no finding; 1: findings.
local lf = rawget(_G, "lf") or require "lieflow"

local opt = {seed = 1, cases = math.huge, seconds = 10}
do
  local i = 1
  while arg and arg[i] do
    local a = arg[i]
    if a == "--seed" then opt.seed = assert(tonumber(arg[i + 1]), "--seed N"); i = i + 1
    elseif a == "--cases" then opt.cases = assert(tonumber(arg[i + 1]), "--cases N"); i = i + 1
    elseif a == "--seconds" then opt.seconds = assert(tonumber(arg[i + 1]), "--seconds S"); i = i + 1
    elseif a == "--verbose" then opt.verbose = true
    else error("cache_fuzz.lua: unknown argument " .. a) end
    i = i + 1
  end
end
math.randomseed(opt.seed)
local rnd = math.random
local clock = lf.core.wall_time

local function sh(cmd) return os.execute("{ " .. cmd .. "; } 2>/dev/null") == true end
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
-- the first line a shell command prints (its pipe closed)
local function first_line(cmd)
  local p = io.popen(cmd)
  local l = p:read("l")
  p:close()
  return l
end
local function slurp(p)
  local f = io.open(p, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local cwd = os.getenv("PWD") or ""
local xdg = os.getenv("XDG_CACHE_HOME") or ""
if cwd == "" or xdg:sub(1, #cwd + 1) ~= cwd .. "/" then
  io.stderr:write("cache_fuzz: XDG_CACHE_HOME must be a directory inside the working directory (it is damaged on purpose)\n")
  os.exit(2)
end
local DIR = xdg .. "/lieflow"
local is_root = sh("[ \"$(id -u)\" = 0 ] && id nobody >/dev/null 2>&1")

-- the pool: functions of different sources, hence different cache keys
local pool = {
  {function(x) return x * x + 1 end, {"number"}, {3}},
  {function(x) return math.sin(x) * math.exp(-x) end, {"number"}, {0.7}},
  {function(v) return v:dot(v) + v[1] * v[2] end, {"vec3"}, {lf.vec3{1, 2, 3}}},
  {function(x, y) return math.atan(x, y) + math.sqrt(1 + x * y * y) end, {"number", "number"}, {0.3, -2}},
  {function(R) return (R * lf.vec3{0, 0, 1}):dot(lf.vec3{0.2, 0.1, 1}) end, {"mat3"}, {lf.so3.exp{0.1, 0.2, 0.3}}},
  {function(x) return math.log(2 + x * x) / (1 + x ^ 4) end, {"number"}, {-1.5}},
}
local probe_ok, probe = pcall(lf.compile, pool[1][1], {args = pool[1][2], backend = "native"})
if not probe_ok then
  io.stderr:write("cache_fuzz: no native code here (", tostring(probe), "): nothing to fuzz\n")
  os.exit(0)
end
-- a second private directory (the target of a replaced cache directory) and files outside the
-- cache that links point to: none of them may change
sh("mkdir -p other && chmod 700 other")
local victim = "victim.txt"
do local f = assert(io.open(victim, "w")); f:write("not an object\n"); f:close() end
local victim_so = "victim.so"
do
  local any = first_line("ls " .. q(DIR) .. "/*.so 2>/dev/null | head -1") -- the probe's object
  if any then sh("cp " .. q(any) .. " " .. q(victim_so)) end
end
local victims = {[victim] = slurp(victim), [victim_so] = slurp(victim_so)}

-- the regular files *.so of the cache (not links, FIFOs or directories: the actions write into them)
local function objects()
  local t = {}
  local p = io.popen("find " .. q(DIR .. "/") .. " -maxdepth 1 -type f -name '*.so' 2>/dev/null")
  for n in p:lines() do t[#t + 1] = n end
  p:close()
  return t
end
local function some_object()
  local t = objects()
  return #t > 0 and t[rnd(#t)] or nil
end

-- Damage to an object's bytes is written to a new file renamed over it: truncating in place the
-- object a compiled function of this process has mapped makes its pages vanish (SIGBUS, as for any
-- shared library truncated under a running program); lieflow itself only publishes by rename(2).
local function replace(path, bytes)
  local f = io.open(DIR .. "/.damaged", "wb")
  if not f then return false end
  f:write(bytes)
  f:close()
  return os.rename(DIR .. "/.damaged", path) ~= nil
end

local foreign = {} -- entries given to nobody: must stay (refused, left in place)
local actions = {
  {"dir writable", function() return sh("chmod " .. ({"777", "770", "707", "722"})[rnd(4)] .. " " .. q(DIR)) end},
  {"dir owner", function() return is_root and sh("chown nobody " .. q(DIR)) end},
  {"dir symlink", function()
    return sh(("rm -rf %s.old; mv %s %s.old 2>/dev/null; ln -sfn %s %s"):format(q(DIR), q(DIR), q(DIR), q(cwd .. "/other"), q(DIR)))
  end},
  {"truncate", function()
    local o = some_object()
    local s = o and slurp(o)
    return s and replace(o, s:sub(1, rnd(0, #s)))
  end},
  {"flip bytes", function()
    local o = some_object()
    if not o then return false end
    local s = slurp(o)
    if not s or #s == 0 then return false end
    for _ = 1, rnd(8) do
      local i = rnd(#s)
      s = s:sub(1, i - 1) .. string.char(rnd(0, 255)) .. s:sub(i + 1)
    end
    return replace(o, s)
  end},
  {"swap", function()
    local t = objects()
    if #t < 2 then return false end
    local a, b = t[rnd(#t)], t[rnd(#t)]
    return sh(("mv %s tmp.swap && mv %s %s && mv tmp.swap %s"):format(q(a), q(b), q(a), q(b)))
  end},
  {"symlink to an object", function()
    local t = objects()
    if #t < 1 then return false end
    local a = t[rnd(#t)]
    return sh(("ln -sf %s %s"):format(q(rnd(2) == 1 and cwd .. "/" .. victim_so or t[rnd(#t)]), q(a)))
  end},
  {"symlink outside", function()
    local a = some_object()
    return a and sh(("ln -sf %s %s"):format(q(cwd .. "/" .. victim), q(a)))
  end},
  {"fifo", function()
    local a = some_object()
    return a and sh(("rm -f %s && mkfifo %s"):format(q(a), q(a)))
  end},
  {"directory", function()
    local a = some_object()
    return a and sh(("rm -f %s && mkdir %s"):format(q(a), q(a)))
  end},
  {"file writable", function()
    local a = some_object()
    return a and sh(("chmod %s %s"):format(({"666", "664", "646"})[rnd(3)], q(a)))
  end},
  {"file owner", function()
    local a = some_object()
    if not (is_root and a) then return false end
    foreign[a] = true
    return sh("chown -h nobody " .. q(a))
  end},
  {"stray temporaries", function()
    -- (only where nothing is: an earlier action may have made one of these names a FIFO)
    local n = ("%s/tmp.%d.so %s/.lf-partial %s/%s.so.tmp"):format(q(DIR), rnd(99), q(DIR), q(DIR), string.rep("a", 64))
    return sh("for f in " .. n .. "; do [ -e \"$f\" ] || : > \"$f\"; done")
  end},
  {"emptied", function()
    local a = some_object()
    return a and replace(a, "")
  end},
}
local REPAIR = #actions + 1
actions[REPAIR] = {"repair", function()
  -- what the user does after reading the refusal: a private directory, the foreign entries gone
  foreign = {}
  return sh(("[ -L %s ] && rm -f %s; mkdir -p %s && chown -R %s %s 2>/dev/null; chmod 700 %s; " ..
             "find %s -mindepth 1 \\( -type l -o -type p -o -type d -o -perm /022 \\) -exec rm -rf {} + 2>/dev/null; true")
    :format(q(DIR), q(DIR), q(DIR), "$(id -u)", q(DIR), q(DIR), q(DIR)))
end}

-- the racer: swaps objects and links in and out of the directory until stopped. Not the compiler's
-- temporary output (lf-tmp-*.so): the compiler (ld) writes through a link put in its place, and only
-- the cache's owner can put one there (the directory is private), who can write its target anyway.
local RACER = [[
d=$1; v=$2
while :; do
  for f in "$d"/*.so; do
    case ${f##*/} in lf-tmp-*) continue;; esac
    [ -f "$f" ] || continue
    cp "$v" "$d/.race" 2>/dev/null && mv -f "$d/.race" "$f" 2>/dev/null
    ln -sf "$v" "$d/.race" 2>/dev/null && mv -f "$d/.race" "$f" 2>/dev/null
    rm -f "$f" 2>/dev/null
  done
done
]]
do local f = assert(io.open("racer.sh", "w")); f:write(RACER); f:close() end
local function racer_start()
  return first_line(("sh racer.sh %s %s >/dev/null 2>&1 & echo $!"):format(q(DIR), q(cwd .. "/" .. victim_so)))
end
local function racer_stop(pid) sh("kill " .. pid .. " 2>/dev/null; wait " .. pid .. " 2>/dev/null; true") end

local findings, nfind = {}, 0
local function finding(what, case)
  nfind = nfind + 1
  local k = what:gsub("%d+", "N"):sub(1, 120)
  if not findings[k] then
    findings[k] = {what = what, first = case, count = 0}
    io.stderr:write(("cache_fuzz: FINDING %s\n  case %s\n"):format(what, case))
  end
  findings[k].count = findings[k].count + 1
end

local stats = {native = 0, tape = 0, refused = 0, raced = 0, actions = 0}
local t_end = clock() + opt.seconds
local cases = 0
while cases < opt.cases and clock() < t_end do
  cases = cases + 1
  local names, last = {}, nil
  for _ = 1, rnd(3) do
    local a = rnd(10) == 1 and REPAIR or rnd(#actions)
    if actions[a][2]() then names[#names + 1] = actions[a][1]; stats.actions = stats.actions + 1 end
    last = a
  end
  local clean = last == REPAIR and names[#names] == "repair"
  local raced = not clean and rnd(5) == 1
  local case = ("%d of seed %d: %s%s"):format(cases, opt.seed, table.concat(names, "; "), raced and "; racer" or "")
  if opt.verbose then io.stderr:write("cache_fuzz: case ", case, "\n") end
  local function owner(p) return first_line("stat -c %U " .. q(p) .. " 2>/dev/null") end
  local owned = {} -- the entries of nobody that the actions left: lf.compile must leave them
  if not raced then -- (the racer replaces entries whoever owns them)
    for p in pairs(foreign) do if owner(p) == "nobody" then owned[p] = true end end
  end
  local pid = raced and racer_start()
  if raced then stats.raced = stats.raced + 1 end
  local fn = pool[rnd(#pool)]
  local backend = cases % 3 == 0 and "native" or "auto"
  local ok, f = pcall(lf.compile, fn[1], {args = fn[2], backend = backend})
  if pid then racer_stop(pid) end
  if ok then
    stats[f.backend] = (stats[f.backend] or 0) + 1
    local okv, v = pcall(f, table.unpack(fn[3]))
    local want = fn[1](table.unpack(fn[3]))
    if not okv then
      finding("the compiled function raised: " .. tostring(v):sub(1, 200), case)
    elseif math.abs(v - want) > 1e-12 * math.max(1, math.abs(want)) then
      finding(("a wrong value from the %s backend: %.17g, the plain function %.17g (another key's code?)")
        :format(f.backend, v, want), case)
    end
    if clean and f.backend ~= "native" then
      finding("a repaired cache still refuses native code: " .. tostring(f.report):sub(1, 200), case)
    end
  else
    local msg = tostring(f)
    stats.refused = stats.refused + 1
    if backend == "auto" then
      finding("backend auto raised instead of falling back to the tape: " .. msg:sub(1, 200), case)
    elseif not msg:find("^lf%.compile: no native code: ") or not (msg:find(DIR, 1, true) or msg:find("compiler", 1, true)) then
      finding("a refusal that does not name the cache: " .. msg:sub(1, 200), case)
    elseif msg:find("%.lua:%d+:") then
      finding("a refusal with a Lua position: " .. msg:sub(1, 200), case)
    end
  end
  for p, content in pairs(victims) do
    if slurp(p) ~= content then finding("a file outside the cache changed: " .. p, case); victims[p] = slurp(p) end
  end
  for p in pairs(owned) do
    if owner(p) ~= "nobody" then finding("an entry of another owner was removed or taken: " .. p, case) end
  end
end
actions[REPAIR][2]()

local parts = {}
for _, k in ipairs{"native", "tape", "refused", "raced", "actions"} do parts[#parts + 1] = ("%s %d"):format(k, stats[k]) end
io.stderr:write(("cache_fuzz: seed %d, %d cases (%s), %d findings\n"):format(opt.seed, cases, table.concat(parts, ", "), nfind))
for _, fd in pairs(findings) do
  io.stderr:write(("  %dx %s\n    first at case %s\n"):format(fd.count, fd.what, fd.first))
end
os.exit(nfind == 0 and 0 or 1)
