-- SPDX-License-Identifier: GPL-3.0-or-later
-- Regressions of issue 13 (reliability) in the values, maps, analysis helpers, files and plots:
-- every reproduction of the issue that belongs to lua/shared/value.c, lib/maps.c, lib/analysis.c, core/lie,
-- core/base, core/analysis and scripts/lieflow/{files/json,view/plot,run/analysis,run/init}.lua. Each test states what
-- happened before the fix. Cases that used to abort the process run in a child process, so that
-- this spec reports them as failures instead of dying.
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has, shq, read = T.errmsg, T.has, T.shq, T.read

local EXE = os.getenv("LIEFLOW_EXE") or "build/lieflow"
local EXE_ABS = EXE:sub(1, 1) == "/" and EXE or (os.getenv("PWD") .. "/" .. EXE)
local have_exe = io.open(EXE, "rb") ~= nil
local it_exe = have_exe and it or pending
local have_gp = lf.gnuplot_available()
local it_gp = (have_exe and have_gp) and it or pending

-- run a shell command; returns exit code (or 128 + signal), stdout, stderr
local function sh(cmd)
  local out, err = os.tmpname(), os.tmpname()
  local ok, how, code = os.execute(cmd .. " >" .. out .. " 2>" .. err)
  local o, e = read(out) or "", read(err) or ""
  os.remove(out); os.remove(err)
  if how == "signal" then code = 128 + code end
  return ok and 0 or code, o, e
end

-- run Lua code in a fresh lieflow process
local function child(code, env) return sh((env or "") .. " " .. EXE .. " -e " .. shq(code)) end

local function files_in(dir)
  local _, out = sh("ls -A " .. shq(dir))
  local t = {}
  for l in out:gmatch("[^\n]+") do t[#t + 1] = l end
  table.sort(t)
  return t
end

local function is_rotation(R) return lf.so3.is_rotation(R, 1e-12) end

describe("item 1: lengths and elements are read raw (no __len/__index runs, no lie)", function()
  local liar = function(n) return setmetatable({1, 2, 3}, {__len = function() return n end}) end
  it("fit_linear with a __len of 2^61 + 1 (before: heap buffer overflow)", function()
    has(errmsg(lf.fit_linear, liar((1 << 61) + 1), {1, 2}), "xs and ys differ in length (3 and 2)")
    local s = lf.fit_linear(liar(-5), {1, 2, 4})
    assert.are.equal(1.5, s)
  end)
  it("drift with lying arrays (before: heap overflow through fit_linear)", function()
    local t = setmetatable({}, {__len = function() return (1 << 61) + 1 end})
    local e = setmetatable({}, {__len = function() return (1 << 61) + 1 end})
    for i = 1, 300 do rawset(t, i, i); rawset(e, i, 1e-3 * math.sin(i)) end
    local d = lf.drift{t = t, energy_error = e}
    assert.are.equal(300, d.samples)
    assert.are.equal("bounded", d.verdict)
  end)
  it("vec3 arithmetic does not run an operand's __len (before: its error or yield escaped)", function()
    local calls = 0
    local m = setmetatable({1, 2, 3}, {__len = function() calls = calls + 1; error("len boom") end})
    local msg = errmsg(function() return lf.vec3{1, 2, 3} + m end)
    assert.is_nil(msg:find("len boom", 1, true))
    assert.are.equal(0, calls)
    local co = coroutine.wrap(function()
      return pcall(function()
        return lf.vec3{1, 2, 3} * setmetatable({1, 2, 3}, {__len = function() coroutine.yield(1) end})
      end)
    end)
    local ok, e = co()
    assert.is_false(ok)
    assert.is_nil(tostring(e):find("yield", 1, true))
  end)
  it("quat.* read the table itself (before: __len = 4 and __index made up a quaternion)", function()
    local fake = setmetatable({}, {__len = function() return 4 end, __index = function() return 1 end})
    has(errmsg(lf.quat.mul, fake, {1, 0, 0, 0}), "quaternion {w, x, y, z} expected, got a table of length 0")
    assert.are.same({1, 0, 0, 0}, lf.quat.mul(setmetatable({1, 0, 0, 0}, {__index = error}), {1, 0, 0, 0}))
  end)
end)

describe("item 2: GSL never aborts the process", function()
  it_exe("so3.project on input where GSL's SVD fails (before: exit 134, SIGABRT)", function()
    for _, m in ipairs{
      "{{0.125,3,2},{2,2,-2},{1e-15,1,1e104}}",
      "{0x0.000000000000ep-1022, 0x0.0000000000002p-1022, 0, 0x0.0000000000007p-1022, 0x0.0000000000004p-1022, 1, " ..
        "0x1.87f4907fc448ap-330, 0x1.8p+0, 0x0.000000001cp-1022}"} do
      local rc, out, err = child("local ok, R = pcall(lf.so3.project, " .. m .. ") print(ok, ok and lf.so3.orth_error(R))")
      assert.are.equal(0, rc, err)
      assert.is_truthy(out:match("^true\t%d"), out)
    end
  end)
  it("the graded matrix of the issue gets its nearest rotation (about z, by atan2(-1, 2.125))", function()
    local R = lf.so3.project{{0.125, 3, 2}, {2, 2, -2}, {1e-15, 1, 1e104}}
    local t = math.atan(-1, 2.125)
    local Rz = lf.mat3{{math.cos(t), -math.sin(t), 0}, {math.sin(t), math.cos(t), 0}, {0, 0, 1}}
    assert.is_true((R - Rz):norm() <= 2e-15)
  end)
end)

describe("item 3: a correct finite result or a clear error", function()
  it("so3.project: subnormal input (before: ||R^T R - I|| = 3.66), diag(1,1,1e104) (before: refused)", function()
    local K = {0, -1, -2, -1, 4, 2, 1, -1, 0}
    local M = {}
    for i = 1, 9 do M[i] = K[i] * 2.0 ^ -1074 end
    local R = lf.so3.project(M)
    assert.is_true(is_rotation(R))
    assert.is_true(R == lf.so3.project(K)) -- a power-of-two scale does not change the answer
    assert.is_true(lf.so3.project{{1, 0, 0}, {0, 1, 0}, {0, 0, 1e104}} == lf.so3.I)
    -- the same matrix in another frame cannot be resolved in double precision: an error
    local Q = lf.so3.exp{0.3, 0.5, 0.7}
    has(errmsg(lf.so3.project, Q * lf.mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1e104}} * Q:T()), "not unique within rounding")
  end)
  it("quat.exp{1e200, 0, 0} (before: NaN)", function()
    local q = lf.quat.exp{1e200, 0, 0}
    assert.are.equal(math.cos(1e200), q[1])
    assert.is_true(math.abs(q[1] ^ 2 + q[2] ^ 2 - 1) < 1e-15)
  end)
  it("s2.retract: antipodal (before: NaN), huge v (before: the zero vector)", function()
    has(errmsg(lf.s2.retract, {1, 0, 0}, {-1, 0, 0}), "x + v = 0")
    assert.is_true(lf.s2.retract({1, 0, 0}, {0, 1e200, 0}) == lf.vec3{1e-200, 1, 0})
  end)
  it("vec3 norm and normalized (before: inf and the zero vector)", function()
    assert.are.equal(1e200, lf.vec3{1e200, 0, 0}:norm())
    assert.is_true(lf.vec3{1e200, 0, 0}:normalized() == lf.vec3{1, 0, 0})
    assert.is_true(lf.vec3{0, 5e-324, 0}:normalized() == lf.vec3{0, 1, 0})
    assert.are.equal(5e-200, lf.vec3{3e-200, 4e-200, 0}:norm())
  end)
  it("arithmetic that would leave finite numbers is an error (before: inf and NaN vec3)", function()
    local v = lf.vec3{1, 2, 3}
    has(errmsg(function() return v / 0 end), "attempt to divide lf.vec3 by zero")
    has(errmsg(function() return v * (0 / 0) end), "non-finite component")
    has(errmsg(function() return lf.vec3{1e308, 0, 0} + lf.vec3{1e308, 0, 0} end), "non-finite component")
    has(errmsg(function() return lf.mat3{1e200, 0, 0, 0, 1, 0, 0, 0, 1} * lf.mat3{1e200, 0, 0, 0, 1, 0, 0, 0, 1} end),
      "non-finite component")
    has(errmsg(function() return lf.vec3{1e200, 0, 0}:dot{1e200, 0, 0} end), "vec3:dot: the result overflows")
  end)
  it("mat3:inv (before: NaN for 1e200 I, 'singular' for 1e-110 I)", function()
    local A = lf.mat3{1e200, 0, 0, 0, 1e200, 0, 0, 0, 1e200}:inv()
    assert.is_true(math.abs(A[1][1] / 1e-200 - 1) <= 2e-16 and A[1][2] == 0 and A[3][3] == A[1][1])
    assert.is_true(math.abs(lf.mat3{1e-110, 0, 0, 0, 1e-110, 0, 0, 0, 1e-110}:inv()[1][1] / 1e110 - 1) <= 4e-16)
    has(errmsg(function() return lf.mat3{1, 2, 3, 2, 4, 6, 1, 0, 1}:inv() end), "singular to working precision")
    has(errmsg(function() return lf.mat3{1e-310, 0, 0, 0, 1e-310, 0, 0, 0, 1e-310}:inv() end), "the inverse overflows")
  end)
  it("so3.vee, quat.mul, mat3:det, so3.orth_error (before: -inf, inf, inf, inf)", function()
    assert.is_true(lf.so3.vee{0, 1e308, 0, -1e308, 0, 0, 0, 0, 0} == lf.vec3{0, 0, -1e308})
    has(errmsg(lf.quat.mul, {1e200, 0, 0, 0}, {1e200, 0, 0, 0}), "quat.mul: the product overflows")
    assert.are.same({1, 0, 0, 0}, lf.quat.mul({1e200, 0, 0, 0}, {1e-200, 0, 0, 0}))
    has(errmsg(function() return lf.mat3{1e110, 0, 0, 0, 1e110, 0, 0, 0, 1e110}:det() end), "mat3:det: the result overflows")
    -- before: 9.99988671826831e-21 (a subnormal intermediate)
    assert.is_true(math.abs(lf.mat3{1e300, 0, 0, 0, 1e-160, 0, 0, 0, 1e-160}:det() - 1e-20) <= 2e-36)
    has(errmsg(lf.so3.orth_error, {1e200, 0, 0, 0, 1, 0, 0, 0, 1}), "so3.orth_error: ||M^T M - I|| overflows")
  end)
  it("fit_linear on huge data (before: NaN, NaN, NaN, NaN)", function()
    local s, c, se, rs = lf.fit_linear({1e200, 2e200, 3e200}, {1e200, 2e200, 3.5e200})
    assert.are.equal(1.25, s)
    assert.is_true(c == c and se == se and rs == rs and math.abs(c) < math.huge)
    has(errmsg(lf.fit_linear, {0, 1e-300}, {0, 1e300}), "the fitted line overflows")
  end)
  it("drift of an energy error growing to 1e308 (before: 'bounded', from a NaN fit)", function()
    local t, e = {}, {}
    for i = 1, 300 do t[i] = i; e[i] = i * 3e305 + (i % 2) * 1e303 end
    assert.are.equal("drift", lf.drift{t = t, energy_error = e}.verdict)
  end)
