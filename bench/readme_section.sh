#!/usr/bin/env bash
# bench/readme_section.sh RESULTS.md README.md: copy RESULTS.md into the
# README between the <!-- bench:start --> and <!-- bench:end --> markers
# (headings one level down, the chart's path from the top directory), so
# the README's benchmark section is generated, never typed.
set -euo pipefail
results=$1 readme=$2
if ! grep -q '<!-- bench:start -->' "$readme" || ! grep -q '<!-- bench:end -->' "$readme"; then
  echo "bench: $readme has no <!-- bench:start --> ... <!-- bench:end --> markers" >&2
  exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xs-readme.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
sed -e 's/^#/###/' -e 's|](ratios.svg)|](bench/ratios.svg)|' "$results" >"$tmp/section.md"
awk -v section="$tmp/section.md" '
  /<!-- bench:start -->/ { print; while ((getline line < section) > 0) print line; skip = 1; next }
  /<!-- bench:end -->/ { skip = 0 }
  !skip' "$readme" >"$tmp/README.md"
cat "$tmp/README.md" >"$readme"
