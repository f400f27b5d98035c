/*
 * Which calls need dispatch (see call.h): the table, filled at start-up.
 */
#include <sys/syscall.h>
#include "runtime/call.h"

uint64_t g_needs_dispatch[(XS_NR_SYSCALLS + 63) / 64];

static const long g_dispatch_only[] = {
	/* the thread's whole context: new tasks, new images, its end, its
	 * signal frames */
	SYS_clone, SYS_clone3, SYS_fork, SYS_vfork, SYS_execve, SYS_execveat, SYS_exit, SYS_exit_group,
	SYS_rt_sigreturn,
	/* emulated on the saved context (emulate/signals.c) */
	SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_sigaltstack, SYS_rt_sigsuspend, SYS_rt_sigtimedwait,
	SYS_signalfd, SYS_signalfd4, SYS_ppoll, SYS_pselect6, SYS_epoll_pwait, SYS_epoll_pwait2,
	/* the runtime's descriptors (emulate/fds.c; close is plain unless its
	 * descriptor is watched, open unless its path is /dev/exitscope) */
	SYS_close_range, SYS_dup2, SYS_dup3,
	/* the descriptor limit the runtime raises for a moment (emulate/fds.c) */
	SYS_getrlimit, SYS_setrlimit, SYS_prlimit64,
	/* credentials the service thread follows (emulate/creds.c) */
	SYS_setuid, SYS_setgid, SYS_setreuid, SYS_setregid, SYS_setresuid, SYS_setresgid,
	SYS_setfsuid, SYS_setfsgid, SYS_setgroups, SYS_capset,
	/* modes of the thread: strict seccomp, the program's own dispatch,
	 * its %gs base */
	SYS_seccomp, SYS_prctl, SYS_arch_prctl,
};

bool xs_open_is_plain(long nr, const long *a)
{
	/* Reading the path may fault on a bad pointer (the kernel would say
	 * EFAULT), and a fault while the program blocks SIGSEGV or SIGBUS
	 * would kill it: then dispatch, which unblocks them, takes the call. */
	uint64_t mask, faults = XS_SIGBIT(SIGSEGV) | XS_SIGBIT(SIGBUS);
	if (xs_sys4(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &mask, 8) < 0 || (mask & faults))
		return false;
	return !xs_devfile_path((const char *)(nr == SYS_open ? a[0] : a[1]));
}

static void needs_dispatch(long nr)
{
	g_needs_dispatch[nr >> 6] |= 1ULL << (nr & 63);
}

void xs_call_init(void)
{
	for (unsigned i = 0; i < sizeof(g_dispatch_only) / sizeof(g_dispatch_only[0]); i++)
		needs_dispatch(g_dispatch_only[i]);
	if (g_config.exe_fd >= 0) {	/* /proc/self/exe (emulate/self_exe.c) */
		needs_dispatch(SYS_readlink);
		needs_dispatch(SYS_readlinkat);
	}
}
