-- SPDX-License-Identifier: GPL-3.0-or-later
-- The rockspec of lieflow, made from lieflow.rockspec.in by `make rockspec` (the version from VERSION).
-- In a checkout: `luarocks make` builds the Lua module (lieflow/core.so, with the C library linked
-- in) with the Makefile and installs it with the pure-Lua modules into the rocks tree.
rockspec_format = "3.0"
package = "lieflow"
version = "0.2.0-1"
source = {
  url = "git+file:///lieflow.git", -- (no public repository yet: build from a checkout with `luarocks make`)
  tag = "v0.2.0",
}
description = {
  summary = "Geometric numerical integration on Lie groups (rigid bodies, spheres, Lie-group ODEs)",
  detailed = [[
A C11 library with a Lua 5.4 module: structure-preserving integrators (Lie-Newmark, Lie-Verlet,
RKMK, Crouch-Grossman, discrete gradients, RATTLE on spheres, compositions), models written in Lua
compiled to native code, trajectories to CSV, JSON and HDF5, plots with gnuplot, ensembles.]],
  license = "GPL-3.0-or-later",
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
external_dependencies = {
  GSL = {header = "gsl/gsl_errno.h", library = "gsl"},
}
build = {
  type = "make",
  build_target = "rock",
  build_variables = {
    LUA_INC = "-I$(LUA_INCDIR)",
    GSL_LIBS = "-L$(GSL_LIBDIR) -lgsl -lgslcblas -lm -pthread -ldl",
  },
  install_target = "rock-install",
  install_variables = {
    LUADIR = "$(LUADIR)",
    LIBDIR = "$(LIBDIR)",
  },
}
