-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — JSON for summaries and trajectories (lf.json).
--
-- encode is our own (small) so that the output is exact and reproducible:
--   * numbers keep full precision: the shortest of %.15g/%.16g/%.17g that reads back to the same
--     double (dkjson uses tostring, i.e. %.14g in Lua 5.4); integers print as integers;
--     NaN and +-inf have no JSON form and become null;
--   * object keys come out sorted, so two runs with the same numbers give the same file;
--   * a table with keys 1..n (n >= 1) and nothing else is an array; an empty table is {} unless it
--     carries json.array_mt ([]); other tables are objects whose keys must be strings or numbers;
--   * lf.vec3 / lf.mat3 (anything with a :totable() method) become arrays; a value with a
--     __tojson metamethod is replaced by what it returns (a Lua value, encoded in turn);
--   * strings must be valid UTF-8; two keys that give the same member name (1 and "1") and
--     non-finite number keys are errors;
--   * functions, threads, other userdata and reference cycles are errors naming the path
--     (e.g. "json.encode: unsupported value of type function at $.runs[2].traj").
-- decode is our own too (no module outside lieflow): strict RFC 8259 JSON; numbers are read by
--   tonumber, which rounds correctly, so that decode(encode(x)) == x for every finite double x and
--   every integer (integers stay integers, "1.0" stays a float); a number beyond the double range
--   ("1e400") is an error; JSON null becomes nil; an empty array carries json.array_mt (so that it
--   encodes back as []); strings: every escape, \uXXXX with surrogate pairs to UTF-8, and control
--   characters or invalid UTF-8 inside them are errors; nesting is limited to max_depth.
local options = require "lieflow.options"
local M = {}

M.array_mt = {__name = "lf.json.array"}
M.null = setmetatable({}, {__name = "lf.json.null", __tojson = function() return nil end})

local function num2str(x)
  if type(x) ~= "number" then error(("json.number: number expected, got %s"):format(type(x)), 2) end
  if x ~= x or x == math.huge or x == -math.huge then return "null" end
  if math.type(x) == "integer" then return string.format("%d", x) end
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return string.format("%.1f", x) end
  local s = ("%.17g"):format(x)
  for _, f in ipairs{"%.15g", "%.16g"} do
    local t = f:format(x)
    if tonumber(t) == x then s = t; break end
  end
  -- a float written with digits only (2^53 and above: "9007199254740992") would read back as an
  -- integer: ".0" keeps it a float
  if s:find("^-?%d+$") then s = s .. ".0" end
  return s
end
M.number = num2str

