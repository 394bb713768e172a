-- SPDX-License-Identifier: GPL-3.0-or-later
-- README.md is the front door, docs/*.md the rest of the documentation:
-- (a) the README's first experiment is examples/first.lua (which make test runs with the other
--     examples), shown whole;
-- (b) the README stays short (it links into docs/ for everything else);
-- (c) every relative link and image of README.md and docs/*.md points to a file that exists, and
--     every #anchor to a heading of that file (GitHub's anchors: lower case, punctuation dropped,
--     spaces as hyphens, -1, -2, ... for repeated headings).
-- (The README's build lines for embedding are checked by tests/install_test.sh, which runs them.)
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local ROOT = here .. "/../.."

local read = require("testlib").read

local function lines(s)
  local t = {}
  for l in (s .. "\n"):gmatch("(.-)\n") do t[#t + 1] = l end
  if t[#t] == "" then t[#t] = nil end
  return t
end

-- the markdown files: README.md and docs/*.md (found with ls: no list kept here)
local function md_files()
  local files = {"README.md"}
  local p = assert(io.popen("ls '" .. ROOT .. "/docs'"))
  for name in p:lines() do
    if name:match("%.md$") then files[#files + 1] = "docs/" .. name end
  end
  p:close()
  return files
end

-- the non-ASCII characters GitHub drops from anchors (punctuation and symbols met in headings)
local DROP = {}
for _, c in ipairs{"–", "—", "§", "…", "×", "·", "’", "‘", "“", "”", "→", "≤", "≥"} do DROP[c] = true end

local function slug(text)
  text = text:gsub("!?%[([^%]]*)%]%([^)]*%)", "%1") -- a link counts by its text
  local out = {}
  for _, cp in utf8.codes(text) do
    local ch = utf8.char(cp)
    if cp < 128 then
      if ch:match("[%w_%- ]") then out[#out + 1] = ch:lower() end
    elseif not DROP[ch] then
      out[#out + 1] = ch
    end
  end
  return (table.concat(out):gsub(" ", "-"))
end

-- the anchors of a file's headings (outside code blocks), with GitHub's suffixes for repeats
local anchors_cache = {}
local function anchors(path)
  if anchors_cache[path] then return anchors_cache[path] end
  local set, seen, fence = {}, {}, false
  for _, l in ipairs(lines(read(ROOT .. "/" .. path) or "")) do
    if l:match("^```") then fence = not fence
    elseif not fence then
      local h = l:match("^#+%s+(.-)%s*$")
      if h then
        local s = slug(h)
        local a = seen[s] and (s .. "-" .. seen[s]) or s
        seen[s] = (seen[s] or 0) + 1
        set[a] = true
      end
    end
  end
  anchors_cache[path] = set
  return set
end

local function normalize(path)
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." and #parts > 0 and parts[#parts] ~= ".." then parts[#parts] = nil
    elseif part ~= "." then parts[#parts + 1] = part end
  end
  return table.concat(parts, "/")
end

describe("README.md", function()
  local readme = assert(read(ROOT .. "/README.md"))

  it("shows examples/first.lua whole as its first experiment", function()
    local section = readme:match("\n## A first experiment\n(.-)\n## ")
    assert(section, "the README has no section '## A first experiment'")
    local block = section:match("```lua\n(.-)```")
    assert(block, "the first experiment has no ```lua block")
    local file = assert(read(ROOT .. "/examples/first.lua"))
    file = file:gsub("^%-%- SPDX%-License%-Identifier:[^\n]*\n", "")
    assert.are.equal(file, block)
  end)

  it("fits on a few screens (at most 200 lines)", function()
    local n = #lines(readme)
    assert(n <= 200, ("README.md has %d lines: move the details into docs/"):format(n))
  end)
end)

describe("the links of README.md and docs/*.md", function()
  it("point to files that exist, and anchors to headings", function()
    local bad, count = {}, 0
    for _, file in ipairs(md_files()) do
      local dir = file:match("^(.*)/[^/]*$") or ""
      local fence = false
      for i, l in ipairs(lines(assert(read(ROOT .. "/" .. file)))) do
        if l:match("^%s*```") then fence = not fence
        elseif not fence then
          local prose = l:gsub("`[^`]*`", "") -- not inside code spans
          for target in prose:gmatch("%]%(([^)%s]+)%)") do
            if not target:match("^%a[%w+.-]*:") then -- not http:, https:, mailto:
              count = count + 1
              local path, anchor = target:match("^([^#]*)#?(.*)$")
              local dest = path == "" and file or normalize((dir ~= "" and dir .. "/" or "") .. path)
              local where = ("%s:%d: %s"):format(file, i, target)
              if not read(ROOT .. "/" .. dest) and not os.rename(ROOT .. "/" .. dest, ROOT .. "/" .. dest) then
                bad[#bad + 1] = where .. " (no file " .. dest .. ")"
              elseif anchor ~= "" and dest:match("%.md$") and not anchors(dest)[anchor] then
                bad[#bad + 1] = where .. " (no heading of " .. dest .. " has the anchor #" .. anchor .. ")"
              end
            end
          end
        end
      end
    end
    assert(count > 50, "only " .. count .. " relative links found")
    assert(#bad == 0, ("%d broken link(s):\n  %s"):format(#bad, table.concat(bad, "\n  ")))
  end)
end)
