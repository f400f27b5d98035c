/*
 * x86-64 system call names, generated at build time from the kernel
 * headers (scripts/gen-syscall-table.sh). Shared by the runtime and the CLI.
 */
#ifndef XS_COMMON_SYSCALLS_H
#define XS_COMMON_SYSCALLS_H

/* One more than the largest system call number the counters track. Calls
 * with a larger number are counted under XS_NR_OTHER. */
#define XS_NR_SYSCALLS 512
#define XS_NR_OTHER (XS_NR_SYSCALLS - 1)

/* Name of system call nr, or NULL when the number has no name. */
const char *xs_syscall_name(long nr);

/* Number of the call named name, or -1. */
long xs_syscall_number(const char *name);

#endif
