#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The C layout (make test-format): every line of C in core/, lua/, tests/ and bench/ written or
# changed since .clang-format was introduced must be as clang-format lays it out (git clang-format
# --diff over the lines changed since that commit, the work tree included). Older lines keep their
# hand layout (aligned tables, one-line if/else) until they are changed: no mass reformat.
# FORMAT_BASE=<commit> checks the lines changed since that commit instead; FORMAT_ALL=1 counts the
# lines of every file that clang-format would change (a report, never a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || { echo "format check: clang-format not found (Debian package clang-format: make deps-test)"; exit 1; }
files=$(git ls-files 'core/*.[ch]' 'lua/*.[ch]' 'tests/*.[ch]' 'tests/*.cpp' 'bench/*.c' 'examples/*.c')
if [ -n "${FORMAT_ALL:-}" ]; then
    n=0; for f in $files; do n=$((n + $(clang-format "$f" | diff "$f" - | grep -c '^>' || true))); done
    echo "format check: clang-format would change $n lines of $(echo "$files" | wc -w) files (report only)"
    exit 0
fi
command -v git-clang-format > /dev/null || { echo "format check: git-clang-format not found (package clang-format)"; exit 1; }
base=${FORMAT_BASE:-$(git log --format=%H --diff-filter=A -1 -- .clang-format 2>/dev/null || true)}
[ -n "$base" ] || { echo "format check: .clang-format is not committed yet: nothing to compare with"; exit 0; }
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
    echo "format check: commit $base is not in this clone (shallow?): skipped"; exit 0
fi
changed=$(git diff --name-only "$base" -- $files | tr '\n' ' ')
out=$(git clang-format --diff --extensions c,h,cpp "$base" -- $changed 2>&1 || true)
case "$out" in
    ""|*"no modified files to format"*|*"did not modify any files"*)
        echo "format check: the C lines changed since $(git log --format='%h (%ad)' --date=short -1 "$base") are as .clang-format lays them out ($(echo $changed | wc -w) files)"
        ;;
    *)
        echo "$out" | head -80
        echo "format check FAILED: lines changed since ${base:0:9} are not as .clang-format lays them out; fix with: git clang-format $base"
        exit 1 ;;
esac