end)

describe("item 4: files are complete or absent, and errors say why", function()
  local dir
  before_each(function() dir = T.make_tmpdir() end)
  after_each(function() os.execute("rm -rf " .. shq(dir)) end)
  local function traj() return lf.run(lf.stress_system(), {method = "vlv", h = 0.125, T = 50}) end

  it("write_json and write_csv report a full device (before: write_json said it succeeded)", function()
    has(errmsg(lf.write_json, "/dev/full", {x = 1}), "lf.write_json: writing '/dev/full': No space left on device")
    local tr = traj()
    has(errmsg(tr.write_csv, tr, "/dev/full"), "write_csv: writing '/dev/full': No space left on device")
  end)
  it_exe("a write that fails midway leaves the old file and no temporary (before: a truncated file)", function()
    local csv, json = dir .. "/t.csv", dir .. "/s.json"
    for _, p in ipairs{csv, json} do local f = io.open(p, "w"); f:write("OLD\n"); f:close() end
    -- at most 4 blocks per file (ulimit -f; SIGXFSZ ignored: writes fail with EFBIG)
    local code = ("local tr = lf.run(lf.stress_system(), {method = 'vlv', h = 0.125, T = 400})\n" ..
      "print(pcall(tr.write_csv, tr, %q))\nprint(pcall(lf.write_json, %q, tr))"):format(csv, json)
    local rc, out = sh("ulimit -f 4; trap '' XFSZ; " .. EXE .. " -e " .. shq(code))
    assert.are.equal(0, rc)
    has(out, "write_csv: writing '" .. csv .. "': File too large")
    has(out, "lf.write_json: writing '" .. json .. "': File too large")
    assert.are.equal("OLD\n", read(csv))
    assert.are.equal("OLD\n", read(json))
    assert.are.same({"s.json", "t.csv"}, files_in(dir))
  end)
  it("a successful write replaces the file and keeps its mode", function()
    local p = dir .. "/keep.json"
    local f = io.open(p, "w"); f:write("OLD"); f:close()
    os.execute("chmod 640 " .. shq(p))
    lf.write_json(p, {a = 1})
    assert.are.equal('{\n  "a": 1\n}\n', read(p))
    local _, mode = sh("stat -c %a " .. shq(p))
    assert.are.equal("640\n", mode)
    assert.are.same({"keep.json"}, files_in(dir))
  end)
  it("paths with NUL bytes are errors (before: written to the truncated name)", function()
    local p = dir .. "/a\0b.json"
    has(errmsg(lf.write_json, p, {1}), "the path contains a NUL byte")
    local tr = traj()
    has(errmsg(tr.write_csv, tr, dir .. "/a\0b.csv"), "the path contains a NUL byte")
    has(errmsg(lf.plot, {y = {1, 2}, file = dir .. "/a\0b.png"}), "the path contains a NUL byte")
    has(errmsg(lf.read_csv, dir .. "/a\0b.csv"), "the path contains a NUL byte")
    assert.are.same({}, files_in(dir))
  end)
  it_gp("a plot path starting with $ works (before: gnuplot took it for a datablock)", function()
    local rc, _, err = sh("cd " .. shq(dir) .. " && " .. shq(EXE_ABS) ..
      " -e 'lf.plot{y = {1, 2, 3}, file = \"$a.png\"}'")
    assert.are.equal(0, rc, err)
    assert.are.equal("\137PNG", (read(dir .. "/$a.png") or ""):sub(1, 4))
  end)
  it("plot size is bounded and checked (before: NaN crashed in string.format, 1e9 went to gnuplot)", function()
    has(errmsg(lf.plot, {y = {1, 2}, size = {0 / 0, 1}}), "size: {width, height} in pixels, each from 1 to 10000")
    has(errmsg(lf.plot, {y = {1, 2}, size = {1e9, 1e9}}), "got {1000000000.0, 1000000000.0}")
  end)
  it_gp("a plot rendered to a file leaves no temporary and is replaced whole", function()
    local p = dir .. "/f.png"
    local path = lf.plot{y = {1, 2, 3}, file = p}
    assert.are.equal(p, path)
    assert.are.same({"f.dat", "f.gp", "f.png"}, files_in(dir))
  end)
  it_gp("the terminal drawing creates no file at all, so an interrupt leaves none", function()
    local opened = {}
    local io_open, tmpname, atomic = io.open, os.tmpname, lf.core.atomic_open
    io.open = function(p, m, ...) if m and m:find("[wa]") then opened[#opened + 1] = p end return io_open(p, m, ...) end
    os.tmpname = function() opened[#opened + 1] = "tmpname" return tmpname() end
    lf.core.atomic_open = function(p, ...) opened[#opened + 1] = p return atomic(p, ...) end
    local old = io.output()
    io.output(io_open("/dev/null", "w"))
    local ok, e, info = pcall(lf.plot, {y = {3, 1, 2}, title = "no files"})
    io.output():close(); io.output(old)
    io.open, os.tmpname, lf.core.atomic_open = io_open, tmpname, atomic
    assert.is_true(ok, e)
    assert.are.same({}, opened)
    assert.is_truthy(info.text:find("no files", 1, true))
  end)
  it_exe("Ctrl-C during the terminal drawing stops gnuplot at once and leaves no file", function()
    local fake = dir .. "/slowplot"
    local f = io.open(fake, "w")
    f:write('#!/bin/sh\nif [ "$1" = --version ]; then echo "gnuplot 5.4 patchlevel 0"; exit 0; fi\n',
      'cat > ' .. dir .. '/got-script; echo started > ' .. dir .. '/started; exec sleep 20\n')
    f:close()
    os.execute("chmod +x " .. shq(fake))
    -- start lieflow, wait until the fake gnuplot runs, then Ctrl-C (SIGINT to lieflow alone)
    local t0 = os.time()
    local script = ("cd %s && { %s -e %s 2>err.txt & pid=$!; i=0; while [ ! -f started ] && [ $i -lt 300 ]; do " ..
      "sleep 0.1; i=$((i+1)); done; kill -INT $pid; wait $pid; echo $?; }"):format(shq(dir),
      shq(EXE_ABS), shq(("lf.plot{y = {1, 2, 3}, gnuplot = %q}"):format(fake)))
    local _, out = sh(script)
    local rc, err = tonumber(out), read(dir .. "/err.txt") or ""
    os.remove(dir .. "/err.txt")
    assert.is_true(os.time() - t0 < 15, "not interrupted")
    assert.are.equal(1, rc, err)
    has(err, "interrupted")
    -- the fake gnuplot got the whole script (with the data inline) on stdin; no other file anywhere
    assert.are.same({"got-script", "slowplot", "started"}, files_in(dir))
    has(read(dir .. "/got-script"), "$lieflow_data << EOD")
  end)
  it_exe("lf.plot in the REPL prints its drawing once (before: again as info.text)", function()
    if not have_gp then return end
    local rc, out = sh("printf '%s\\n' " .. shq('lf.plot{y = {1, 3, 2}, title = "ONCE-ONLY"}') .. " | " .. EXE .. " -i")
    assert.are.equal(0, rc)
    -- (lieflow -i echoes piped input lines after the prompt, as lua5.4 -i does: not counted)
    local drawn = out:gsub("[^\n]*> lf%.plot[^\n]*", "")
    local n = select(2, drawn:gsub("ONCE%-ONLY", ""))
    assert.are.equal(1, n)
    has(out, "lf.plot: drawn in the terminal")
  end)
end)

describe("item 6: errors that explain themselves", function()
  it("raw Lua errors from the module's own code (before: 'attempt to index a number value')", function()
    has(errmsg(lf.json.encode, {1}, 5), "json.encode: argument #2 must be an options table")
    has(errmsg(lf.stress_system, 3), "lf.stress_system: argument #1 must be an options table")
    has(errmsg(lf.gnuplot_available, lf.vec3{1, 2, 3}), "lf.gnuplot_available: path of the gnuplot executable")
  end)
  it("read_csv of a directory says so (before: \"'dir' is empty\")", function()
    has(errmsg(lf.read_csv, "/tmp"), "read_csv: cannot read '/tmp': Is a directory")
  end)
  it("a long callback error is cut at a word or line, with '...' (before: mid-word at 255 bytes)", function()
    local words = ("abcdefgh "):rep(60)
    local body = lf.rigidbody{inertia = {1, 2, 3}, compile = false, potential = function() error(words) end}
    local msg = errmsg(function() lf.integrator("vlv", body, {h = 0.1}):step() end)
    assert.is_truthy(msg:find("%.%.%.$") or msg:find("\n%.%.%.$"), msg)
    local before = msg:gsub("%.%.%.$", "")
    assert.is_truthy(before:find("abcdefgh ?$") or before:find("\n$"), msg)
  end)
end)

describe("found by the Lua API fuzzer (tests/fuzz) in these files", function()
  it("read_csv of an endless file (/dev/full) stops with an error (before: hung, eating memory)", function()
    has(errmsg(lf.read_csv, "/dev/full"), "has a line longer than 1048576 bytes: not a CSV file")
  end)
  it("json: a number beyond the double range is refused (before: decoded as inf)", function()
    has(errmsg(lf.json.decode, "[1, 1e400]"), "json.decode: number out of the double range at character 5 (line 1)")
  end)
  it("json.encode reads tables raw and bounds the depth (before: a yielding __len broke it; deep = stack overflow)", function()
    assert.are.equal("[1,2]", lf.json.encode(setmetatable({1, 2}, {__len = function() coroutine.yield() end})))
    local t, c = {}, nil
    c = t
    for _ = 1, 5000 do c[1] = {}; c = c[1] end
    has(errmsg(lf.json.encode, t), "json.encode: nested more than 1000 levels deep")
    has(errmsg(lf.json.number, {}), "json.number: number expected, got table")
  end)
  it("lf.plot reads arrays raw (before: a __len of 1e200 crashed string.format)", function()
    local dir = T.make_tmpdir()
    local old = lf.plot -- the series is the raw {1, 0.5, -1}: a plot, warnings only
    local P = require "lieflow.view.plot"
    local warn = P.warn
    P.warn = function() end
    local ok, e = pcall(lf.plot, {x = {1, 2, 3}, y = setmetatable({1, 0.5, -1}, {__len = function() return 1e200 end}),
                                  gnuplot = "/nonexistent/gnuplot", file = dir .. "/p.png", logy = true})
    P.warn = warn
    assert.is_true(ok, e)
    assert.are.equal(old, lf.plot)
    os.execute("rm -rf " .. shq(dir))
  end)
  it("lf.plot refuses a log base that makes gnuplot hang (before: 2^63 hung forever)", function()
    has(errmsg(lf.plot, {y = {1, 2, 3}, logx = 2 ^ 63}), "logx: true, false or a base in (1, 1e+06] expected")
  end)
  it("core.spawn stops a child that runs too long", function()
    local t0 = lf.core.wall_time()
    local status, code = lf.core.spawn({"sleep", "5"}, "", 0.3)
    assert.are.equal("timeout", status)
    assert.are.equal(0.3, code)
    assert.is_true(lf.core.wall_time() - t0 < 2)
  end)
  it("write_csv called on something else than a trajectory explains itself", function()
    local tr = lf.run(lf.stress_system(), {method = "vlv", h = 0.5, T = 1})
    has(errmsg(tr.write_csv, 0, "x.csv"), "write_csv: call it as traj:write_csv(path) on a trajectory, got number")
  end)
  it("fit_linear's slope error with two points is nil, not NaN", function()
    local s, c, se, rs = lf.fit_linear({1, 2}, {3, 4})
    assert.are.equal(1, s); assert.are.equal(2, c); assert.is_nil(se); assert.are.equal(0, rs)
  end)
  it("lf.reference refuses a tolerance above 1e-2 (before: rtol = 3 returned an R of NaN, no error)", function()
    has(errmsg(lf.reference, lf.stress_system(), 1, {rtol = 3}), "rtol = 3, expected a tolerance in (0, 1e-2]")
    has(errmsg(lf.core.reference, lf.stress_system(), 1, {atol = 0.5}), "atol = 0.5, expected a tolerance in (0, 1e-2]")
    assert.is_true(lf.so3.is_rotation(lf.reference(lf.stress_system(), 1, {rtol = 1e-2}).R, 1e-6))
  end)
  it("bodies that translate: an angular momentum that overflows is refused (before: L = -inf accepted)", function()
    has(errmsg(lf.rigidbody, {mass = 1, inertia = {1, 2, 3}, x = {0, 1e308, 0}, v = {1e10, 0, 0}}),
        "the total angular momentum x x m v + R J w overflows (L = (0, 0, -inf))")
    local it = lf.integrator("vlv", lf.rigidbody{mass = 1, inertia = {1, 2, 3}, x = {0, 1e300, 0}}, {h = 1})
    has(errmsg(it.set_state, it, {v = {1e10, 0, 0}}), "angular momentum x x m v + R J w overflows")
  end)
  it("an integrator of a Lua method: set_state names unknown fields and bad values, t may not overflow", function()
    local id = lf.method{name = "id", step = function(s) return s end}
    local it = lf.integrator(id, lf.stress_system(), {h = 0.1})
    -- before: "attempt to call a nil value (method 'copy')" and a stack overflow
    has(errmsg(it.set_state, it, {R = lf.so3.I, junk = lf.stress_system()}), "set_state: unknown field 'junk' (fields: t, R, omega)")
    has(errmsg(it.set_state, it, {omega = lf.stress_system()}), "set_state: field 'omega': a state value is a lf.system")
    local cyclic = {}
    cyclic[1] = cyclic
    has(errmsg(it.set_state, it, {omega = cyclic}), "set_state: field 'omega': a state value nested more than 16 levels")
    -- before: t = inf after two steps of 1e308
    local big = lf.integrator(id, lf.stress_system(), {h = 1e308})
    has(errmsg(big.step, big, 2), "id: step from t=1e+308 with h=1e+308: the time overflows")
    assert.are.equal(1e308, big.t)
  end)
end)

describe("found by the C API fuzzer (make fuzz-c)", function()
  it("s2.exp of a vector that is not tangent is an error (before: a point off the sphere)", function()
    has(errmsg(lf.s2.exp, {1, 0, 0}, {1, 0, 0}), "tangent vector at x expected")
    assert.is_true(math.abs(lf.s2.exp({1, 0, 0}, {0, 1, 0}):norm() - 1) < 1e-15)
  end)
end)

describe("found by the fuzzer: metamethods called by hand", function()
  it("vec3/mat3 __unm on an infinite number raises (before: returned inf)", function()
    has(errmsg(getmetatable(lf.mat3()).__unm, -1 / 0), "non-finite component")
    has(errmsg(getmetatable(lf.vec3{1, 2, 3}).__mul, 1e200, 1e200), "non-finite component")
  end)
end)

-- Findings of a 15-minute run of the Lua API fuzzer (tests/fuzz), after issue 13 had closed its list.
describe("autodiff values under hostile use", function()
  local ad = lf.autodiff
  local rev = ad.reverse
  -- a reverse-mode vec3 kept after its evaluation, to reach its metatable
  local kept
  rev.gradient(function(v) kept = v; return v:dot(v) end, lf.vec3{1, 2, 3})
  local RV = getmetatable(kept)

  it("a traced value's operator called by hand without one is refused by name (before: 'attempt to index')", function()
    has(errmsg(RV.__mul, lf.vec3{1, 2, 3}, 2), "'*': no traced operand")
  end)
  it("so3.dist on a traced value and a non-matrix names the argument (before: raw error inside reverse.lua)", function()
    local msg = errmsg(rev.gradient, function(R) return lf.so3.dist(R, io.stdout) end, lf.mat3())
    has(msg, "argument #2 to 'so3.dist': a mat3 expected, got FILE*")
  end)
  it("lf.vec3 with a dual and a non-number component is an error (before: a dual vec3 with nil entries)", function()
    has(errmsg(lf.vec3, ad.dual(1), {}, 2), "argument #2 to 'lf.vec3': a number expected")
  end)
  it("traced norms and products are plain double arithmetic; a value that overflows is an error", function()
    for _, s in ipairs{1e-100, 1, 1e100} do
      local v = ad.vec3{ad.dual(3 * s, {1, 0, 0}), 4 * s, 0}
      assert.is_true(math.abs(ad.value(v:norm()) / (5 * s) - 1) < 1e-15 and math.abs(ad.grad(v:norm()) - 0.6) < 1e-15)
      assert.is_true(math.abs(ad.value(v:normalized()[1]) - 0.6) < 1e-15)
      local val, g = rev.gradient(function(x) return lf.vec3{x, 4 * s, 0}:norm() end, 3 * s)
      assert.is_true(math.abs(val / (5 * s) - 1) < 1e-15 and math.abs(g - 0.6) < 1e-15)
    end
    local huge = ad.vec3{ad.dual(1.5e200, {1, 0, 0}), 1.5e200, 0}
    has(errmsg(ad.value, huge:norm()), "ad.value: the value is not finite")
    has(errmsg(ad.value, huge:dot(huge)), "ad.value: the value is not finite")
    local M = ad.mat3{{ad.dual(1e200, {1, 0, 0}), 0, 0}, {0, 1e200, 0}, {0, 0, 1}}
    has(errmsg(function() return M * M end), "the result has a non-finite component") -- as lf.mat3's own *
    has(errmsg(ad.value, M:det()), "ad.value: the value is not finite")
    -- reverse mode: a value or gradient that overflows is an error (before: -inf)
    has(errmsg(rev.gradient, function(x) local w = lf.vec3{x, x, 0}; return w:dot(w) end, 1e200), "is not finite")
    has(errmsg(rev.gradient, function(t) return (lf.vec3{t, 1, 0} / t)[2] end, 1e-200), "the derivative is not finite")
    -- and a Lua potential whose value overflows is an error: compiled, when the system is made (its value at
    -- the initial state); interpreted, at the step
    has(errmsg(lf.rigidbody, {inertia = {1, 2, 3}, omega = {0.1, 0.2, 0.3}, compile = "auto",
                              potential = function(R) return (R * 1e200):norm() ^ 2 end}),
        "the potential U(R) is not finite at the initial state (U = inf)")
    local body = lf.rigidbody{inertia = {1, 2, 3}, omega = {0.1, 0.2, 0.3}, compile = false,
      potential = function(R) return (R * 1e200):norm() ^ 2 end}
    has(errmsg(function() lf.integrator("vlv", body, {h = 0.1}):step() end), "not finite")
  end)
  it("ad.grad refuses a non-finite derivative (before: returned inf / NaN)", function()
    has(errmsg(ad.grad, ad.math.sqrt(ad.dual(0, {1, 0, 0}))), "singular point")
    local g1 = ad.grad(ad.math.sqrt(ad.dual(4, {1, 0, 0})))
    assert.are.equal(0.25, g1)
  end)
  it("so3.angle/dist/log of autodiff values refuse a non-rotation as the plain functions do (before: an angle of diag(2, 1, 1), NaN on overflow)", function()
    local D = ad.mat3{{ad.dual(2, {1, 0, 0}), 0, 0}, {0, 1, 0}, {0, 0, 1}}
    local B0 = nil
    local big = ad.dual(1e200, {1, 0, 0})
    local B = ad.mat3{{big, 0, 0}, {0, big, 0}, {0, 0, big}}
    local plain = errmsg(lf.so3.angle, lf.mat3{2, 0, 0, 0, 1, 0, 0, 0, 1})
    has(plain, "argument #1 to 'so3.angle' is not a rotation: ||R^T R - I|| = 3 > 1e-09")
    has(errmsg(lf.so3.angle, D), "argument #1 to 'so3.angle' is not a rotation: ||R^T R - I|| = 3 > 1e-09")
    has(errmsg(lf.so3.angle, B), "argument #1 to 'so3.angle' is not a rotation")
    has(errmsg(lf.so3.angle, lf.so3.I, D), "argument #2 to 'so3.angle' is not a rotation")
    has(errmsg(lf.so3.dist, lf.so3.I, D), "argument #2 to 'so3.dist' is not a rotation")
    has(errmsg(lf.so3.log, B), "argument #1 to 'so3.log' is not a rotation")
    -- reverse mode: the same refusals from inside an evaluation
    local two = function(x) return lf.mat3{{x, 0, 0}, {0, 1, 0}, {0, 0, 1}} end
    has(errmsg(rev.gradient, function(x) return lf.so3.angle(two(x)) end, 2), "argument #1 to 'so3.angle' is not a rotation")
    has(errmsg(rev.gradient, function(x) return lf.so3.dist(lf.so3.I, two(x)) end, 2), "argument #2 to 'so3.dist' is not a rotation")
    has(errmsg(rev.gradient, function(R) return lf.so3.angle(R * 2) end, lf.so3.I), "argument #1 to 'so3.angle' is not a rotation")
    has(errmsg(rev.gradient, function(R) return lf.so3.log(R * 1e200):norm() end, lf.so3.I), "argument #1 to 'so3.log' is not a rotation")
    -- and rotations still differentiate: d/dt angle(exp(t e1)) = 1 in both modes
    local a = lf.so3.angle(lf.so3.exp(ad.vec3{ad.dual(0.3, {1, 0, 0}), 0, 0}))
    assert.is_true(math.abs(ad.value(a) - 0.3) < 1e-15 and math.abs(ad.grad(a) - 1) < 1e-14)
    local v, g = rev.gradient(function(t) return lf.so3.angle(lf.so3.exp(lf.vec3{t, 0, 0})) end, 0.3)
    assert.is_true(math.abs(v - 0.3) < 1e-15 and math.abs(g - 1) < 1e-14)
  end)
  it("a tape value given where a table of options is expected is refused by the function", function()
    local r
    rev.gradient(function(x) r = x; return x end, 1)
    has(errmsg(lf.drift, r), "lf.drift: argument #1 must be a trajectory")
    local traj = lf.run(lf.stress_system(), {method = "vlv", h = 0.25, T = 1})
    has(errmsg(traj.plot, traj, r), "traj:plot: options table expected")
  end)
end)

-- Findings of the third 15-minute run of the Lua API fuzzer (seed 1)
describe("streamed trajectories and option checks", function()
  it("a streamed trajectory's array methods say where the arrays are (before: raw error in write_csv, an empty data table from totable/to_json)", function()
    local path = os.tmpname()
    local tr = lf.run(lf.stress_system(), {method = "vlv", h = 0.25, T = 2, stream = path})
    local out = os.tmpname()
    for name, f in pairs{["traj:write_csv"] = function() return tr:write_csv(out) end,
                         ["traj:totable"] = function() return tr:totable() end,
                         ["traj:to_json"] = function() return tr:to_json() end,
                         ["traj:plot"] = function() return tr:plot{file = out .. ".png"} end,
                         ["lf.drift"] = function() return lf.drift(tr) end} do
      has(errmsg(f), name .. ": this trajectory was streamed to " .. path .. " and keeps no arrays in memory")
    end
    -- and what it points to works
    local back = tr:load()
    assert.are.equal(9, #back.t)
    assert.are.equal(out, back:write_csv(out))
    os.remove(path); os.remove(out)
  end)
  it("traj:write_csv checks arrays changed after the run (before: raw 'bad argument to format' error)", function()
    local tr = lf.run(lf.stress_system(), {method = "vlv", h = 0.25, T = 5})
    local out = os.tmpname()
    table.remove(tr.energy)
    has(errmsg(tr.write_csv, tr, out), "traj:write_csv: column 'energy' has 20 values, column 't' 21")
    tr.energy[21] = 0
    tr.pi1[3] = "x"
    has(errmsg(tr.write_csv, tr, out), "traj:write_csv: column 'pi1' entry 3 is string, expected a number")
    tr.pi1[3] = 0
    assert.are.equal(out, tr:write_csv(out))
    os.remove(out)
  end)
  it("lf.lie_ode and lf.spheres refuse a table whose fields raise, by name (before: raw error in init.lua)", function()
    local r
    lf.autodiff.reverse.gradient(function(x) r = x; return x end, 1)
    has(errmsg(lf.lie_ode, r), "lf.lie_ode: argument #1 must be a table of fields, got lf.traced")
    has(errmsg(lf.spheres, r), "lf.spheres: argument #1 must be a table of fields, got lf.traced")
    local locked = setmetatable({}, {__metatable = "locked", __index = function() error("no fields here") end})
    has(errmsg(lf.lie_ode, locked), "got table (reading its fields raised: no fields here)")
  end)
  it("lf.stress_test leaves ratio and exponent out when a slope is 0 (before: NaN for a method keeping the energy exactly)", function()
    local still = lf.method{name = "still", order = 1, step = function(s, h) return s end}
    local r = lf.stress_test(still, {T = 20})
    assert.are.equal(0, r.runs[1].slope); assert.are.equal("bounded", r.verdict)
    assert.is_nil(r.ratio); assert.is_nil(r.exponent)
    local v = lf.stress_test("vlv", {T = 200, every = 4})
    assert.is_true(v.ratio == v.ratio and v.exponent == v.exponent)
  end)
  it("lf.plot refuses a series that is not a plain table, by kind (before: raw error reading an autodiff value)", function()
    local r
    lf.autodiff.reverse.gradient(function(x) r = x; return x end, 1)
    has(errmsg(lf.plot, {y = r}), "lf.plot: y: table of series expected, got lf.traced")
    has(errmsg(lf.plot, {y = {r}}), "lf.plot: y[1]: series expected (array of numbers or {label = , data = }), got lf.traced")
  end)
  it("lf.load with something other than a system as argument #2 says what it needs (before: raw error)", function()
    local path = os.tmpname()
    local it = lf.integrator("vlv", lf.stress_system(), {h = 0.125})
    it:step(3)
    it:save(path)
    local r
    lf.autodiff.reverse.gradient(function(x) r = x; return x end, 1)
    for _, bad in ipairs{0.5, "x", {}, r} do
      has(errmsg(lf.load, path, bad), "lf.load: the checkpoint is of a rigidbody system; give that system as argument #2")
    end
    has(errmsg(lf.load, path, lf.lie_ode{factors = {"so3"}, y0 = {lf.so3.I}, f = function(t, y) return {{0, 0, 1}} end}),
      "(got a lie_ode system)")
    assert.are.equal(it.t, lf.load(path, lf.stress_system()).t)
    os.remove(path)
  end)
  it("metamethods called by hand with odd arguments (before: -inf from __unm(inf, dual), raw error from a dual's __index)", function()
    local dv = lf.autodiff.vec3{lf.autodiff.dual(1, {1, 0, 0}), 2, 3}
    has(errmsg(getmetatable(lf.mat3()).__unm, 1 / 0, dv), "the result has a non-finite component")
    assert.are.equal(-2, lf.autodiff.value((-dv)[2]))
    has(errmsg(getmetatable(dv).__index, 10, "x"), "lf.traced expected, got number")
    -- extra arguments do not reach the autodiff versions (before: __sub(-inf, inf, m, dual) returned -inf)
    local dm = lf.autodiff.mat3{{lf.autodiff.dual(1, {1, 0, 0}), 0, 0}, {0, 1, 0}, {0, 0, 1}}
    has(errmsg(getmetatable(lf.mat3()).__sub, -1 / 0, 1 / 0, lf.so3.I, dm), "attempt to perform '-' on number and number")
    has(errmsg(getmetatable(lf.mat3()).__mul, 1e300, 1e300, dm), "'*' on number and number")
    assert.is_true(lf.so3.is_rotation(lf.so3.exp({1e200, 1, 1e200}, dv))) -- the C map (range-reduced), not the dual one
    assert.are.equal(0, lf.so3.angle(lf.so3.I, lf.so3.I, dm))
  end)
  it("lf.stress_test checks 'every' before using it (before: raw 'attempt to idiv' error)", function()
    has(errmsg(lf.stress_test, "vlv", {every = ""}), "option 'every' must be an integer >= 1, got the string \"\"")
    has(errmsg(lf.stress_test, "vlv", {every = 0.5}), "option 'every' must be an integer >= 1, got 0.5")
  end)
end)

describe("lf.autodiff on the expression graph (fuzz findings of 2026-11-27)", function()
  it("a table with a metatable among the arguments is a constant (before: segfault in r3_gradient)", function()
    local g = lf.autodiff.r3_gradient(function(qs) return qs[2]:dot(qs[2]) end, {setmetatable({}, {}), lf.vec3{1, 2, 3}})
    assert.are.equal(lf.vec3{2, 4, 6}, g[2])
  end)
  it("lf.autodiff.torque checks R and nb by name (before: raw errors in autodiff.lua)", function()
    local U = function(R) return 1 end
    has(errmsg(lf.autodiff.torque, U), "autodiff torque: a rotation (mat3) or an array of rotations expected, got nil")
    has(errmsg(lf.autodiff.reverse.torque, U), "got nil")
    has(errmsg(lf.autodiff.torque, U, {lf.so3.I, 3}), "R[2] is number, expected a rotation (mat3)")
    has(errmsg(lf.autodiff.torque, U, {{2, 0, 0}, {0, 1, 0}, {0, 0, 1}}), "R is not a rotation")
    has(errmsg(lf.autodiff.torque, U, lf.so3.I, 1.7976931348623157e308),
      "the number of bodies must be an integer >= 1, got 1.7976931348623e+308")
  end)
end)

describe("the three findings of issue 22 (fifteen minutes of fuzzing the public API)", function()
  it("s2.retract_inv with a subnormal x.y is an error, not vec3{nan, inf, inf}", function()
    has(errmsg(lf.s2.retract_inv, {1, 0, 0}, {4.9406564584124654e-324, 1e-300, 1}), "y is at the edge of the chart")
    assert.is_true((lf.s2.retract_inv({1, 0, 0}, {0.6, 0.8, 0}) - lf.vec3{0, 4 / 3, 0}):norm() < 1e-15)
  end)
  it("a table whose __len lies is refused by r3_gradient before anything reads its length", function()
    local liar = setmetatable({}, {__len = function() return 2 ^ 61 end})
    local t0 = os.clock()
    has(errmsg(lf.autodiff.r3_gradient, function(qs) return 0 end, liar), "with a metatable")
    assert.is_true(os.clock() - t0 < 1)
  end)
  it("lf.reference integrates backwards when T < t0 (exactly: forward again returns), and max_steps bounds it", function()
    local U = function(R) return R[3][3] end
    local b = lf.rigidbody{inertia = {1, 2, 3}, omega = {1, 2, 3}, potential = U, compile = false}
    local r = lf.reference(b, -0.5, {t0 = 2})
    assert.are.equal(-0.5, r.t)
    local back = lf.reference(lf.rigidbody{inertia = {1, 2, 3}, omega = r.omega, R = r.R, potential = U, compile = false}, 2.5)
    assert.is_true((back.omega - b.omega):norm() < 1e-12 and (back.R - b.R):norm() < 1e-12)
    local t0 = os.clock()
    has(errmsg(lf.reference, b, -1e6, {max_steps = 1000}), "more than 1000 rk8pd steps needed to reach t=-1e+06")
    assert.is_true(os.clock() - t0 < 2)
  end)
end)

describe("forward-mode derivatives that are not finite (found by the fifteen-minute fuzz of issue 22)", function()
  it("ad.grad of a dual value whose derivative is infinite or NaN is an error, as ad.value is (before: -nan returned)", function()
    local ad = lf.autodiff
    local x = ad.dual(0, {1, 0, 0})
    has(errmsg(ad.grad, ad.math.sqrt(x)), "ad.grad: the derivative is not finite")
    -- the binding's own function, which the fuzzer calls directly
    has(errmsg(lf.core.traced_grad, ad.math.sqrt(x)), "ad.grad: the derivative is not finite")
    local d1, d2, d3 = ad.grad(ad.math.sqrt(ad.dual(4, {1, 0, 0})))
    assert.are.same({0.25, 0, 0}, {d1, d2, d3})
  end)
end)

describe("lf.lognorm with extreme entries (found by the fuzzer: NaN)", function()
  local A = {{-1, 2, 0}, {0.5, -3, 1}, {0, 1, -2}}
  local G = {{2, 0.5, 0}, {0.5, 1, 0}, {0, 0, 3}}
  local function scaled(M, c)
    local S = {}
    for i = 1, 3 do S[i] = {} for j = 1, 3 do S[i][j] = c * M[i][j] end end
    return S
  end
  it("is positively homogeneous in A and invariant to scaling G, to round-off, at 1e-200 ... 1e200", function()
    local mu = lf.lognorm(A, G)
    for _, c in ipairs{1e-200, 1e-160, 1e160, 1e200} do
      assert.is_true(math.abs(lf.lognorm(scaled(A, c), G) / (c * mu) - 1) < 1e-14)
      assert.is_true(math.abs(lf.lognorm(A, scaled(G, c)) / mu - 1) < 1e-14)
    end
  end)
  it("a result beyond double precision is an error, not NaN or inf", function()
    has(errmsg(lf.lognorm, {{1e300, 1e300, 0}, {-1e300, 1e300, 0}, {0, 0, 1e300}}, {{1, 0, 0}, {0, 1e300, 0}, {0, 0, 1}}),
      "lognorm: the result is not finite")
  end)
end)

describe("a potential finalized by hand while systems use it (found by the fuzzer: segfault, use-after-free)", function()
  it("the systems keep its C potential; the potential itself is refused; collecting everything is clean", function()
    local function run(finalize)
      local p = lf.potential.field{B = {0, 0, 1}, m = {0.3, 0.2, 1}}
      local s = lf.rigidbody{inertia = {1, 2, 3}, potential = p, omega = {0.1, 0.2, 0.3}}
      local it = lf.integrator("vlv", s, {h = 0.1})
      if finalize then
        getmetatable(p).__gc(p)
        assert.are.equal("lf.potential (finalized)", tostring(p))
        has(errmsg(function() return p:energy(lf.so3.I) end), "the potential has been finalized and cannot be used")
        has(errmsg(lf.rigidbody, {inertia = {1, 2, 3}, potential = p}), "the potential has been finalized")
      end
      it:step(20)
      return it.t, s:energy(), tostring(it.R)
    end
    local t1, e1, r1 = run(false)
    local t2, e2, r2 = run(true)
    assert.are.equal(t1, t2); assert.are.equal(e1, e2); assert.are.equal(r1, r2)
    collectgarbage(); collectgarbage()
  end)
end)

-- Found by a 15-minute fuzz run on 2026-11-24 (segfault: lf.reference read its options after taking
-- the system's C pointer, and an option table's __index finalized the system), then by
-- tests/fuzz/finalize_sweep.lua, which tries the pattern over every entry point: a C function that
-- runs Lua code (metamethods of its arguments, callbacks) now holds its system and method until it
-- returns (lua/lhold.c), and lf.rkmk / lf.compose methods follow the systems' lifetime rule.
describe("objects finalized by hand while a call uses them", function()
  local function finalize(x) getmetatable(x).__gc(x) end
  -- a table whose reads finalize x, then answer from values
  local function finalizing(x, values)
    return setmetatable({}, {__index = function(_, k) finalize(x) return (values or {})[k] end})
  end
  local s2_flow = {factors = {"s2"}, y0 = {{0.6, 0, 0.8}}, f = "s2_gradient_flow", params = {D = {1, 1, 3}}}
  local function midpoint() return lf.rkmk{name = "mid", A = {{0.5}}, b = {1}, c = {0.5}, order = 2, symmetric = true} end

  it("lf.reference whose options finalize the system (before: segfault, use-after-free)", function()
    for _, make in ipairs{function() return lf.rigidbody{inertia = {1, 2, 3}, omega = {1, 2, 3}} end,
                          function() return lf.spheres.pendulum{q = {1, 0, 0}, omega = {0, 0, 1}} end} do
      local sys = make()
      has(errmsg(lf.reference, sys, 1, finalizing(sys)), "the system has been finalized")
      assert.are.equal("lf.system (finalized)", tostring(sys))
    end
  end)
  it("system methods whose state argument finalizes the system finish with the right value, then refuse it (before: use-after-free)", function()
    local make = function() return lf.rigidbody{inertia = {1, 2, 3}, omega = {1, 2, 3}, potential = lf.potential.top{}} end
    local sys = make()
    assert.are.equal(make():energy(), sys:energy(finalizing(sys)))
    has(errmsg(function() return sys:energy() end), "finalized")
    local pend = lf.spheres.pendulum{q = {1, 0, 0}, omega = {0, 0, 1}}
    local a = lf.spheres.pendulum{q = {1, 0, 0}, omega = {0, 0, 1}}:alpha()
    assert.is_true(pend:alpha(finalizing(pend))[1] == a[1])
  end)
  it("a Lua potential or right-hand side that finalizes its own system during an evaluation (before: use-after-free)", function()
    local sys
    sys = lf.rigidbody{inertia = {1, 2, 3}, omega = {1, 2, 3}, compile = false,
                       potential = function(R) finalize(sys) return 5 * R[3][3] end}
    local E = sys:energy()
    assert.is_true(math.abs(E - (0.5 * (1 + 8 + 27) + 5)) < 1e-14, E)
    has(errmsg(function() return sys:energy() end), "finalized")
    local ode
    ode = lf.lie_ode{factors = {"s2"}, y0 = {{0, 0, 1}}, compile = false,
                     f = function(_, y) finalize(ode) return {y[1]:cross{1, 0, 0}} end}
    assert.is_true(ode:f(0)[1] == lf.vec3{0, 1, 0})
    has(errmsg(function() return ode:f(0) end), "finalized")
  end)
  it("an lf.rkmk method finalized by hand while an integrator uses it (before: it:step read freed memory)", function()
    local function run(fin)
      local m = midpoint()
      local it = lf.integrator(m, lf.lie_ode(s2_flow), {h = 0.1})
      if fin then
        finalize(m)
        assert.are.equal("lf.rkmk (finalized)", tostring(m))
        has(errmsg(lf.integrator, m, lf.lie_ode(s2_flow), {h = 0.1}), "lf.integrator: the method has been finalized")
        has(errmsg(lf.compose, m, "suzuki4"), "the method has been finalized")
      end
      it:step(10)
      return tostring(it:state().y[1])
    end
    assert.are.equal(run(false), run(true))
    collectgarbage(); collectgarbage()
  end)
  it("the base of a composition finalized by hand: the composition keeps it (before: use-after-free)", function()
    local function run(fin)
      local base = midpoint()
      local c = lf.compose(base, "suzuki4")
      if fin then finalize(base) end
      local it = lf.integrator(c, lf.lie_ode(s2_flow), {h = 0.1})
      it:step(5)
      return tostring(it:state().y[1])
    end
    assert.are.equal(run(false), run(true))
    collectgarbage(); collectgarbage()
  end)
  it("lf.integrator and the work-precision runs whose options finalize the system or the method (before: use-after-free)", function()
    local m = midpoint()
    has(errmsg(lf.integrator, m, lf.lie_ode(s2_flow), finalizing(m, {h = 0.1})), "lf.integrator: the method has been finalized")
    local sys = lf.lie_ode(s2_flow)
    has(errmsg(lf.integrator, "rkmk4", sys, finalizing(sys, {h = 0.1})), "the system has been finalized")
    m = midpoint()
    has(errmsg(lf.core.timed_run, m, lf.lie_ode(s2_flow), finalizing(m, {T = 1, h = 0.5})), "the method has been finalized")
    sys = lf.rigidbody{inertia = {1, 2, 3}, omega = {1, 2, 3}}
    has(errmsg(lf.core.baseline, sys, finalizing(sys, {solver = "rk4", T = 1, h = 0.5})), "the system has been finalized")
  end)
end)

describe("messages name the user's call, never a file of lieflow's own", function()
  it("lf.contractivity with an unknown method, it:save into a directory it cannot create (before: lieflow/run/....lua:103:)", function()
    local s = lf.spheres.pendulum{q = {{0, 0, -1}}, qdot = {{0.1, 0, 0}}}
    local it = lf.integrator("rkmk4", s, {h = 0.1})
    local a = it:state()
    it:step()
    local e = errmsg(lf.contractivity, {system = s, method = "nope", pairs = {{a, it:state()}}, h = 0.1})
    has(e, "lf.contractivity: lf.integrator: unknown method 'nope'")
    assert.is_nil(e:find("lieflow/", 1, true))
    local vi = lf.integrator("vlv", lf.rigidbody{inertia = {1, 2, 3}}, {h = 0.1})
    e = errmsg(vi.save, vi, "/proc/nonexistent/x/ck.json")
    has(e, "it:save: lf.write_json: mkdir_p: cannot create directory '/proc/nonexistent'")
    assert.is_nil(e:find("%.lua:%d"))
  end)
end)

describe("values that slipped through (issue 31)", function()
  it("lf.view of a table whose __index never returns nil returns with an error (before: it never returned)", function()
    local P = setmetatable({}, {__index = function() return 0.5 end, __len = function() return 9 end})
    has(errmsg(lf.view, P), "lf.view: give at least one trajectory")
  end)
  it("a compiled potential not finite at the initial state is refused when the system is made", function()
    has(errmsg(lf.rigidbody, {inertia = {1, 2, 3}, potential = function(R) return 0 / 0 end}),
        "lf.rigidbody: the potential U(R) is not finite at the initial state")
    has(errmsg(lf.rigidbody, {inertia = {1, 2, 3}, potential = function(R) return math.log(R[3][3] - 2) end}),
        "not finite at the initial state")
    has(errmsg(lf.bodies, {{inertia = {1, 2, 3}}, {inertia = {1, 2, 3}}, potential = function(Rs) return 1 / 0 end}),
        "lf.bodies: the potential U(Rs) is not finite")
  end)
  it("an observer returning NaN stops the run, naming it; a failing sample's message names no internal file", function()
    has(errmsg(lf.run, lf.stress_system(), {method = "vlv", h = 0.1, T = 1, observe = {x = function() return 0 / 0 end}}),
        "observer 'x' returned nan at t=0")
    local body = lf.rigidbody{inertia = {1, 2, 3}, compile = false, potential = function(R) return math.log(R[3][3] + 0.5) end,
                              R = lf.so3.exp{0, 2, 0}}
    local msg = errmsg(lf.run, body, {method = "vlv", h = 0.1, T = 1})
    assert.is_nil(msg:find("lieflow/run/"), msg)
  end)
end)
