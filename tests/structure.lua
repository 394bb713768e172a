-- SPDX-License-Identifier: GPL-3.0-or-later
-- The house's rules, read from the code (make test-structure, through tests/structure_check.sh):
--   1. includes name their folder: every #include "x" in core/ and lua/ is "folder/file.h" (or the
--      root header "lieflow.h") and names a file that exists;
--   2. folders in order: a folder includes and calls only itself and the folders below it in the
--      `layers` block of docs/architecture.md (the order is read from there, so that the document
--      and the check cannot disagree); the binding (lua/) includes only public core headers (those
--      core/lieflow.h includes: liblieflow_lua.so links the exported API), and a public header only
--      public ones (the installed headers are a closed set);
--   3. the binding's libraries (lua/lib/*.c) each export one opener declared in lua/lib/open.h and
--      nothing else, call no other library, and only lua/module/ opens them;
--   4. no cycle: neither of includes between the files of core/ and lua/, nor of calls between their
--      units (a unit is a source with its headers: graph/graph_prog.c, graph_prog_internal.h; a call
--      is any use of a function another unit defines, a pointer to it included), nor of requires between
--      the Lua modules of scripts/lieflow/ (also those required lazily inside a function).
-- usage: lua5.4 tests/structure.lua [ROOT]   (exit status 1 on a violation, each named on stderr)
local root = (arg[1] or "."):gsub("/$", "")

