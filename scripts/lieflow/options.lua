-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow.options — strict option tables: an unknown key is an error that names it, suggests the
-- closest valid key ("did you mean") and lists the valid ones. Used by lf.run, lf.order,
-- lf.stress_test, lf.drift, lf.plot, json.encode, ... (the C constructors do the same in
-- lua/shared/state.c, lfb_check_keys). And the helpers of error messages every layer uses: kind,
-- strip_position.
local M = {}

--- options.strip_position(msg) -> an error message without the "file:line: " that luaL_error / error
--- put in front of it.
function M.strip_position(msg)
  msg = tostring(msg)
  -- and "bad argument #2 to 'lieflow.core.integrator'" names the user's function: 'lf.integrator'
  return (msg:gsub("^[^:\n]+:%d+: ", "", 1):gsub("'lieflow%.core%.", "'lf."))
end

--- options.kind(x) -> a value's kind for messages: its metatable's __name (lf.vec3, lf.reverse, ...),
--- read raw (a protected or lying metatable is not consulted), else its type.
function M.kind(x)
  local mt = getmetatable(x)
  if type(mt) == "table" and type(rawget(mt, "__name")) == "string" then return rawget(mt, "__name") end
  return type(x)
end

-- edit distance with transpositions (optimal string alignment), for "did you mean"
local function distance(a, b)
  local d = {}
  for i = 0, #a do d[i] = {[0] = i} end
  for j = 0, #b do d[0][j] = j end
  for i = 1, #a do
    for j = 1, #b do
      local c = a:byte(i) == b:byte(j) and 0 or 1
      d[i][j] = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + c)
      if i > 1 and j > 1 and a:byte(i) == b:byte(j - 1) and a:byte(i - 1) == b:byte(j) then
        d[i][j] = math.min(d[i][j], d[i - 2][j - 2] + 1)
      end
    end
  end
  return d[#a][#b]
end

--- M.check_keys(opts, keys, fn [, level]): an unknown key of the options table is an error naming it,
--- the closest valid key when one is near ("did you mean"), and the valid keys (raw traversal: a
--- metatable cannot hide or add keys). level as for error() counted from the caller of check_keys;
--- 0: no position.
function M.check_keys(opts, keys, fn, level)
  local valid = {}
  for _, k in ipairs(keys) do valid[k] = true end
  local k = next(opts)
  while k ~= nil do
    if not valid[k] then
      local name = type(k) == "string" and k or ("[" .. tostring(k) .. "]")
      local best, bd = nil, math.huge
      if type(k) == "string" then
        for _, v in ipairs(keys) do
          local d = distance(k, v)
          if d < bd then best, bd = v, d end
        end
      end
      local sorted = {}
      for i, v in ipairs(keys) do sorted[i] = v end
      table.sort(sorted)
      error(("%s: unknown option '%s'%s (options: %s)"):format(fn, name,
        (best and bd <= math.max(1, #name // 3)) and (" (did you mean '%s'?)"):format(best) or "",
        table.concat(sorted, ", ")), level == 0 and 0 or (level or 2) + 1)
    end
    k = next(opts, k)
  end
end

return M
