#!/usr/bin/env bash
# make install into a temporary DESTDIR with PREFIX=/usr: the installed
# binary runs a program (it finds the runtime where install put it), and the
# man page and the bash completion are installed where man and
# bash-completion look for them; make uninstall removes what install put.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/../lib.sh"
cd "$XS_ROOT" || exit 1
stage=$SCRATCH/stage
if make -s install DESTDIR="$stage" PREFIX=/usr O="$XS_BUILD" >"$SCRATCH/make.out" 2>&1; then ok "make install DESTDIR=... PREFIX=/usr"
else fail "make install DESTDIR=... PREFIX=/usr" "$(tail -n 5 "$SCRATCH/make.out")"; fi
for f in usr/bin/exitscope usr/lib/exitscope/libexitscope.so usr/lib/exitscope/exitscope-ld usr/include/exitscope.h \
         usr/share/man/man1/exitscope.1 usr/share/bash-completion/completions/exitscope; do
  [ -f "$stage/$f" ] && ok "installed /$f" || fail "installed /$f"
done
cmp -s docs/exitscope.1 "$stage/usr/share/man/man1/exitscope.1" && ok "the installed man page is docs/exitscope.1" ||
  fail "the installed man page is docs/exitscope.1"
if command -v mandoc >/dev/null; then
  mandoc -T utf8 "$stage/usr/share/man/man1/exitscope.1" 2>/dev/null | grep -q 'exitscope run' &&
    ok "the installed man page renders" || fail "the installed man page renders"
fi
reg=$(bash -c 'source "$1"; complete -p exitscope' _ "$stage/usr/share/bash-completion/completions/exitscope" 2>&1)
expect_eq "the installed completion registers for exitscope" "complete -F _exitscope exitscope" "$reg"

# the installed binary, moved away from the build tree, runs a program
mkdir -p "$SCRATCH/out"
"$stage/usr/bin/exitscope" run -o "$SCRATCH/out" -- "$T/tt_count_getppid" >"$SCRATCH/o" 2>"$SCRATCH/e"; st=$?
rec=$(ls "$SCRATCH"/out/exitscope-*.jsonl 2>/dev/null | head -n 1)
getppid=$([ -n "$rec" ] && tail -n 1 "$rec" | jq '.total.syscalls.getppid.calls // 0')
if [ "$st" -eq 0 ] && [ "${getppid:-0}" -gt 0 ]; then ok "the installed exitscope runs a program (getppid calls: $getppid)"
else fail "the installed exitscope runs a program" "status $st" "$(head -n 3 "$SCRATCH/e")"; fi
maps=$("$stage/usr/bin/exitscope" run -o "$SCRATCH/out" -- /bin/cat /proc/self/maps 2>/dev/null | grep -o '/[^ ]*libexitscope.so' | head -n 1)
expect_eq "the program has the installed runtime mapped" "$(cd "$stage/usr/lib/exitscope" && pwd -P)/libexitscope.so" "$maps"
# a static program (Debian's busybox-static) through the installed
# exitscope-ld: its maps name the installed loader
ld=$("$stage/usr/bin/exitscope" run -o "$SCRATCH/out" -- /bin/busybox cat /proc/self/maps 2>/dev/null | grep -o '/[^ ]*exitscope-ld' | head -n 1)
expect_eq "a static program runs through the installed exitscope-ld" "$(cd "$stage/usr/lib/exitscope" && pwd -P)/exitscope-ld" "$ld"
v=$("$stage/usr/bin/exitscope" --version)
expect_eq "the installed binary's --version" "$("$XS" --version)" "$v"

make -s uninstall DESTDIR="$stage" PREFIX=/usr O="$XS_BUILD" >/dev/null 2>&1
left=$(find "$stage" -type f | sed "s|^$stage||")
expect_eq "make uninstall removes every installed file" "" "$left"
