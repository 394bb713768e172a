# SPDX-License-Identifier: GPL-3.0-or-later
# lieflow — Debian packages. `make deps` installs every set; deps-build, deps-run, deps-test,
# deps-opt one set each. As root with apt-get; otherwise the command to run is printed. (A machine
# without dpkg: nothing checked.) `$(call install_missing,PACKAGES)` serves the other files too.

define install_missing
@command -v dpkg >/dev/null || { echo "lieflow: no dpkg: install these (or your system's equivalents) yourself: $(1)"; exit 0; }; \
missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
if [ -n "$$missing" ]; then \
  if [ "$$(id -u)" = 0 ]; then \
    echo "lieflow: installing missing Debian packages:$$missing"; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing || exit 1; \
  else \
    echo "lieflow: missing Debian packages. Run:"; \
    echo "  sudo apt-get update && sudo apt-get install -y$$missing"; exit 1; \
  fi; \
fi
endef

.PHONY: deps deps-build deps-run deps-test deps-opt
deps: deps-build deps-run deps-test deps-opt
deps-build:
	$(call install_missing,$(DEPS_BUILD))
deps-run:
	$(call install_missing,$(DEPS_RUN))
deps-test:
	$(call install_missing,$(DEPS_TEST))
deps-opt:
	$(call install_missing,$(DEPS_OPT))
