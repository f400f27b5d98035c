/*
 * A call of the program, whichever way it left (a trap, entry/dispatch.c;
 * a trampoline, entry/fast.c): how it is counted, and whether it can run as
 * it is or needs the runtime around it. Both entries count through these,
 * so a call is counted the same whichever way it took. Inline: the fast
 * entry's whole budget is a few tens of ns.
 */
#ifndef XS_RUNTIME_CALL_H
#define XS_RUNTIME_CALL_H

#include "runtime/runtime.h"

/* The clock is read outside the counting sections: a boundary waits for a
 * thread that is inside one, so they hold only the stores (a thread
 * preempted inside a section stalls the boundary until it runs again). */
static inline void xs_count_exit(struct xs_thread *t, long slot, uint64_t *t0, bool fast)
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

static inline void xs_count_return(struct xs_thread *t, long slot, long ret, uint64_t t0)
{
	uint64_t ticks = XS_UNLIKELY(t->seccomp_strict) ? 0 : xs_ticks() - t0;
	xs_section_enter_wait(t);
	t->c.enters++;
	t->c.sys[slot].ticks += ticks;
	if ((unsigned long)ret > -4096UL)
		t->c.sys[slot].errors++;
	xs_section_leave(t);
}

extern uint64_t g_needs_dispatch[(XS_NR_SYSCALLS + 63) / 64];
/* An open that is not of /dev/exitscope (reading its path is safe). */
bool xs_open_is_plain(long nr, const long *a);

/* Calls that never take the fast entry, whatever their arguments: they
 * need the thread's whole context or are emulated (the rewriter leaves
 * their sites alone). */
static inline bool xs_call_needs_dispatch(long nr)
{
	return (unsigned long)nr >= XS_NR_SYSCALLS || ((g_needs_dispatch[nr >> 6] >> (nr & 63)) & 1);
}

/* May call nr run as it is, with nothing of the runtime's around it (no
 * emulation, no runtime descriptor, no special state of the thread)? The
 * fast entry takes only these; the others go to dispatch. */
static inline bool xs_call_is_plain(const struct xs_thread *t, long nr, const long *a)
{
	if (XS_UNLIKELY(t->seccomp_strict || t->program_sud.on || t->ctl_epoch != g_ctl_epoch))
		return false;
	/* (any call whose first argument is a descriptor the runtime watches;
	 * for the others the test costs a decline at worst) */
	if (XS_UNLIKELY(xs_fd_watched(a[0])))
		return false;
	/* with the sampler on, a new executable mapping is announced */
	if (XS_UNLIKELY(g_config.profile != XS_PROFILE_OFF) && (nr == SYS_mmap || nr == SYS_mprotect))
		return false;
	if (XS_UNLIKELY(nr == SYS_openat || nr == SYS_open || nr == SYS_openat2))
		return xs_open_is_plain(nr, a);
	return !xs_call_needs_dispatch(nr);
}

#endif
