/*
 * The dispatch entry: every system call the program issues outside the
 * allowed region and not through a trampoline (entry/fast.c) raises SIGSYS
 * (Syscall User Dispatch) and arrives here. The handler
 * counts the exit in the calling thread's own block, runs the call (or the
 * runtime's version of it, for calls that touch what the runtime owns:
 * signal state, tasks, its file descriptors) and counts the enter.
 *
 * The handler is installed with an empty mask and SA_NODEFER, so the
 * program's signals interrupt a blocking call it runs exactly as they would
 * interrupt the program (EINTR or restart, as the program chose): they are
 * held and delivered at the program's context when the call is done
 * (signals.c). It runs on the thread's runtime stack (SA_ONSTACK).
 */
#include <errno.h>
#include <sys/mman.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <asm/prctl.h>
#include "runtime/call.h"

#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2
#endif

int xs_dispatch_enable(void)
{
	long len = xs_region_end - xs_region_start;
	long r = xs_sys5(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
			 (long)xs_region_start, len, 0);
	return (int)r;
}

/*
 * The program's own Syscall User Dispatch. The kernel keeps one setting per
 * thread, and it is the runtime's: a program that switched it off, or set
 * its own region, would stop being counted (and the runtime's own calls
 * would trap into the program). So the program's setting is virtual: the
 * runtime keeps dispatching every call and, where the program's setting
 * says so, hands the call to the program's SIGSYS handler exactly as the
 * kernel would (si_code SYS_USER_DISPATCH, the registers of the call) and
 * does not run it. Said once on the log.
 */
static long program_sud_set(struct xs_thread *t, const long *a)
{
	static int warned;
	unsigned long mode = (unsigned long)a[1], start = (unsigned long)a[2], len = (unsigned long)a[3];
	if (mode == PR_SYS_DISPATCH_OFF) {
		if (start || len || a[4])
			return -EINVAL;
		t->program_sud.on = false;
		return 0;
	}
	if (mode != PR_SYS_DISPATCH_ON || start + len < start)
		return -EINVAL;
	t->program_sud.on = true;
	t->program_sud.start = start;
	t->program_sud.len = len;
	t->program_sud.selector = (const char *)a[4];
	xs_warn_once(&warned, "exitscope: the program uses Syscall User Dispatch itself; the runtime "
			      "emulates it and keeps counting\n");
	return 0;
}

/* Would the program's own dispatch setting send this call to its SIGSYS
 * handler? (An unreadable selector or one of another value, which the
 * kernel would punish with a fatal signal, dispatches.) */
static bool program_sud_traps(const struct xs_thread *t, const greg_t *r)
{
	unsigned long ip = (unsigned long)r[REG_RIP];	/* after the syscall, as the kernel checks */
	if (ip - t->program_sud.start < t->program_sud.len)
		return false;
	char sel = 1;
	if (t->program_sud.selector && xs_copy_user(&sel, t->program_sud.selector, 1) == 0 && sel == 0)
		return false;
	return true;
}

/*
 * seccomp's strict mode leaves a thread read, write, exit and rt_sigreturn;
 * any other call kills it with SIGKILL, and so would any call the runtime
 * made for it; and it disables the TSC, so the clock cannot be read either:
 * the thread's calls from then on are counted without their time.
 * Natively the kill ends a single-threaded process (status 137),
 * but here the service thread would keep it alive. So the runtime enters
 * strict mode for the thread itself, noting its name and usage first, and
 * from then on counts the thread's calls without making any of its own:
 * read and write run, and a call that ends the thread (exit, or any call
 * the kernel will kill it for) is counted, its fate noted for the service
 * thread, which is woken (a write), and then issued.
 */
static bool enters_strict_mode(long nr, const long *a)
{
	return (nr == SYS_seccomp && a[0] == SECCOMP_SET_MODE_STRICT) ||
	       (nr == SYS_prctl && a[0] == PR_SET_SECCOMP && a[1] == SECCOMP_MODE_STRICT);
}

