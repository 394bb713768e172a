-- SPDX-License-Identifier: GPL-3.0-or-later
-- The installed API is documented and tested (tests/abi_check.sh, make test-abi): every function
-- that liblieflow.so exports (the names, one a line, in EXPORTED)
--   - is declared in an installed header (HEADER_DIR/*.h) in a paragraph (lines between blank
--     lines) that holds a comment: a declaration without a word of what it computes fails;
--   - is called by a test: its name appears in the code (comments and strings removed) of a C test
--     (tests/c/*.c), the C++ client (tests/cxx/client.cpp) or the C API fuzzer (tests/fuzz/fuzz_capi.c).
-- usage: lua5.4 tests/api_check.lua EXPORTED HEADER_DIR ROOT   (exit status 1 on a finding)
local exported_file, header_dir, root = arg[1], arg[2], arg[3]

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
local function ls(pattern)
  local out, p = {}, io.popen("ls " .. pattern .. " 2>/dev/null")
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end
local function code(s)
  s = s:gsub("/%*.-%*/", function(c) return (c:gsub("[^\n]", " ")) end)
  return (s:gsub("//[^\n]*", ""):gsub('"[^"\n]*"', '""'))
end

local exported = {}
for name in read(exported_file):gmatch("[%w_]+") do exported[#exported + 1] = name end

-- the paragraph of each declaration, and whether it holds a comment
local documented, declared_in = {}, {}
for _, h in ipairs(ls(header_dir .. "/*.h")) do
  local text = read(h)
  for para in (text .. "\n\n"):gmatch("(.-)\n[ \t]*\n") do
    local has_comment = para:find("/%*") ~= nil or para:find("//") ~= nil
    for name in code(para):gmatch("([%a_][%w_]*)%s*%(") do
      declared_in[name] = declared_in[name] or h:match("[^/]+$")
      if has_comment then documented[name] = true end
    end
  end
end

local tests = {}
for _, pat in ipairs{"/tests/c/*.c", "/tests/c/*.h", "/tests/cxx/*.cpp", "/tests/fuzz/fuzz_capi.c"} do
  for _, f in ipairs(ls(root .. pat)) do tests[#tests + 1] = code(read(f)) end
end
local all_tests = table.concat(tests, "\n")

local undocumented, untested = {}, {}
for _, name in ipairs(exported) do
  if not documented[name] then
    undocumented[#undocumented + 1] = name .. (declared_in[name] and (" (" .. declared_in[name] .. ")") or " (declared nowhere)")
  end
  if not all_tests:find("%f[%w_]" .. name .. "%f[^%w_]") then untested[#untested + 1] = name end
end
local bad = false
if #undocumented > 0 then
  io.stderr:write("api check: exported functions whose declaration has no comment in its paragraph: ",
                  table.concat(undocumented, ", "), "\n")
  bad = true
end
if #untested > 0 then
  io.stderr:write("api check: exported functions no test calls (tests/c, tests/cxx, tests/fuzz/fuzz_capi.c): ",
                  table.concat(untested, ", "), "\n")
  bad = true
end
if bad then os.exit(1) end
print(("api check: the %d exported functions are documented in their headers and called by a test"):format(#exported))
