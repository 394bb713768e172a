-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow.pretty — how the lieflow REPL shows the results of a line: the executable's l_print
-- (lua/exe/main.c, through lf_repl_format in lua/exe/repl.c) calls M.results while the global `print` is
-- Lua's own; once the user replaces `print`, results go through it, as in `lua`.
--
-- - Values are separated by tabs; a string at the top level is written as is, inside a table it
--   is quoted on one line.
-- - A value with a __tostring metamethod (vec3, mat3, files, ...) is shown by tostring; other
--   tables are expanded: the sequence 1..rawlen(t) first, then the other keys sorted (numbers, strings,
--   booleans, the rest by address), `name = v` for a key that is a Lua name, else `[key] = v`;
--   at most MAX_ITEMS entries, then "…"; deeper than MAX_DEPTH: {…}; a table already on the path
--   being printed: {<cycle>}.
-- - A single result that is an array of records (plain tables whose keys are all strings, like
--   lf.methods()) is shown as an aligned table: a row per record, a column per key (see
--   `records`).
--
-- Only raw access (rawget, rawlen, next, the metatable itself): printing runs no __index, __len
-- or __pairs of the values shown, and sees through __metatable. Only __tostring (and __name)
-- run, through tostring.
local M = {}

local MAX_DEPTH = 4    -- tables nested deeper print as {…}
local MAX_ITEMS = 40   -- entries shown per table before "…"
local MAX_ROWS = 100   -- rows shown of an array of records
local MAX_COLS = 24    -- more distinct keys than this: not printed as a table of records
local CELL_WIDTH = 40  -- a cell of a table of records is cut after this many characters
local ELLIPSIS = "\u{2026}"

-- The functions used, taken when the module loads: a REPL session that replaces `string`,
-- `table` or `debug` keeps its printer.
local concat, pack, sort = table.concat, table.pack, table.sort
local byte, find, format, gmatch, gsub, rep, sub =
  string.byte, string.find, string.format, string.gmatch, string.gsub, string.rep, string.sub
local getmetatable = debug and debug.getmetatable or getmetatable
local math_type = math.type
local ipairs, next, rawget, rawlen, select, tostring, type = ipairs, next, rawget, rawlen, select, tostring, type

local KEYWORDS = {}
for w in gmatch("and break do else elseif end false for function goto if in local nil not or repeat "
               .. "return then true until while", "%a+") do
  KEYWORDS[w] = true
end

-- Is s usable as `s = ...` in a table constructor (a Lua name, not a keyword)?
local function is_name(s)
  return find(s, "^[A-Za-z_][A-Za-z0-9_]*$") ~= nil and not KEYWORDS[s]
end

