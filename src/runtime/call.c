/*
 * A call of the program, whichever way it left (a trap, entry/dispatch.c;
 * a trampoline, entry/fast.c): how it is counted, and whether it can run as
 * it is or needs the runtime around it. Both entries count through here, so
 * a call is counted the same whichever way it took.
 *
 * Compiled without vector registers (see the Makefile): the fast entry
 * calls in here with the program's vector state live.
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include "runtime/runtime.h"

/* The clock is read outside the counting sections: a boundary waits for a
 * thread that is inside one, so they hold only the stores (a thread
 * preempted inside a section stalls the boundary until it runs again). */
void xs_count_exit(struct xs_thread *t, long slot, uint64_t *t0, bool fast)
{
	xs_section_enter_wait(t);
	t->c.exits++;
	t->c.exits_fast += fast;
	t->c.sys[slot].calls++;
	xs_section_leave(t);
	/* after any parking at exit or exec; none in strict mode, which
	 * disables the TSC (entry/dispatch.c) */
	*t0 = XS_UNLIKELY(t->seccomp_strict) ? 0 : xs_ticks();
}

void xs_count_return(struct xs_thread *t, long slot, long ret, uint64_t t0)
{
	uint64_t ticks = XS_UNLIKELY(t->seccomp_strict) ? 0 : xs_ticks() - t0;
	xs_section_enter_wait(t);
	t->c.enters++;
	t->c.sys[slot].ticks += ticks;
	if ((unsigned long)ret > -4096UL)
		t->c.sys[slot].errors++;
	xs_section_leave(t);
}

bool xs_call_needs_dispatch(long nr)
{
	switch (nr) {
	/* the thread's whole context: new tasks, new images, its end, its
	 * signal frames */
	case SYS_clone: case SYS_clone3: case SYS_fork: case SYS_vfork:
	case SYS_execve: case SYS_execveat: case SYS_exit: case SYS_exit_group:
	case SYS_rt_sigreturn:
	/* emulated on the saved context (emulate/signals.c) */
	case SYS_rt_sigaction: case SYS_rt_sigprocmask: case SYS_sigaltstack:
	case SYS_rt_sigsuspend: case SYS_rt_sigtimedwait: case SYS_signalfd: case SYS_signalfd4:
	case SYS_ppoll: case SYS_pselect6: case SYS_epoll_pwait: case SYS_epoll_pwait2:
	/* the runtime's descriptors (emulate/fds.c) and /dev/exitscope */
	case SYS_close: case SYS_close_range: case SYS_dup2: case SYS_dup3:
	case SYS_open: case SYS_openat: case SYS_openat2:
	/* credentials the service thread follows (emulate/creds.c) */
	case SYS_setuid: case SYS_setgid: case SYS_setreuid: case SYS_setregid:
	case SYS_setresuid: case SYS_setresgid: case SYS_setfsuid: case SYS_setfsgid:
	case SYS_setgroups: case SYS_capset:
	/* modes of the thread: strict seccomp, the program's own dispatch,
	 * its %gs base */
	case SYS_seccomp: case SYS_prctl: case SYS_arch_prctl:
		return true;
	}
	return (unsigned long)nr >= XS_NR_SYSCALLS;
}

bool xs_call_is_plain(const struct xs_thread *t, long nr, const long *a)
{
	if (XS_UNLIKELY(t->seccomp_strict || t->program_sud.on || t->ctl_epoch != g_ctl_epoch))
		return false;
	/* (any call whose first argument is a descriptor the runtime watches;
	 * for the others the test costs a decline at worst) */
	if (XS_UNLIKELY(xs_fd_watched(a[0])))
		return false;
	/* with the sampler on, a new executable mapping is announced */
	if (XS_UNLIKELY(xs_profiling()) && (nr == SYS_mmap || nr == SYS_mprotect))
		return false;
	return !xs_call_needs_dispatch(nr);
}