local escapes = {['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n',
                 ['\r'] = '\\r', ['\t'] = '\\t'}
local function quote(s, path)
  -- JSON text is UTF-8 (RFC 8259 §8.1): other bytes would make the whole file unreadable
  if not utf8.len(s) then error(("json.encode: string is not valid UTF-8 at %s"):format(path), 0) end
  return '"' .. s:gsub('[%c"\\]', function(c) return escapes[c] or ("\\u%04x"):format(c:byte()) end) .. '"'
end

-- Tables are read raw (rawlen, next, rawget): a __len, __index or __pairs of the value can
-- neither lie about its contents nor run (raise, yield) in the middle of encoding.
local function is_array(t)
  local n = rawlen(t)
  if n == 0 then return getmetatable(t) == M.array_mt end
  local count = 0
  for k in next, t do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
    count = count + 1
  end
  return count == n
end

local function key_string(k, path)
  if type(k) == "string" then return k end
  if type(k) == "number" then
    if k ~= k or k == math.huge or k == -math.huge then
      error(("json.encode: object key %s at %s has no JSON form"):format(tostring(k), path), 0)
    end
    return num2str(k)
  end
  error(("json.encode: object key of type %s at %s"):format(type(k), path), 0)
end

M.max_depth = 1000

local function encode(v, out, path, seen, indent, depth)
  if depth > M.max_depth then
    error(("json.encode: nested more than %d levels deep at %s"):format(M.max_depth, path:sub(1, 200) .. (#path > 200 and "..." or "")), 0)
  end
  local tv = type(v)
  if tv == "nil" then out[#out + 1] = "null"; return end
  if tv == "boolean" then out[#out + 1] = tostring(v); return end
  if tv == "number" then out[#out + 1] = num2str(v); return end
  if tv == "string" then out[#out + 1] = quote(v, path); return end
  local mt = getmetatable(v)
  if type(mt) == "table" and rawget(mt, "__tojson") then
    -- not a tail call: v stays in `seen`, so a __tojson that returns v (or leads back to it)
    -- is a reference cycle, not an endless loop
    if seen[v] then error(("json.encode: reference cycle at %s"):format(path), 0) end
    seen[v] = true
    encode(rawget(mt, "__tojson")(v), out, path, seen, indent, depth + 1)
    seen[v] = nil
    return
  end
  if tv == "userdata" then
    local ok, tab = pcall(function() return v:totable() end)
    if ok and type(tab) == "table" then return encode(tab, out, path, seen, indent, depth) end
  end
  if tv ~= "table" then error(("json.encode: unsupported value of type %s at %s"):format(tv, path), 0) end
  if seen[v] then error(("json.encode: reference cycle at %s"):format(path), 0) end
  seen[v] = true
  local nl, pad, pad1 = "", "", ""
  if indent then nl = "\n"; pad = indent:rep(depth); pad1 = indent:rep(depth + 1) end
  if is_array(v) then
    local n = rawlen(v)
    if n == 0 then out[#out + 1] = "[]" else
      -- arrays of plain numbers stay on one line even when indenting
      local flat = true
      for i = 1, n do if type(rawget(v, i)) ~= "number" then flat = false; break end end
      out[#out + 1] = "["
      for i = 1, n do
        if i > 1 then out[#out + 1] = "," end
        if not flat then out[#out + 1] = nl .. pad1 elseif indent and i > 1 then out[#out + 1] = " " end
        encode(rawget(v, i), out, ("%s[%d]"):format(path, i), seen, indent, depth + 1)
      end
      if not flat then out[#out + 1] = nl .. pad end
      out[#out + 1] = "]"
    end
  else
    local keys, names = {}, {}
    for k in next, v do
      local s = key_string(k, path)
      if names[s] ~= nil then -- e.g. 1 and "1": two members with the same name, one value lost
        error(("json.encode: keys %s and %s at %s both become the member name %s"):format(
          type(names[s]) == "string" and ("%q"):format(names[s]) or tostring(names[s]),
          type(k) == "string" and ("%q"):format(k) or tostring(k), path, ("%q"):format(s)), 0)
      end
      keys[#keys + 1] = s; names[s] = k
    end
    table.sort(keys)
    if #keys == 0 then out[#out + 1] = "{}" else
      out[#out + 1] = "{"
      for i, s in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = nl .. pad1 .. quote(s, path) .. (indent and ": " or ":")
        encode(rawget(v, names[s]), out, path .. "." .. s, seen, indent, depth + 1)
      end
      out[#out + 1] = nl .. pad .. "}"
    end
  end
  seen[v] = nil
end

--- json.encode(value [, {indent = true | "  "}]) -> string (see the rules above).
function M.encode(value, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(("json.encode: argument #2 must be an options table {indent = true | \"  \"}, got %s"):format(type(opts)), 2)
  end
  if opts then options.check_keys(opts, {"indent"}, "json.encode") end
  local indent = opts and opts.indent
  if indent == true then indent = "  " end
  if indent ~= nil and indent ~= false and type(indent) ~= "string" then
    error("json.encode: option 'indent' must be true, false or a string", 2)
  end
  local out = {}
  encode(value, out, "$", {}, indent or nil, 0)
  return table.concat(out)
end

-- ------------------------------------------------------------------ decode
local function decode_error(s, pos, what)
  local line = select(2, s:sub(1, pos - 1):gsub("\n", "")) + 1
  error(("json.decode: %s at character %d (line %d)"):format(what, pos, line), 0)
end

local unescape = {['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t'}

local function skip_ws(s, pos) return s:find("[^ \t\r\n]", pos) or #s + 1 end

local function decode_string(s, pos) -- s:sub(pos, pos) == '"'
  local out, i = {}, pos + 1
  while true do
    local j = s:find('["\\%c]', i)
    if not j then decode_error(s, pos, "unterminated string") end
    out[#out + 1] = s:sub(i, j - 1)
    local c = s:sub(j, j)
    if c == '"' then
      local str = table.concat(out)
      if not utf8.len(str) then decode_error(s, pos, "string is not valid UTF-8") end
      return str, j + 1
    elseif c == "\\" then
      local e = s:sub(j + 1, j + 1)
      if unescape[e] then out[#out + 1] = unescape[e]; i = j + 2
      elseif e == "u" then
        local hex = s:match("^%x%x%x%x", j + 2)
        if not hex then decode_error(s, j, "bad \\u escape") end
        local cp = tonumber(hex, 16)
        i = j + 6
        if cp >= 0xD800 and cp <= 0xDBFF then -- a high surrogate: its low half must follow
          local lo = s:match("^\\u([dD][c-fC-F]%x%x)", i)
          if not lo then decode_error(s, j, "unpaired surrogate in \\u escape") end
          cp = 0x10000 + ((cp - 0xD800) << 10) + (tonumber(lo, 16) - 0xDC00)
          i = i + 6
        elseif cp >= 0xDC00 and cp <= 0xDFFF then
          decode_error(s, j, "unpaired surrogate in \\u escape")
        end
        out[#out + 1] = utf8.char(cp)
      else decode_error(s, j, "bad escape") end
    else
      decode_error(s, j, "control character in string")
    end
  end
end

local function decode_number(s, pos)
  local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
  -- the JSON grammar exactly: -? (0 | [1-9] digits) (. digits)? ([eE] [+-]? digits)?
  if not num or not (num:match("^-?0$") or num:match("^-?[1-9]%d*$") or num:match("^-?0[.eE]") or num:match("^-?[1-9]%d*[.eE]"))
     or num:match("%.$") or num:match("%.[eE]") or num:match("[eE][-+]?$") then
    decode_error(s, pos, "bad number")
  end
  local x = tonumber(num)
  if not x then decode_error(s, pos, "bad number") end
  if x ~= x or x == math.huge or x == -math.huge then decode_error(s, pos, "number out of the double range") end
  return x, pos + #num
end

local decode_value

local function decode_array(s, pos, depth)
  local a, n = {}, 0
  pos = skip_ws(s, pos + 1)
  if s:sub(pos, pos) == "]" then return setmetatable(a, M.array_mt), pos + 1 end
  while true do
    local v
    v, pos = decode_value(s, pos, depth + 1)
    n = n + 1
    a[n] = v
    pos = skip_ws(s, pos)
    local c = s:sub(pos, pos)
    if c == "]" then return a, pos + 1 end
    if c ~= "," then decode_error(s, pos, "',' or ']' expected") end
    pos = skip_ws(s, pos + 1)
  end
end

local function decode_object(s, pos, depth)
  local o = {}
  pos = skip_ws(s, pos + 1)
  if s:sub(pos, pos) == "}" then return o, pos + 1 end
  while true do
    if s:sub(pos, pos) ~= '"' then decode_error(s, pos, "member name (a string) expected") end
    local k, v
    k, pos = decode_string(s, pos)
    pos = skip_ws(s, pos)
    if s:sub(pos, pos) ~= ":" then decode_error(s, pos, "':' expected") end
    v, pos = decode_value(s, skip_ws(s, pos + 1), depth + 1)
    o[k] = v
    pos = skip_ws(s, pos)
    local c = s:sub(pos, pos)
    if c == "}" then return o, pos + 1 end
    if c ~= "," then decode_error(s, pos, "',' or '}' expected") end
    pos = skip_ws(s, pos + 1)
  end
end

local literals = {t = {"true", true}, f = {"false", false}, n = {"null", nil}}

function decode_value(s, pos, depth)
  if depth > M.max_depth then decode_error(s, pos, ("nested more than %d levels deep"):format(M.max_depth)) end
  local c = s:sub(pos, pos)
  if c == "{" then return decode_object(s, pos, depth) end
  if c == "[" then return decode_array(s, pos, depth) end
  if c == '"' then return decode_string(s, pos) end
  if c == "-" or c:match("%d") then return decode_number(s, pos) end
  local lit = literals[c]
  if lit and s:sub(pos, pos + #lit[1] - 1) == lit[1] then return lit[2], pos + #lit[1] end
  if c == "" then decode_error(s, pos, "unexpected end of input") end
  decode_error(s, pos, "unexpected character '" .. (c:match("%g") and c or ("\\%d"):format(c:byte())) .. "'")
end

--- json.decode(string) -> value (JSON null becomes nil). Errors say what and where parsing failed.
function M.decode(s)
  if type(s) ~= "string" then error(("json.decode: string expected, got %s"):format(type(s)), 2) end
  local ok, v = pcall(function()
    local value, pos = decode_value(s, skip_ws(s, 1), 0)
    pos = skip_ws(s, pos)
    if pos <= #s then decode_error(s, pos, "text after the value") end
    return value
  end)
  if not ok then error(v, 2) end
  return v
end

return M
