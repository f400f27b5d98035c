#!/bin/sh
# Generate the x86-64 system call name table from the installed kernel
# headers, plus the calls newer than Debian 12's headers (6.1) that Linux 6.18
# knows. Output: one XS_SYSCALL(nr, "name") line per call.
hdr=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
[ -r "$hdr" ] || hdr=/usr/include/asm/unistd_64.h
{
  sed -n 's/^#define __NR_\([a-z0-9_]*\)[[:space:]]\{1,\}\([0-9]\{1,\}\)$/\2 \1/p' "$hdr"
  cat <<'NEWER'
451 cachestat
452 fchmodat2
453 map_shadow_stack
454 futex_wake
455 futex_wait
456 futex_requeue
457 statmount
458 listmount
459 lsm_get_self_attr
460 lsm_set_self_attr
461 lsm_list_modules
462 mseal
463 setxattrat
464 getxattrat
465 listxattrat
466 removexattrat
467 open_tree_attr
468 file_getattr
469 file_setattr
NEWER
} | sort -n -u -k1,1 | awk '{ printf "XS_SYSCALL(%d, \"%s\")\n", $1, $2 }'
