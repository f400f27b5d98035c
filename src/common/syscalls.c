/*
 * The system call name table: a sparse array indexed by number, filled from
 * the generated list. XS_NR_OTHER collects numbers past the table.
 */
#include <string.h>
#include "common/syscalls.h"

static const char *const g_syscall_names[XS_NR_SYSCALLS] = {
#define XS_SYSCALL(nr, name) [nr] = name,
#include "syscall_table.h"
#undef XS_SYSCALL
	[XS_NR_OTHER] = "other",
};

const char *xs_syscall_name(long nr)
{
	if (nr < 0 || nr >= XS_NR_SYSCALLS)
		return NULL;
	return g_syscall_names[nr];
}

long xs_syscall_number(const char *name)
{
	for (long nr = 0; nr < XS_NR_SYSCALLS; nr++)
		if (g_syscall_names[nr] && strcmp(g_syscall_names[nr], name) == 0)
			return nr;
	return -1;
}