local function read(path)
  local f = io.open(root .. "/" .. path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function list(pattern)
  local out = {}
  local p = io.popen(("cd '%s' && ls %s 2>/dev/null"):format(root, pattern))
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  table.sort(out)
  return out
end

local problems = {}
local function problem(fmt, ...) problems[#problems + 1] = fmt:format(...) end

-- C text without comments, string and character literals (names in them do not count)
local function code(s)
  s = s:gsub("/%*.-%*/", function(c) return (c:gsub("[^\n]", " ")) end)
  s = s:gsub("//[^\n]*", "")
  s = s:gsub('"[^"\n]*"', '""'):gsub("'[^'\n]*'", "''")
  return s
end

-- ---------------------------------------------------------------- the layers (docs/architecture.md)
local doc = read("docs/architecture.md") or ""
local block = doc:match("```layers\n(.-)```")
if not block then
  io.stderr:write("structure: docs/architecture.md has no ```layers block (the order of the folders)\n")
  os.exit(1)
end
local rank, ranked = {}, {}
do
  local lines = {}
  for line in block:gmatch("[^\n]+") do lines[#lines + 1] = line end
  for i, line in ipairs(lines) do
    for folder in line:gmatch("(%f[%w]%a+/[%w_/%.]+)") do
      if folder:match("^core/") or folder:match("^lua/") or folder:match("^scripts/") then
        rank[folder] = #lines - i -- the top line ranks highest
        ranked[#ranked + 1] = folder
      end
    end
  end
end
local function tree(f) return f:match("^[^/]+") end
-- the ranked place of a file: its folder (or the file itself, core/lieflow.h)
local function place(path) return rank[path] and path or path:match("^(.*)/[^/]+$") end

-- ---------------------------------------------------------------- C files and units
local cfiles = {}
for _, pat in ipairs{"core/*.h", "core/*/*.[ch]", "core/*/*.def", "lua/*/*.[ch]"} do
  for _, f in ipairs(list(pat)) do cfiles[#cfiles + 1] = f end
end
for _, f in ipairs(cfiles) do
  local p = place(f)
  if not rank[p] then problem("%s: its folder %s is not in the layers block of docs/architecture.md", f, p) end
end
local function unit(path) return (path:gsub("%.[chd]e?f?$", ""):gsub("_internal$", "")) end

local exists = {}
for _, f in ipairs(cfiles) do exists[f] = true end
local function resolve(name)
  if name == "lieflow.h" then return "core/lieflow.h" end
  if name == "base/lieflow_version.h" then return "generated" end
  if exists["core/" .. name] then return "core/" .. name end
  if exists["lua/" .. name] then return "lua/" .. name end
end

-- the public headers: what core/lieflow.h includes (and lua/module/lieflow_lua.h)
local public = {["core/lieflow.h"] = true, ["lua/module/lieflow_lua.h"] = true}
for name in (read("core/lieflow.h") or ""):gmatch('\n#include "([^"]+)"') do
  local r = resolve(name)
  if r and r ~= "generated" then public[r] = true end
end

-- ---------------------------------------------------------------- 1, 2: includes
local src, incl = {}, {}
for _, f in ipairs(cfiles) do
  local text = read(f)
  src[f] = code(text)
  incl[f] = {}
  for name in ("\n" .. text):gmatch('\n%s*#%s*include%s+"([^"]+)"') do
    local r = resolve(name)
    if not name:find("/") and name ~= "lieflow.h" then
      problem('%s: #include "%s" does not name its folder (write "folder/%s")', f, name, name)
    elseif not r then
      problem('%s: #include "%s" names no file of core/ or lua/', f, name)
    elseif r ~= "generated" then
      incl[f][#incl[f] + 1] = r
      local a, b = place(f), place(r)
      if a ~= b and tree(f) == tree(r) and not (rank[a] and rank[b] and rank[b] < rank[a]) then
        problem('%s (%s) includes %s (%s), a folder not below it in the layers of docs/architecture.md', f, a, r, b)
      end
      if tree(f) == "core" and tree(r) == "lua" then problem("%s includes the binding's %s: core knows nothing of Lua", f, r) end
      if tree(f) == "lua" and tree(r) == "core" and not public[r] then
        problem("%s includes %s, which is not public (not in core/lieflow.h): the binding links the exported API only", f, r)
      end
      if public[f] and not public[r] then problem("the public header %s includes %s, which is not public", f, r) end
    end
  end
end

-- ---------------------------------------------------------------- definitions and references
-- external definitions: a line that starts a non-static definition "type name(...) {" at file scope
local owner = {}
for _, f in ipairs(cfiles) do
  if f:match("%.c$") then
    for head, name in ("\n" .. src[f]):gmatch("\n([%a_][%w_ %*]-)[%s%*]([%a_][%w_]*)%s*%b()%s*{") do
      if not head:match("static") and not head:match("LF_INLINE") and not head:match("typedef") and not head:match("^struct")
         and name ~= "if" and name ~= "while" and name ~= "for" and name ~= "switch" then
        owner[name] = f
      end
    end
  end
end

-- the identifiers of f's code inside braces (function bodies, initializers): what it uses
local function references(f)
  local s, depth, out = src[f], 0, {}
  local i = 1
  while i <= #s do
    local c = s:sub(i, i)
    if c == "{" then depth = depth + 1; i = i + 1
    elseif c == "}" then depth = depth - 1; i = i + 1
    else
      local a, b, id = s:find("^([%a_][%w_]*)", i)
      if a then
        if depth > 0 then out[id] = true end
        i = b + 1
      else i = i + 1 end
    end
  end
  return out
end

-- includes between files; references between units (a source with its headers)
local units, uses_call, uses_incl = {}, {}, {}
for _, f in ipairs(cfiles) do
  uses_incl[f] = {}
  for _, r in ipairs(incl[f]) do uses_incl[f][r] = r end
  local u = unit(f)
  if not uses_call[u] then units[#units + 1] = u; uses_call[u] = {} end
  for id in pairs(references(f)) do
    local o = owner[id]
    if o and unit(o) ~= u then
      local v = unit(o)
      uses_call[u][v] = uses_call[u][v] or id
      local a, b = place(f), place(o)
      if a ~= b and tree(f) == tree(o) and not (rank[a] and rank[b] and rank[b] < rank[a]) then
        problem("%s (%s) uses %s of %s (%s), a folder not below it in the layers of docs/architecture.md", f, a, id, o, b)
      end
    end
  end
end

-- ---------------------------------------------------------------- 3: the binding's libraries
local openers = {}
for name in (read("lua/lib/open.h") or ""):gmatch("void (lfb_open_[%w_]+)%s*%(") do openers[name] = true end
local nlib = 0
for _, f in ipairs(cfiles) do
  if f:match("^lua/lib/.*%.c$") then
    nlib = nlib + 1
    local mine = {}
    for name, o in pairs(owner) do if o == f then mine[#mine + 1] = name end end
    table.sort(mine)
    local opener
    for _, name in ipairs(mine) do
      if openers[name] and not opener then opener = name
      else problem("%s is a library and exports %s (a library exports its opener only: make it static)", f, name) end
    end
    if not opener then problem("%s is a library but defines no opener of lua/lib/open.h", f) end
    for id in pairs(references(f)) do
      local o = owner[id]
      if o and o ~= f and o:match("^lua/lib/") then problem("%s calls %s of the library %s: libraries never call each other", f, id, o) end
    end
  end
end
for _, f in ipairs(cfiles) do
  if not f:match("^lua/module/") then
    for id in pairs(references(f)) do
      if openers[id] and owner[id] ~= f then problem("%s calls the opener %s: only lua/module/ opens the libraries", f, id) end
    end
  end
end

-- ---------------------------------------------------------------- 4: cycles
local function cycles(nodes, edges, what, show)
  local state, stack = {}, {}
  local function visit(n)
    state[n] = "open"
    stack[#stack + 1] = n
    local deps = {}
    for m in pairs(edges[n] or {}) do deps[#deps + 1] = m end
    table.sort(deps)
    for _, m in ipairs(deps) do
      if state[m] == "open" then
        local cyc, on = {}, false
        for _, s in ipairs(stack) do
          if s == m then on = true end
          if on then cyc[#cyc + 1] = show(s) end
        end
        cyc[#cyc + 1] = show(m)
        problem("%s cycle: %s (%s)", what, table.concat(cyc, " -> "), edges[n][m])
      elseif not state[m] and edges[m] then
        visit(m)
      end
    end
    stack[#stack] = nil
    state[n] = "done"
  end
  for _, n in ipairs(nodes) do if not state[n] then visit(n) end end
end
cycles(cfiles, uses_incl, "include", function(f) return f end)
cycles(units, uses_call, "call", function(u) return u end)

-- Lua requires: every require of a literal module name, at the top or inside a function
local scripts = {}
for _, f in ipairs(list("scripts/lieflow/*.lua scripts/lieflow/*/*.lua")) do scripts[#scripts + 1] = f end
local modfile, modules, req = {}, {}, {}
for _, f in ipairs(scripts) do
  local m = f:gsub("^scripts/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
  modfile[m] = f
  modules[#modules + 1] = m
end
local nreq = 0
for _, m in ipairs(modules) do
  local f = modfile[m]
  local text = (read(f) or ""):gsub("%-%-%[(=*)%[.-%]%1%]", ""):gsub("%-%-[^\n]*", "")
  req[m] = {}
  for _, pat in ipairs{'require%s*%(?%s*"([%w_%.]+)"', "require%s*%(?%s*'([%w_%.]+)'", 'pcall%(%s*require%s*,%s*"([%w_%.]+)"'} do
    for r in text:gmatch(pat) do
      if modfile[r] and r ~= m then
        req[m][r] = req[m][r] or "require"
        nreq = nreq + 1
        local a, b = place(f), place(modfile[r])
        if a ~= b and rank[a] and rank[b] and rank[b] > rank[a] then
          problem("%s (%s) requires %s (%s), a folder above it in the layers of docs/architecture.md", f, a, r, b)
        end
      end
    end
  end
end
cycles(modules, req, "require", function(m) return modfile[m] end)

-- ---------------------------------------------------------------- report
if #problems > 0 then
  for _, m in ipairs(problems) do io.stderr:write("structure: ", m, "\n") end
  os.exit(1)
end
local nin, ncall = 0, 0
for _, f in ipairs(cfiles) do for _ in pairs(uses_incl[f]) do nin = nin + 1 end end
for _, u in ipairs(units) do for _ in pairs(uses_call[u]) do ncall = ncall + 1 end end
print(("structure: %d folders in order (docs/architecture.md), %d C files in %d units: %d includes and %d call edges, "
  .. "all downward, no cycle; %d binding libraries (one opener each, calling no other library); "
  .. "%d Lua modules, %d requires, no cycle"):format(#ranked, #cfiles, #units, nin, ncall, nlib, #modules, nreq))
