#!/usr/bin/env bash
# The public headers alone (include/tessera/README.md, "The front door"): what `cmake --install`
# installs is include/tessera/*.h and nothing under src/, so every public header must compile on
# its own with only that folder on the include path. Each is copied into a fresh folder and
# compiled alone there (-fsyntax-only): a public header that includes an internal one
# ("partition/candidate.h") or a header it does not carry fails here, naming the header. Every
# installed header must also have its row in the README's front door table, so the table stays the
# list a user reads.
# Usage: public_headers_test.sh SOURCE_DIR CXX
set -euo pipefail
src="$1"
cxx="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/include/tessera"
cp "$src"/include/tessera/*.h "$tmp/include/tessera/"
failed=0
count=0
for h in "$src"/include/tessera/*.h; do
  name="$(basename "$h")"
  count=$((count + 1))
  if ! printf '#include "tessera/%s"\n' "$name" |
       "$cxx" -std=c++20 -fsyntax-only -I "$tmp/include" -x c++ - 2>"$tmp/err.txt"; then
    echo "public_headers_test: tessera/$name does not compile against the public headers alone:" >&2
    head -5 "$tmp/err.txt" >&2
    failed=1
  fi
  if ! grep -q "\`$name\`" "$src/include/tessera/README.md"; then
    echo "public_headers_test: tessera/$name is installed but not in include/tessera/README.md's front door" >&2
    failed=1
  fi
done
if [ "$failed" -ne 0 ]; then exit 1; fi
echo "public_headers_test: $count public headers, each compiles alone: ok"