static long enter_strict_mode(struct xs_thread *t, long nr, const long *a)
{
	xs_usage_thread(0, &t->usage_at_exit, t->comm);	/* its last reading, maybe */
	long ret = xs_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (ret == 0)
		t->seccomp_strict = true;
	return ret;
}

static bool strict_allows(long nr)
{
	return nr == SYS_read || nr == SYS_write || nr == SYS_rt_sigreturn;
}

static void strict_end(struct xs_thread *t, long nr, long slot, const long *a)
{
	uint64_t t0;
	xs_count_exit(t, slot, &t0, false);
	t->fate_status = (int)a[0];
	__atomic_store_n(&t->fate, nr == SYS_exit ? XS_FATE_EXIT : XS_FATE_KILLED, __ATOMIC_RELEASE);
	xs_control_poke();
	if (nr == SYS_exit)
		for (;;)
			xs_sys1(SYS_exit, a[0]);
	for (;;)
		xs_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);	/* the kernel ends it */
}

/* Calls that install a signal mask while they wait: run them with a copy
 * that leaves the runtime's signals deliverable. */
static long masked_wait(long nr, long *a, int mask_arg, uint64_t *mask_out, bool *masked)
{
	uint64_t mask;
	if (nr == SYS_pselect6) {
		/* arg 5 points at { const sigset_t *ss; size_t ss_len; } */
		struct { const void *ss; size_t len; } data, copy;
		if (!a[5])
			return xs_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		if (xs_copy_user(&data, (void *)a[5], sizeof(data)) < 0)
			return -EFAULT;
		copy = data;
		if (data.ss) {
			long r = xs_sig_sanitize_mask(data.ss, (long)data.len, &mask);
			if (r < 0)
				return r;
			copy.ss = &mask;
			*mask_out = mask;
			*masked = true;
		}
		return xs_syscall6_prog(nr, a[0], a[1], a[2], a[3], a[4], (long)&copy);
	}
	long size = a[mask_arg + 1];	/* the sigset size follows the mask */
	if (!a[mask_arg])
		return xs_syscall6_prog(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	long r = xs_sig_sanitize_mask((void *)a[mask_arg], size, &mask);
	if (r < 0)
		return r;
	*mask_out = mask;
	*masked = true;
	long b[6] = { a[0], a[1], a[2], a[3], a[4], a[5] };
	b[mask_arg] = (long)&mask;
	return xs_syscall6_prog(nr, b[0], b[1], b[2], b[3], b[4], b[5]);
}

/* With the sampler on, a new executable mapping is announced to the
 * profile. (The sampling signal is blocked while the runtime runs a call,
 * so it cannot interrupt one.) */
static long run_profiled(struct xs_thread *t, long nr, const long *a)
{
	long ret = xs_syscall6_prog(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (ret >= 0 && ((nr == SYS_mmap && (a[2] & PROT_EXEC)) || (nr == SYS_mprotect && (a[2] & PROT_EXEC))))
		xs_profile_map_event(t);
	return ret;
}

/* Run call nr for the program; says whether its return is to be counted. */
static enum xs_outcome run_call(struct xs_thread *t, long nr, long *a, ucontext_t *uc, uint64_t t0, long *ret,
			       uint64_t *wait_mask, bool *masked)
{
	greg_t *r = uc->uc_mcontext.gregs;

	switch (nr) {
	case SYS_rt_sigaction:
		*ret = xs_sig_action(t, a[0], (void *)a[1], (void *)a[2], a[3]);
		return XS_RETURNED;
	case SYS_rt_sigprocmask:
		*ret = xs_sig_procmask(t, a[0], (void *)a[1], (void *)a[2], a[3], uc);
		return XS_RETURNED;
	case SYS_sigaltstack:
		*ret = xs_sig_altstack(t, (void *)a[0], (void *)a[1], uc);
		return XS_RETURNED;
	case SYS_rt_sigreturn:
		/* The program's own restorer: return through the stub, with
		 * the stack pointer at the program's frame. Never returns. */
		xs_sig_sigreturn(t, uc);
		r[REG_RIP] = (greg_t)xs_stub_sigreturn;
		return XS_ELSEWHERE;
	case SYS_rt_sigsuspend:
		*ret = masked_wait(nr, a, 0, wait_mask, masked);
		return XS_RETURNED;
	case SYS_rt_sigtimedwait:
		xs_sig_check_wait((void *)a[0]);
		break;
	case SYS_signalfd:
	case SYS_signalfd4:
		xs_sig_check_wait((void *)a[1]);
		break;
	case SYS_ppoll:
		*ret = masked_wait(nr, a, 3, wait_mask, masked);
		return XS_RETURNED;
	case SYS_pselect6:
		*ret = masked_wait(nr, a, 5, wait_mask, masked);
		return XS_RETURNED;
	case SYS_epoll_pwait:
	case SYS_epoll_pwait2:
		*ret = masked_wait(nr, a, 4, wait_mask, masked);
		return XS_RETURNED;
	case SYS_clone:
	case SYS_clone3:
	case SYS_fork:
	case SYS_vfork:
		return xs_task_clone(t, nr, a, uc, t0, ret);
	case SYS_execve:
	case SYS_execveat:
		*ret = xs_task_exec(t, nr, a, uc);
		return XS_RETURNED;
	case SYS_exit:
		xs_task_exit_thread(t, a[0]);
		return XS_ELSEWHERE;	/* not reached */
	case SYS_exit_group:
		xs_task_exit_group(t, a[0]);
		return XS_ELSEWHERE;	/* not reached */
	case SYS_close:
		*ret = xs_fd_close(a[0]);
		return XS_RETURNED;
	case SYS_close_range:
		*ret = xs_fd_close_range(a[0], a[1], a[2]);
		return XS_RETURNED;
	case SYS_dup2:
	case SYS_dup3:
		*ret = xs_fd_dup_onto(nr, a);
		return XS_RETURNED;
	case SYS_getrlimit:
	case SYS_setrlimit:
	case SYS_prlimit64:
		*ret = xs_fd_rlimit(nr, a);
		return XS_RETURNED;
	case SYS_setuid: case SYS_setgid: case SYS_setreuid: case SYS_setregid:
	case SYS_setresuid: case SYS_setresgid: case SYS_setfsuid: case SYS_setfsgid:
	case SYS_setgroups: case SYS_capset:
		*ret = xs_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		if ((unsigned long)*ret <= -4096UL)
			xs_creds_changed(t);	/* no runtime thread keeps more */
		return XS_RETURNED;
	case SYS_arch_prctl:
		if (a[0] == ARCH_GET_GS) {	/* the program's view (entry/fast.c) */
			unsigned long gs = xs_gs_program_view(t);
			*ret = xs_copy_user((void *)a[1], &gs, sizeof(gs));
			return XS_RETURNED;
		}
		if (a[0] == ARCH_SET_GS && a[1] == 0 && g_fast_on) {
			xs_gs_claim(t, 0);	/* 0 is what the program sees of the block */
			*ret = 0;
			return XS_RETURNED;
		}
		break;
	case SYS_readlink:
	case SYS_readlinkat:
		if (xs_self_exe_readlink(nr, a, ret))
			return XS_RETURNED;
		break;
	case SYS_seccomp:
	case SYS_prctl:
		if (enters_strict_mode(nr, a)) {
			*ret = enter_strict_mode(t, nr, a);
			return XS_RETURNED;
		}
		if (nr == SYS_prctl && a[0] == PR_SET_SYSCALL_USER_DISPATCH) {
			*ret = program_sud_set(t, a);
			return XS_RETURNED;
		}
		break;
	}
	/* the runtime's descriptors do not exist for the program */
	if (XS_UNLIKELY(xs_fd_watched(a[0])) && xs_is_runtime_fd(a[0]) && xs_fd_first_arg(nr)) {
		*ret = -EBADF;
		return XS_RETURNED;
	}
	if (XS_UNLIKELY(xs_profiling())) {
		*ret = run_profiled(t, nr, a);
		return XS_RETURNED;
	}
	*ret = xs_syscall6_prog(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	return XS_RETURNED;
}

/* SIGSYS: a dispatched system call, or a SIGSYS for the program (seccomp). */
void xs_sigsys_handler(int sig, siginfo_t *info, void *ctx);
void xs_sigsys_handler(int sig, siginfo_t *info, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *r = uc->uc_mcontext.gregs;

	if (info->si_code != SYS_USER_DISPATCH) {
		xs_forward_sigsys(info, uc);
		return;
	}
	long nr = r[REG_RAX];
	long a[6] = { r[REG_RDI], r[REG_RSI], r[REG_RDX], r[REG_R10], r[REG_R8], r[REG_R9] };
	struct xs_thread *t = xs_self();

	/* a fast call that ends here, to deliver what waited for it */
	if (XS_UNLIKELY(nr == XS_NR_FAST_FINISH) && xs_fast_finish_trap(t, uc)) {
		return;
	}

	/* A trap while the thread is inside a counting section is the
	 * runtime's own (a vDSO fallback, say): run it, count nothing. */
	if (XS_UNLIKELY(!t || (t->seq & 1))) {
		r[REG_RAX] = xs_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		return;
	}
	long slot = (unsigned long)nr < XS_NR_SYSCALLS ? nr : XS_NR_OTHER;
	if (XS_UNLIKELY(t->seccomp_strict)) {
		/* (no /dev/exitscope either: serving it takes calls) */
		if (!strict_allows(nr))
			strict_end(t, nr, slot, a);
		goto count_and_run;
	}
	if (XS_UNLIKELY(t->ctl_epoch != g_ctl_epoch))
		xs_sig_ctl_resync(t, uc);
	xs_sig_allow_faults(uc);
	if (XS_UNLIKELY(t->program_sud.on) && program_sud_traps(t, r)) {
		/* the kernel's own siginfo for this trap is the one the
		 * program's handler would get */
		xs_forward_sigsys(info, uc);
		return;
	}
	/* /dev/exitscope: the runtime's file; its traffic is not counted */
	if (XS_UNLIKELY(xs_fd_watched(a[0])) && (xs_fd_first_arg(nr) || nr == SYS_close) &&
	    xs_devfile_owns(a[0])) {
		r[REG_RAX] = xs_devfile_call(nr, a);
		return;
	}
	if (XS_UNLIKELY((nr == SYS_openat && xs_devfile_path((const char *)a[1])) ||
			(nr == SYS_open && xs_devfile_path((const char *)a[0])))) {
		r[REG_RAX] = xs_devfile_open(nr == SYS_open ? a[1] : a[2]);
		return;
	}
count_and_run:;
	uint64_t t0;
	long ret = 0;
	uint64_t wait_mask = 0;
	bool masked = false;
	unsigned long call_rip = (unsigned long)r[REG_RIP];
	bool plain = g_fast_on && xs_call_is_plain(t, nr, a);
	xs_count_exit(t, slot, &t0, false);
	switch (run_call(t, nr, a, uc, t0, &ret, &wait_mask, &masked)) {
	case XS_RETURNED:
		/* (a call the kernel restarts after the program's handler is
		 * counted as strace counts it: twice, the first time failed) */
		xs_count_return(t, slot, ret, t0);
		r[REG_RAX] = ret;
		if (XS_UNLIKELY(ret == -XS_ERESTART)) {
			r[REG_RIP] -= 2;	/* the program's syscall instruction */
			r[REG_RAX] = nr;
		}
		if (XS_UNLIKELY(ret == -XS_ETRAPPED)) {
			r[REG_RAX] = nr;	/* the kernel's syscall_rollback */
			xs_sig_deliver_trap(t, uc);
		}
		if (XS_UNLIKELY(t->held))
			xs_sig_deliver_held(t, uc, masked ? &wait_mask : NULL);
		/* a plain call: its site may take the fast entry from now on */
		if (plain && ret != -XS_ERESTART && ret != -XS_ETRAPPED)
			xs_rewrite_site(call_rip, nr, r);
		break;
	case XS_NEW_PROCESS:
		r[REG_RAX] = ret;
		t = xs_self();	/* the child's block */
		t->held = 0;	/* (the kernel delivers them) */
		break;
	case XS_ELSEWHERE:
		t->held = 0;
		break;
	}
}
