-- SPDX-License-Identifier: GPL-3.0-or-later
-- lf.json: encode and decode are lieflow's own (no dkjson), and every double goes through them and
-- back exactly.
local lf = require "lieflow"
local json = lf.json

local function same(x, y) return y == x and math.type(y) == math.type(x) and (x ~= 0 or 1 / x == 1 / y) end

describe("lf.json", function()
  it("decodes without any module outside lieflow (dkjson unavailable)", function()
    local saved_pre, saved = package.preload.dkjson, package.loaded.dkjson
    package.loaded.dkjson = nil
    package.preload.dkjson = function() error("dkjson must not be loaded") end
    local ok, v = pcall(json.decode, '{"a": [1, 2.5, true, null, "x"], "b": {}}')
    package.preload.dkjson, package.loaded.dkjson = saved_pre, saved
    assert.is_true(ok, tostring(v))
    assert.are.same({a = {1, 2.5, true, nil, "x"}, b = {}}, v)
  end)

  it("round-trips every double exactly: 200,000 random bit patterns and the edge cases", function()
    local edge = {0.0, -0.0, 0.1, 1 / 3, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
                  1.7976931348623157e308, -1.7976931348623157e308, 2 ^ 53, 2 ^ 53 + 2, -2 ^ 63, 2 ^ 63, 1e22,
                  1e23, 9007199254740993, 0, 1, -1, math.maxinteger, math.mininteger, 3.0, 123456789.125}
    for _, x in ipairs(edge) do
      local y = json.decode(json.encode(x))
      assert(same(x, y), ("%.17g (%s) came back as %s (%s)"):format(x, math.type(x), tostring(y), math.type(y)))
    end
    math.randomseed(20)
    local n = 0
    for _ = 1, 200000 do
      local x = string.unpack("<d", string.pack("<i8", math.random(math.mininteger, math.maxinteger)))
      if x == x and x ~= math.huge and x ~= -math.huge then
        local s = json.encode({x})
        local y = json.decode(s)[1]
        if not same(x, y) then error(("%.17g -> %s -> %.17g"):format(x, s, y)) end
        n = n + 1
      end
    end
    assert(n > 199000)
  end)

  it("reads strings with every escape and surrogate pairs, and writes them back", function()
    local s = json.decode('"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00"')
    assert.are.equal('a"b\\c/d\b\f\n\r\té😀', s)
    assert.are.equal(s, json.decode(json.encode(s)))
  end)

  it("keeps [] and {} apart, and integers apart from floats", function()
    assert.are.equal('{"a":[],"b":{},"i":1,"f":1.0}', (json.encode(json.decode('{"a":[],"b":{},"i":1,"f":1.0}'))
      :gsub('"f":1.0,"i":1', '"i":1,"f":1.0')))
    assert.are.equal("integer", math.type(json.decode("12")))
    assert.are.equal("float", math.type(json.decode("12.0")))
    assert.are.equal("float", math.type(json.decode("1e2")))
  end)

  it("refuses what is not JSON, saying what and where", function()
    local cases = {
      [""] = "unexpected end of input at character 1", ["[1,]"] = "unexpected character ']' at character 4",
      ["01"] = "bad number", ["1."] = "bad number", ["1e"] = "bad number", ["-"] = "bad number", [".5"] = "unexpected character '.'",
      ["[1 2]"] = "',' or ']' expected at character 4", ['{"a" 1}'] = "':' expected", ["{a: 1}"] = "member name (a string) expected",
      ['"\\x"'] = "bad escape", ["1e400"] = "number out of the double range", ['["\\ud800"]'] = "unpaired surrogate",
      ["nul"] = "unexpected character 'n'", ['"a\1"'] = "control character in string", ['{"a":1}x'] = "text after the value",
      ["[1,\n 2,\n x]"] = "at character 10 (line 3)", ['"\255"'] = "not valid UTF-8", ["NaN"] = "unexpected character 'N'",
      [("["):rep(1100) .. ("]"):rep(1100)] = "nested more than 1000 levels deep",
    }
    for text, want in pairs(cases) do
      local ok, err = pcall(json.decode, text)
      assert.is_false(ok, text)
      assert(tostring(err):find(want, 1, true), ("%q: %s (expected %s)"):format(text:sub(1, 40), tostring(err), want))
    end
    local ok, err = pcall(json.decode, 12)
    assert.is_false(ok)
    assert.truthy(err:find("json.decode: string expected, got number", 1, true))
  end)

  it("a trajectory through to_json and decode keeps every number bit for bit", function()
    local tr = lf.run(lf.stress_system(), {method = "vlv", h = 0.125, T = 5})
    local back = json.decode(tr:to_json())
    for _, c in ipairs(tr.columns) do
      for i, x in ipairs(tr[c]) do assert(same(x, back.data[c][i]), c .. "[" .. i .. "]") end
    end
  end)
end)
