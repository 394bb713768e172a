# SPDX-License-Identifier: GPL-3.0-or-later
# lieflow — `make install PREFIX=...`, the staged public headers, the rockspec (luarocks).
.PHONY: install rockspec rock rock-install

# The public headers as `make install` puts them: flat under include/lieflow/, each include of a
# public header written as the same-folder include the flat copy needs ("model/system.h" ->
# "system.h"), so that a client's -IPREFIX/include reaches only <lieflow/...> (no lieflow header,
# not even error.h, can shadow a system header). Clients built here use this copy too.
$(STAGED_INC)/lieflow/.stamp: $(PUBLIC_HEADERS)
	@rm -rf $(STAGED_INC)/lieflow && mkdir -p $(STAGED_INC)/lieflow
	@for h in $(PUBLIC_HEADERS); do \
	  sed -e 's|^\(#include "\)[a-z]*/\([a-z_0-9]*\.h"\)|\1\2|' $$h > $(STAGED_INC)/lieflow/$${h##*/}; done
	@touch $@

# the Lua modules of scripts/ (their folders kept) and the reference text, into the directory $(1)
define install_scripts
install -d $(1)/lieflow
cd scripts && for f in $(patsubst scripts/%,%,$(filter scripts/%,$(SCRIPTS))); do install -D -m 644 $$f $(1)/$$f; done
install -m 644 $(APIDOC) $(1)/lieflow/
endef

LUA_LMOD := $(PREFIX)/share/lua/5.4
LUA_CMOD := $(PREFIX)/lib/lua/5.4
install: all $(STAGED_INC)/lieflow/.stamp
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/lieflow $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(LUA_CMOD)/lieflow
	install -m 644 $(LIB_A) $(BIND_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO_REAL) $(BIND_SO_REAL) $(DESTDIR)$(PREFIX)/lib/
	cd $(DESTDIR)$(PREFIX)/lib && ln -sf $(notdir $(LIB_SO_REAL)) $(SONAME) && ln -sf $(SONAME) liblieflow.so \
	  && ln -sf $(notdir $(BIND_SO_REAL)) $(BIND_SONAME) && ln -sf $(BIND_SONAME) liblieflow_lua.so
	install -m 644 $(STAGED_INC)/lieflow/*.h $(DESTDIR)$(PREFIX)/include/lieflow/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' lieflow.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/lieflow.pc
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@LUA_LIBS@|$(LUA_LIBS)|g' -e 's|@HDF5_LIBS@|$(HDF5_LIBS)|g' \
	  lieflow-lua.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/lieflow-lua.pc
	install -m 755 $(MOD_SO) $(DESTDIR)$(LUA_CMOD)/lieflow/
	if [ -f $(MPI_SO) ]; then install -m 755 $(MPI_SO) $(DESTDIR)$(LUA_CMOD)/lieflow/; fi
	$(call install_scripts,$(abspath $(DESTDIR)$(LUA_LMOD)))
	install -d $(DESTDIR)$(PREFIX)/share/doc/lieflow
	install -m 644 docs/api.md docs/references.md $(DESTDIR)$(PREFIX)/share/doc/lieflow/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 $(MAN) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 755 $(EXE) $(DESTDIR)$(PREFIX)/bin/
	@echo "lieflow installed in $(PREFIX)."
	@echo "Lua: $(PREFIX)/bin/lieflow needs nothing more (its Lua modules are built in). For a stock lua5.4, set:"
	@echo "  export LUA_PATH=\"$(LUA_LMOD)/?.lua;$(LUA_LMOD)/?/init.lua;;\""
	@echo "  export LUA_CPATH=\"$(LUA_CMOD)/?.so;;\""
	@echo "C: pkg-config lieflow (C API) and lieflow-lua (a program hosting Lua) find the library with"
	@echo "  export PKG_CONFIG_PATH=\"$(PREFIX)/lib/pkgconfig\""
	@echo "  cc prog.c -o prog \$$(pkg-config --cflags --libs lieflow) -Wl,-rpath,\$$(pkg-config --variable=libdir lieflow)"
	@echo "The rpath is how the program finds liblieflow.so at run time; without it, export"
	@echo "LD_LIBRARY_PATH=$(PREFIX)/lib (or, for /usr/local, run ldconfig as root). To link liblieflow.a"
	@echo "instead: cc prog.c -o prog \$$(pkg-config --cflags lieflow) \$$(pkg-config --variable=static_libs lieflow)"

# lieflow-VERSION-1.rockspec is made from lieflow.rockspec.in (kept in the tree: `luarocks make` in a
# checkout reads it; tests/version_check.sh fails when it is stale). luarocks runs `make rock` and
# `make rock-install LUADIR=... LIBDIR=...` (the rocks tree's share/lua/5.4 and lib/lua/5.4).
ROCKSPEC := lieflow-$(VERSION)-1.rockspec
rockspec: $(ROCKSPEC)
$(ROCKSPEC): lieflow.rockspec.in VERSION
	rm -f lieflow-*.rockspec
	sed -e 's/@VERSION@/$(VERSION)/g' $< > $@
rock: $(MOD_SO) $(MPI_SO) $(APIDOC)
rock-install: rock
	install -d $(LIBDIR)/lieflow
	install -m 755 $(MOD_SO) $(LIBDIR)/lieflow/
	if [ -f $(MPI_SO) ]; then install -m 755 $(MPI_SO) $(LIBDIR)/lieflow/; fi
	$(call install_scripts,$(abspath $(LUADIR)))
