#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The license (make test-license): LICENSE is the GNU GPL version 3; every source file (C, headers,
# Lua, shell, the Makefile, the .pc templates, the rockspec, the man page) carries an SPDX line in
# its first three lines naming GPL-3.0-or-later; the file that follows Lua's lua.c (lua/exe/main.c)
# also names MIT and keeps Lua's copyright notice and permission text.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "license check FAILED: $1"; exit 1; }
[ -f LICENSE ] || fail "no LICENSE file"
head -3 LICENSE | grep -q 'GNU GENERAL PUBLIC LICENSE' && grep -q '^                       Version 3, 29 June 2007' LICENSE \
    || fail "LICENSE is not the text of the GNU GPL version 3"
echo "ok   - LICENSE is the GNU General Public License, version 3"
n=0
missing=""
while IFS= read -r f; do
    n=$((n + 1))
    head -3 "$f" | grep -qE 'SPDX-License-Identifier: GPL-3\.0-or-later( AND MIT)?( \*/)?$' || missing="$missing $f"
done < <(find core lua scripts tests examples bench docs tools .ci mk Makefile .clang-format ./*.pc.in ./*.rockspec -type f \
           \( -name '*.c' -o -name '*.h' -o -name '*.def' -o -name '*.lua' -o -name '*.sh' -o -name '*.cpp' -o -name '*.py' \
              -o -name '*.1' -o -name '*.in' -o -name '*.rockspec' -o -name Makefile -o -name run -o -name '*.mk' -o -name .clang-format \) 2>/dev/null | sort)
[ -z "$missing" ] || fail "no SPDX-License-Identifier line in:$missing"
echo "ok   - $n source files carry SPDX-License-Identifier: GPL-3.0-or-later"
grep -q 'SPDX-License-Identifier: GPL-3.0-or-later AND MIT' lua/exe/main.c && grep -q 'Copyright (C) 1994-2022 Lua.org, PUC-Rio' lua/exe/main.c \
    && grep -q 'Permission is hereby granted, free of charge' lua/exe/main.c || fail "lua/exe/main.c lost Lua's MIT notice"
echo "ok   - lua/exe/main.c (it follows lua.c) keeps Lua's MIT copyright and permission notice"
echo "license check: 3 checks passed"
