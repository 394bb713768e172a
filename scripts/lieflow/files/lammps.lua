-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — LAMMPS data files (read_data's format): the reader behind lf.read_lammps_data.
--
--   local d = lammps.parse(text, name)   -- name: for messages (the path)
--   d.natoms, d.ntypes, d.box = {xlo, xhi, ylo, yhi, zlo, zhi}, d.masses[type], d.style ("atomic",
--   "molecular", "full"), d.atoms = {{id =, type =, mol =, q =, x = {x, y, z}, image = {ix, iy, iz}}, ...}
--   (in file order), d.velocities[id] = {vx, vy, vz} (absent: nil), d.pair_coeffs[type] = {epsilon, sigma}
--   (a Pair Coeffs section of Lennard-Jones: "type epsilon sigma")
--
-- The header: counts ("N atoms", "N atom types"), the box ("xlo xhi" ...; "xy xz yz" is a triclinic box:
-- refused); the sections Masses, Atoms (the style from the "Atoms # style" comment, or from the number
-- of columns: 5 or 8 atomic, 6 or 9 molecular, 7 or 10 full; image flags are the three optional last
-- integers), Velocities; sections lieflow does not use (Pair Coeffs, Bonds, ...) are skipped. Every
-- error names the file, the line and what was expected.
local M = {}

local function fail(name, line, fmt, ...)
  error(("lf.read_lammps_data: %s%s: %s"):format(name, line and (":" .. line) or "", fmt:format(...)), 0)
end

local STYLES = {atomic = {5, 8}, molecular = {6, 9}, full = {7, 10}}
local SECTIONS = {Masses = true, Atoms = true, Velocities = true, ["Pair Coeffs"] = true}
local SKIPPED = {["PairIJ Coeffs"] = true, ["Bond Coeffs"] = true, ["Angle Coeffs"] = true,
                 ["Dihedral Coeffs"] = true, ["Improper Coeffs"] = true, Bonds = true, Angles = true,
                 Dihedrals = true, Impropers = true}

local function words(s)
  local w = {}
  for x in s:gmatch("%S+") do w[#w + 1] = x end
  return w
end

local function number(name, ln, s, what)
  local v = tonumber(s)
  if not v or v ~= v or math.abs(v) == math.huge then fail(name, ln, "%s is %q, expected a finite number", what, tostring(s)) end
  return v
end

local function integer(name, ln, s, what)
  local v = math.tointeger(tonumber(s))
  if not v then fail(name, ln, "%s is %q, expected an integer", what, tostring(s)) end
  return v
end

-- the header (line 2 on: line 1 is a title) up to the first section keyword: counts and the box into d;
-- returns the line of that keyword
local function parse_header(lines, name, d)
  local i = 2
  while i <= #lines do
    local l = lines[i]:gsub("#.*", "")
    local w = words(l)
    local key = l:match("^%s*(%a[%a ]*%a)%s*$")
    if key and (SECTIONS[key] or SKIPPED[key]) then break end
    if #w == 2 and w[2] == "atoms" then d.natoms = integer(name, i, w[1], "the number of atoms")
    elseif #w == 3 and w[2] == "atom" and w[3] == "types" then d.ntypes = integer(name, i, w[1], "the number of atom types")
    elseif #w == 4 and w[3]:match("^[xyz]lo$") and w[4] == w[3]:sub(1, 1) .. "hi" then
      local a = ({x = 1, y = 3, z = 5})[w[3]:sub(1, 1)]
      d.box[a], d.box[a + 1] = number(name, i, w[1], w[3]), number(name, i, w[2], w[4])
    elseif #w == 6 and w[4] == "xy" then
      fail(name, i, "a triclinic box (xy xz yz) is not supported: lieflow's periodic boxes are orthorhombic")
    end
    i = i + 1
  end
  if not d.natoms then fail(name, nil, "the header has no 'N atoms' line") end
  if not d.ntypes then fail(name, nil, "the header has no 'N atom types' line") end
  for k, what in ipairs{"xlo", "xhi", "ylo", "yhi", "zlo", "zhi"} do
    if not d.box[k] then fail(name, nil, "the header has no '%s' (an orthorhombic box: xlo xhi, ylo yhi, zlo zhi)", what) end
  end
  for a = 1, 3 do
    if not (d.box[2 * a] > d.box[2 * a - 1]) then
      fail(name, nil, "the box's %s extent is empty (%g .. %g)", ({"x", "y", "z"})[a], d.box[2 * a - 1], d.box[2 * a])
    end
  end
  return i
end

local function read_masses(rows, name, d)
  for _, r in ipairs(rows) do
    local ln, w = r[1], r[2]
    if #w ~= 2 then fail(name, ln, "a Masses line is 'type mass', got %d fields", #w) end
    local ty = integer(name, ln, w[1], "the atom type")
    if ty < 1 or ty > d.ntypes then fail(name, ln, "atom type %d outside 1 .. %d", ty, d.ntypes) end
    local m = number(name, ln, w[2], "the mass")
    if not (m > 0) then fail(name, ln, "the mass of type %d is %g, expected a positive number", ty, m) end
    d.masses[ty] = m
  end
end

local function read_pair_coeffs(rows, name, d)
  for _, r in ipairs(rows) do
    local ln, w = r[1], r[2]
    if #w < 3 then fail(name, ln, "a Pair Coeffs line is 'type epsilon sigma', got %d fields", #w) end
    local ty = integer(name, ln, w[1], "the atom type")
    if ty < 1 or ty > d.ntypes then fail(name, ln, "atom type %d outside 1 .. %d", ty, d.ntypes) end
    d.pair_coeffs[ty] = {number(name, ln, w[2], "epsilon"), number(name, ln, w[3], "sigma")}
  end
end

-- the Atoms section (style: its comment, or nil: from the number of columns)
local function read_atoms(rows, name, d, style, at)
  if style and not STYLES[style] then fail(name, at, "atom style '%s' is not supported (atomic, molecular, full)", style) end
  for _, r in ipairs(rows) do
    local ln, w = r[1], r[2]
    if not style then
      for s, n in pairs(STYLES) do if #w == n[1] or #w == n[2] then style = s end end
      if not style then
        fail(name, ln, "an Atoms line has %d fields: no atom style has that many (atomic 5, molecular 6, full 7, each + 3 image flags)", #w)
      end
    end
    local n = STYLES[style]
    if #w ~= n[1] and #w ~= n[2] then fail(name, ln, "an Atoms line of style %s has %d or %d fields, got %d", style, n[1], n[2], #w) end
    local a = {id = integer(name, ln, w[1], "the atom id")}
    local k = 2
    if style ~= "atomic" then a.mol = integer(name, ln, w[k], "the molecule id"); k = k + 1 end
    a.type = integer(name, ln, w[k], "the atom type"); k = k + 1
    if a.type < 1 or a.type > d.ntypes then fail(name, ln, "atom %d has type %d outside 1 .. %d", a.id, a.type, d.ntypes) end
    if style == "full" then a.q = number(name, ln, w[k], "the charge"); k = k + 1 end
    a.x = {number(name, ln, w[k], "x"), number(name, ln, w[k + 1], "y"), number(name, ln, w[k + 2], "z")}
    k = k + 3
    a.image = #w == n[2] and {integer(name, ln, w[k], "image flag x"), integer(name, ln, w[k + 1], "image flag y"),
                              integer(name, ln, w[k + 2], "image flag z")} or {0, 0, 0}
    d.atoms[#d.atoms + 1] = a
  end
  d.style = style
end

local function read_velocities(rows, name, d)
  for _, r in ipairs(rows) do
    local ln, w = r[1], r[2]
    if #w ~= 4 then fail(name, ln, "a Velocities line is 'id vx vy vz', got %d fields", #w) end
    d.velocities[integer(name, ln, w[1], "the atom id")] = {number(name, ln, w[2], "vx"), number(name, ln, w[3], "vy"),
                                                           number(name, ln, w[4], "vz")}
  end
end

-- the data as a whole: counts, ids, masses, velocities of known atoms
local function check(name, d, seen)
  if not seen.Atoms then fail(name, nil, "the Atoms section is missing") end
  if #d.atoms ~= d.natoms then fail(name, nil, "the header says %d atoms, the Atoms section has %d", d.natoms, #d.atoms) end
  local ids = {}
  for _, a in ipairs(d.atoms) do
    if ids[a.id] then fail(name, nil, "atom id %d appears twice", a.id) end
    ids[a.id] = true
    if not d.masses[a.type] then fail(name, nil, "atom type %d has no mass (Masses section)", a.type) end
  end
  for id in pairs(d.velocities) do
    if not ids[id] then fail(name, nil, "the Velocities section has atom %d, which the Atoms section does not", id) end
  end
end

--- Parse the text of a data file.
function M.parse(text, name)
  if type(text) ~= "string" then error("lf.read_lammps_data: the file's text expected", 2) end
  name = name or "data file"
  local lines = {}
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l:gsub("\r$", "") end
  local d = {masses = {}, atoms = {}, velocities = {}, box = {}, pair_coeffs = {}}
  local i = parse_header(lines, name, d)
  local seen = {}
  while i <= #lines do
    local l = lines[i]
    local key, comment = l:match("^%s*(%a[%a ]*%a)%s*#?%s*(%S*)")
    if key and (SECTIONS[key] or SKIPPED[key]) then
      if seen[key] then fail(name, i, "a second %s section", key) end
      seen[key] = true
      local at = i
      i = i + 1
      while i <= #lines and lines[i]:match("^%s*$") do i = i + 1 end -- the blank line after the keyword
      local rows = {}
      while i <= #lines and not lines[i]:match("^%s*$") do
        rows[#rows + 1] = {i, words((lines[i]:gsub("#.*", "")))}
        i = i + 1
      end
      if key == "Masses" then read_masses(rows, name, d)
      elseif key == "Pair Coeffs" then read_pair_coeffs(rows, name, d)
      elseif key == "Atoms" then read_atoms(rows, name, d, comment ~= "" and comment or nil, at)
      elseif key == "Velocities" then read_velocities(rows, name, d) end
    elseif not l:match("^%s*$") then
      fail(name, i, "unexpected line %q (a section keyword: Masses, Atoms, Velocities, ...)", l:sub(1, 40))
    else
      i = i + 1
    end
  end
  check(name, d, seen)
  return d
end

return M
