-- SPDX-License-Identifier: GPL-3.0-or-later
-- The structure of the Lua binding (lua/*.c), checked (make test, suite test-structure):
--   * a library (a file whose functions are opened by module/core.c: it defines an lfb_open_* declared
--     in lua/lib/open.h) exports that opener and nothing else;
--   * no file but module/core.c calls a library's opener, so libraries never call each other: what they
--     share is the object layer and the services (every other file);
--   * the files' references to each other's functions have no cycle.
-- usage: lua5.4 tests/binding_layers.lua [lua-dir]   (exit status 1 on a violation)
local dir = arg[1] or "lua"

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- C source without comments, string and character literals (so that names in them do not count)
local function code(s)
  s = s:gsub("/%*.-%*/", function(c) return (c:gsub("[^\n]", " ")) end)
  s = s:gsub("//[^\n]*", "")
  s = s:gsub('"[^"\n]*"', '""'):gsub("'[^'\n]*'", "''")
  return s
end

local files = {}
local p = io.popen("ls " .. dir .. "/*.c")
for f in p:lines() do
  local name = f:match("([^/]+)%.c$")
  if name ~= "main" and name ~= "lmpi" then files[#files + 1] = name end -- the executable, a module of its own
end
p:close()
table.sort(files)

local src, defines, owner = {}, {}, {}
for _, f in ipairs(files) do
  src[f] = code(read(dir .. "/" .. f .. ".c"))
  defines[f] = {}
  -- external definitions: at the start of a line, not static, a name lfb_* followed by ( ... ) {
  for head, name in src[f]:gmatch("\n([%a_][%w_ %*]-)[%s%*](lfb_[%w_]+)%s*%b()%s*{") do
    if not head:match("^static") and not head:match("^%s*typedef") then
      defines[f][#defines[f] + 1] = name
      owner[name] = f
    end
  end
end

local openers = {}
for name in read(dir .. "/lopen.h"):gmatch("void (lfb_open_[%w_]+)%s*%(") do openers[name] = true end

local problems = {}
local function problem(fmt, ...) problems[#problems + 1] = fmt:format(...) end

-- libraries and what they export
local library = {}
for _, f in ipairs(files) do
  for _, name in ipairs(defines[f]) do
    if openers[name] then library[f] = name end
  end
  if library[f] then
    for _, name in ipairs(defines[f]) do
      if name ~= library[f] then problem("%s.c is a library (%s) and also exports %s", f, library[f], name) end
    end
  end
end
for name in pairs(openers) do if not owner[name] then problem("lib/open.h declares %s, defined nowhere", name) end end

-- references between files
local uses = {}
for _, f in ipairs(files) do
  uses[f] = {}
  for name in src[f]:gmatch("(lfb_[%w_]+)%s*%(") do
    local o = owner[name]
    if o and o ~= f then
      uses[f][o] = uses[f][o] or name
      if library[o] and f ~= "lcore" then problem("%s.c calls %s of the library %s.c", f, name, o) end
    end
  end
end

-- cycles (depth-first search)
local state, stack = {}, {}
local function visit(f)
  state[f] = "open"
  stack[#stack + 1] = f
  local deps = {}
  for o in pairs(uses[f]) do deps[#deps + 1] = o end
  table.sort(deps)
  for _, o in ipairs(deps) do
    if state[o] == "open" then
      local cyc, on = {}, false
      for _, s in ipairs(stack) do
        if s == o then on = true end
        if on then cyc[#cyc + 1] = s .. ".c" end
      end
      problem("cycle: %s -> %s.c (%s)", table.concat(cyc, " -> "), o, uses[f][o])
    elseif not state[o] then
      visit(o)
    end
  end
  stack[#stack] = nil
  state[f] = "done"
end
for _, f in ipairs(files) do if not state[f] then visit(f) end end

-- report: the layers (a file's depth: 0 if it uses no other file, else 1 + its deepest use)
local depth = {}
local function d(f)
  if depth[f] then return depth[f] end
  depth[f] = 0
  local m = -1
  for o in pairs(uses[f]) do m = math.max(m, d(o)) end
  depth[f] = m + 1
  return depth[f]
end
local nlib, nbase = 0, 0
local rows = {}
for _, f in ipairs(files) do
  if #problems == 0 then d(f) end
  if library[f] then nlib = nlib + 1 else nbase = nbase + 1 end
  local deps = {}
  for o in pairs(uses[f]) do deps[#deps + 1] = o end
  table.sort(deps)
  rows[#rows + 1] = ("  %-12s %-8s %s"):format(f .. ".c", library[f] and "library" or "shared", table.concat(deps, " "))
end
for _, r in ipairs(rows) do print(r) end
if #problems > 0 then
  for _, m in ipairs(problems) do io.stderr:write("binding_layers: ", m, "\n") end
  os.exit(1)
end
print(("binding_layers: %d libraries (one opener each, calling no other library), %d shared files, no cycle")
  :format(nlib, nbase))