-- The value's __tostring, read from its metatable without running any code.
local function has_tostring(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and rawget(mt, "__tostring") ~= nil
end

local ESCAPES = {['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t"}

-- A string as a Lua literal on one line: other control characters as \ddd, bytes >= 128 as they are.
local function quoted(s)
  return '"' .. gsub(s, '[\0-\31"\\\127]', function(c)
    return ESCAPES[c] or format("\\%03d", byte(c))
  end) .. '"'
end

-- Display width in UTF-8 code points (bytes that do not continue a sequence).
local function u8_width(s)
  return select(2, gsub(s, "[^\128-\191]", ""))
end

-- The first `cols` code points of s.
local function u8_prefix(s, cols)
  local count = 0
  for at in gmatch(s, "()[^\128-\191]") do
    if count == cols then return sub(s, 1, at - 1) end
    count = count + 1
  end
  return s
end

-- ------------------------------------------------------------------ values and tables

-- Sort order of table keys: numbers, strings, booleans, then the rest by address.
local RANK = {number = 0, string = 1, boolean = 2}

-- The address of a table, function, userdata or thread as hexadecimal text ("%p"), compared
-- as a number: shorter text first.
local function address_less(a, b)
  local pa, pb = format("%p", a), format("%p", b)
  if #pa ~= #pb then return #pa < #pb end
  return pa < pb
end

local function key_less(a, b)
  local ra, rb = RANK[type(a)] or 3, RANK[type(b)] or 3
  if ra ~= rb then return ra < rb end
  if ra <= 1 then return a < b end
  if ra == 2 then return not a and b end
  return address_less(a, b)
end

-- The keys of t that are not in its sequence part 1..n, sorted.
local function other_keys(t, n)
  local keys = {}
  for k in next, t do
    if not (math_type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  sort(keys, key_less)
  return keys
end

local value

-- `name = ` or `[key] = ` for a key.
local function key_text(k)
  if type(k) == "string" then
    return is_name(k) and k .. " = " or "[" .. quoted(k) .. "] = "
  end
  return "[" .. tostring(k) .. "] = "
end

-- {1, 2, 3} then the sorted `key = value` pairs, cut after MAX_ITEMS entries. `seen` holds the
-- tables on the path from the top (cycle detection); out is the array of pieces.
local function table_text(t, depth, seen, out)
  if seen[t] then out[#out + 1] = "{<cycle>}" return end
  if next(t) == nil then out[#out + 1] = "{}" return end
  if depth >= MAX_DEPTH then out[#out + 1] = "{" .. ELLIPSIS .. "}" return end
  seen[t] = true
  out[#out + 1] = "{"
  local n, count = rawlen(t), 0
  for i = 1, n do
    if count == MAX_ITEMS then break end
    if count > 0 then out[#out + 1] = ", " end
    value(rawget(t, i), depth + 1, false, seen, out)
    count = count + 1
  end
  local keys = other_keys(t, n)
  for _, k in ipairs(keys) do
    if count == MAX_ITEMS then break end
    if count > 0 then out[#out + 1] = ", " end
    out[#out + 1] = key_text(k)
    value(rawget(t, k), depth + 1, false, seen, out)
    count = count + 1
  end
  if n + #keys > count then out[#out + 1] = ", " .. ELLIPSIS end
  out[#out + 1] = "}"
  seen[t] = nil
end

-- Append the text of v to out. Strings are raw at the top level and quoted inside tables; values
-- with __tostring use it; other tables are expanded.
function value(v, depth, top, seen, out)
  local tv = type(v)
  if tv == "string" then
    out[#out + 1] = top and v or quoted(v)
  elseif tv == "table" and not has_tostring(v) then
    table_text(v, depth, seen, out)
  else
    out[#out + 1] = tostring(v)
  end
end

-- v on one line as inside a table, starting at the given depth.
local function inline(v, depth)
  local out = {}
  value(v, depth, false, {}, out)
  return concat(out)
end

-- ------------------------------------------------------------------ arrays of records

-- The text of a cell: a printable string as it is, numbers and booleans by tostring, anything
-- else on one line as inside a table (tables two levels deep at most); a multi-line __tostring
-- (mat3) on one line with its indentation folded; cut to CELL_WIDTH characters.
local function cell_text(v)
  local tv, s = type(v)
  if tv == "nil" then
    return ""
  elseif tv == "string" then
    s = find(v, "[\0-\31\127]") and inline(v, 0) or v
  elseif tv == "number" or tv == "boolean" then
    s = tostring(v)
  else
    s = inline(v, MAX_DEPTH - 2)
  end
  s = gsub(s, "\n *", " ")
  if u8_width(s) > CELL_WIDTH then s = u8_prefix(s, CELL_WIDTH - 1) .. ELLIPSIS end
  return s
end

-- The column names of an array of records t[1..n]: every key of the first MAX_ROWS records, in
-- order of appearance. nil if t is not such an array: keys other than 1..n, an element that is
-- not a plain table (or has __tostring), a record key that is not a string, more than MAX_COLS
-- names, or no name at all.
local function record_columns(t, n)
  for k in next, t do
    if not (math_type(k) == "integer" and k >= 1 and k <= n) then return nil end
  end
  local names, index = {}, {}
  for i = 1, n do
    local r = rawget(t, i)
    if type(r) ~= "table" or has_tostring(r) then return nil end
    if i <= MAX_ROWS then
      for k in next, r do
        if type(k) ~= "string" then return nil end
        if not index[k] then
          if #names == MAX_COLS then return nil end
          names[#names + 1] = k
          index[k] = true
        end
      end
    end
  end
  return #names > 0 and names or nil
end

-- Kinds of columns, in the order they are shown; narrower columns first within a kind.
local NAME, TITLE, NUMBERS, TEXT, BOOLEANS = 0, 1, 2, 3, 4

-- The columns, in order of appearance: {name, index, width (of the widest cell or the name), kind,
-- right (numbers: right-aligned)}; and the texts of the cells, cells[row][index].
local function fill_columns(t, names, rows)
  local cols, cells = {}, {}
  for k, name in ipairs(names) do
    cols[k] = {name = name, index = k, width = u8_width(name)}
  end
  for i = 1, rows do
    local r, line = rawget(t, i), {}
    for k, c in ipairs(cols) do
      local v = rawget(r, c.name)
      local tv = type(v)
      local kind = tv == "number" and NUMBERS or tv == "boolean" and BOOLEANS or TEXT
      if tv ~= "nil" then c.kind = (c.kind == nil or c.kind == kind) and kind or TEXT end
      line[k] = cell_text(v)
      local w = u8_width(line[k])
      if w > c.width then c.width = w end
    end
    cells[i] = line
  end
  for _, c in ipairs(cols) do
    c.right = c.kind == NUMBERS
    if c.name == "name" or c.name == "id" then
      c.kind = NAME
    elseif c.name == "title" then
      c.kind = TITLE
    elseif c.kind == nil then
      c.kind = TEXT
    end
  end
  return cols, cells
end

local function column_before(a, b)
  if a.kind ~= b.kind then return a.kind < b.kind end
  if a.width ~= b.width then return a.width < b.width end
  return a.name < b.name
end

-- One line of the table: the row number (or "#") right-aligned in iw, then the shown cells
-- (texts[k] for the column order[k]) padded to their widths; no trailing blanks.
local function record_line(first, iw, order, texts)
  local parts = {rep(" ", iw - #first), first}
  for k, c in ipairs(order) do
    if c.shown then
      local s = texts[k]
      local pad = rep(" ", c.width - u8_width(s))
      parts[#parts + 1] = "  "
      parts[#parts + 1] = c.right and pad .. s or s .. pad
    end
  end
  return (gsub(concat(parts), " +$", ""))
end

-- An array t[1..n] of records as a table (see M.results); nil if t is not such an array.
-- Columns: name/id first, title, then numbers, text, booleans, narrow first; those that do not
-- fit in `width` characters (the first always does) are left out and named below the table.
local function records(t, width)
  local n = rawlen(t)
  if n < 1 then return nil end
  local names = record_columns(t, n)
  if not names then return nil end
  local rows = n < MAX_ROWS and n or MAX_ROWS
  local cols, cells = fill_columns(t, names, rows)
  local order = {}
  for k, c in ipairs(cols) do order[k] = c end
  sort(order, column_before)
  local iw = #tostring(rows)
  local used, hidden = iw, {}
  for k, c in ipairs(order) do
    c.shown = k == 1 or used + 2 + c.width <= width
    if c.shown then used = used + 2 + c.width else hidden[#hidden + 1] = c.name end
  end
  local header, lines = {}, {}
  for k, c in ipairs(order) do header[k] = c.name end
  lines[1] = record_line("#", iw, order, header)
  for i = 1, rows do
    local texts = {}
    for k, c in ipairs(order) do texts[k] = cells[i][c.index] end
    lines[i + 1] = record_line(tostring(i), iw, order, texts)
  end
  if n > rows then lines[#lines + 1] = format("%s (%d more rows)", ELLIPSIS, n - rows) end
  if #hidden > 0 then
    lines[#lines + 1] = "(wider than the terminal, not shown: " .. concat(hidden, ", ") .. ")"
  end
  return concat(lines, "\n")
end

-- The text the REPL prints for the results of a line (its values ...), without the final
-- newline; width: the terminal's width in characters (a huge number when stdout is not a
-- terminal), the limit of an array of records' columns.
function M.results(width, ...)
  local v = pack(...)
  if v.n == 1 and type(v[1]) == "table" and not has_tostring(v[1]) then
    local s = records(v[1], width)
    if s then return s end
  end
  local out = {}
  for i = 1, v.n do
    if i > 1 then out[#out + 1] = "\t" end
    value(v[i], 0, true, {}, out)
  end
  return concat(out)
end

return M
