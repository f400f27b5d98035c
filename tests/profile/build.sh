#!/usr/bin/env bash
# Build the perf.data writer's test programs into DIR (default
# build/profile-test): the writer with the project's runtime flags plus
# -Werror (it must compile cleanly as runtime code), prof_target with frame
# pointers (leaf ones too, so fp call chains keep every caller), and the
# library prof_target loads and deletes.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build/profile-test}
cd "$root"
mkdir -p "$out"
CC=${CC:-cc}
RT_FLAGS=(-O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -std=gnu11
  -D_GNU_SOURCE -fPIC -fvisibility=hidden -fno-stack-protector -fno-builtin -Iinclude -Isrc
  "-I${XS_BUILD:-$root/build}/gen" -Werror)
for f in perfdata maps; do
  $CC "${RT_FLAGS[@]}" -c "src/runtime/profile/$f.c" -o "$out/$f.o"
done
$CC -O2 -g -fPIC -c src/runtime/boundary.S -o "$out/boundary.o"
$CC -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -Wall -Wextra -std=gnu11 \
  -D_GNU_SOURCE -Isrc -o "$out/prof_target" tests/profile/prof_target.c \
  "$out/perfdata.o" "$out/maps.o" "$out/boundary.o" -lpthread
$CC -O1 -g -fPIC -shared -fno-omit-frame-pointer -o "$out/libxsdel.so" tests/profile/prof_deleted_lib.c
