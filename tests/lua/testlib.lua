-- SPDX-License-Identifier: GPL-3.0-or-later
-- Helpers shared by the Lua specs (not a spec itself): error capture, substring checks, files and
-- temporary directories.
local M = {}

--- The message of the error f(...) raises (fails if it does not raise).
function M.errmsg(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "an error was expected")
  return tostring(e)
end

--- Assert that msg contains s literally.
function M.has(msg, s) assert(msg:find(s, 1, true), ("%q not found in %q"):format(s, msg)) end

--- Whole contents of a file, or nil if it cannot be opened.
function M.read(p)
  local f = io.open(p, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

--- Single-quote a string for the shell.
function M.shq(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

--- A new empty temporary directory.
function M.make_tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. M.shq(d)))
  return d
end

return M
