-- SPDX-License-Identifier: GPL-3.0-or-later
-- Count the checks of the official Lua test of the stand-alone interpreter (testes/main.lua of the
-- Lua 5.4 sources, not part of this repository) that pass under an interpreter, without stopping
-- at the first failure:
--   lieflow tests/testes_main_count.lua path/to/lua-5.4.4/testes/main.lua
--   lua5.4  tests/testes_main_count.lua path/to/lua-5.4.4/testes/main.lua
-- main.lua tests the interpreter that runs it. Here `assert` does not raise: a check is one RUN or
-- NoRun command of main.lua together with the assertions that follow it up to the next command or
-- print, or an assertion outside such a span; it passes if all its assertions hold. The last line
-- (on stderr) is "main.lua: P/N checks passed; failed: <command>@<line> ...".
local path = assert(..., "usage: tests/testes_main_count.lua path/to/testes/main.lua")
local src = assert(io.open(path)):read("a"):gsub("^#[^\n]*", "--")  -- load() does not skip a # line
local source = "@" .. path
local units, cur, prev = {}, nil, nil

local function main_line()  -- the line of main.lua's main chunk running now
  for level = 3, 60 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.source == source and info.what == "main" then return info.currentline end
  end
  return -1
end

local env = setmetatable({}, {__index = _G, __newindex = _G})
rawset(env, "assert", function(v, ...)
  local caller = debug.getinfo(2, "nl")
  local name, line = caller.name, main_line()
  local command = name == "RUN" or name == "NoRun"
  local same = command and prev and prev.name == name and prev.line == line and prev.cline < caller.currentline
  if command then prev = {name = name, line = line, cline = caller.currentline} end
  if (command and not same) or cur == nil or cur.closed then
    cur = {line = line, ok = true, what = command and name or "assert"}
    units[#units + 1] = cur
  end
  if not v then cur.ok = false end
  return v, ...
end)
rawset(env, "print", function(...)  -- a print of main.lua ends the current command's span
  if cur then cur.closed = true end
  return print(...)
end)

local ok, err = pcall(assert(load(src, source, "t", env)))
local pass, failed = 0, {}
for _, u in ipairs(units) do
  if u.ok then pass = pass + 1 else failed[#failed + 1] = u.what .. "@" .. u.line end
end
io.stderr:write(("main.lua: %d/%d checks passed%s; failed: %s\n"):format(pass, #units,
  ok and "" or (" (stopped: " .. tostring(err) .. ")"), table.concat(failed, " ")))
os.exit(ok and #failed == 0)
