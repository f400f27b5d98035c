/*
 * The program's signals. The runtime keeps the program's view of every
 * signal action in g_actions and installs its own entry point with the
 * kernel, so that it can count deliveries (synchronous: a fault the
 * thread's own instruction caused; asynchronous: the rest), count the
 * handler's rt_sigreturn, write the final record before a signal's default
 * action kills the process, and keep SIGSYS out of every mask.
 *
 * A signal that lands inside a counting section is held back: blocked in
 * the interrupted context, re-queued with its siginfo, and released when the
 * section ends, so counting sections are atomic with respect to the
 * program's handlers (which may never return: siglongjmp).
 *
 * Every handler of the runtime runs on the thread's runtime stack
 * (SA_ONSTACK; see XS_ALTSTACK_SIZE). A program's handler is never called
 * from there: the runtime builds the frame the kernel would have built
 * (siginfo, ucontext, xstate) on the stack the kernel would have chosen
 * (the program's alternate stack, which is virtual, or the interrupted
 * stack below its red zone) and rewrites its own saved context so that its
 * rt_sigreturn enters the program's handler there. No runtime frame stays
 * live underneath it, and its restorer's rt_sigreturn traps like any call.
 * A signal that arrives while the runtime runs a call for the program is
 * held (blocked there, re-queued) and delivered at the program's context
 * once the call is done: it ends the call with EINTR, or has the program
 * issue it again after the handler, as the kernel would have.
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include "runtime/runtime.h"

struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif
#define RESERVED_SIGNALS g_reserved_signals
uint64_t g_reserved_signals = XS_SIGBIT(SIGSYS);

static struct ksigaction g_actions[65];	/* the program's view, by signal */

/* The program's sigaltstack, per slot (like the runtime stacks, outside the
 * arena: a fork child keeps its parent's). flags as the kernel keeps them. */
struct prog_ss {
	unsigned long sp, size;
	int flags;
};
static struct prog_ss g_prog_ss[XS_MAX_THREADS];
static struct prog_ss g_no_ss = { 0, 0, SS_DISABLE };

/* The kernel's rt_sigframe on x86-64, and its ucontext. */
struct kucontext {
	unsigned long uc_flags;
	void *uc_link;
	stack_t uc_stack;
	mcontext_t uc_mcontext;
	uint64_t uc_sigmask;
};
struct kframe {
	void *pretcode;
	struct kucontext uc;
	siginfo_t info;
};
_Static_assert(sizeof(struct kframe) == 440, "the kernel's rt_sigframe");
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
#define KERNEL_MINSIGSTKSZ 2048UL	/* the kernel's, not glibc's sysconf */
#define FPX_SW_OFFSET 464		/* struct _fpx_sw_bytes in the fxsave area */
#define FP_MAGIC1 0x46505853U

void xs_sigsys_handler(int sig, siginfo_t *info, void *ctx);

static bool default_is_fatal(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGSTOP: case SIGTSTP: case SIGTTIN:
	case SIGTTOU: case SIGURG: case SIGWINCH: case SIGKILL:
		return false;
	}
	return true;
}

static bool is_fault_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP ||
	       sig == SIGSYS;
}

static void lock_actions(sigset_t *old)
{
	xs_lock_blocked(&g_proc->sigaction_lock, old);
}

static void unlock_actions(const sigset_t *old)
{
	xs_unlock_blocked(&g_proc->sigaction_lock, old);
}

static void signal_entry(int sig, siginfo_t *info, void *ctx);

/* What the kernel gets for the program's action prog on sig. */
static struct ksigaction kernel_action(int sig, const struct ksigaction *prog)
{
	/* every handler of ours on the runtime stack; the program's
	 * SA_ONSTACK is the program's (virtual), SA_RESTART the kernel's to
	 * apply to the calls the runtime runs (see signal_entry) */
	struct ksigaction k = { (void *)signal_entry, SA_SIGINFO | SA_RESTORER | SA_ONSTACK,
				(void *)xs_restorer, 0 };
	if (sig == g_ctl_sig) {
		/* the runtime's while the program leaves it default or ignored */
		k.flags |= SA_RESTART;
	} else if (prog->handler == SIG_IGN) {
		/* a fault is fatal even when ignored; keep our fix-ups */
		if (sig != SIGSEGV && sig != SIGBUS)
			k.handler = SIG_IGN;
		k.flags |= SA_ONSTACK;
	} else if (prog->handler == SIG_DFL) {
		if (!default_is_fatal(sig))
			k.handler = SIG_DFL;
		k.flags |= SA_ONSTACK;	/* so a stack overflow still gets its record */
	} else {
		k.flags |= prog->flags & ~(SA_RESTORER | SA_RESETHAND);
		k.mask = prog->mask & ~RESERVED_SIGNALS;
	}
	return k;
}

int xs_signals_init(void)
{
	if (g_config.profile != XS_PROFILE_OFF)
		g_reserved_signals |= XS_SIGBIT(XS_SAMPLE_SIG);
	for (int sig = 1; sig <= 64; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		struct ksigaction cur;
		if (xs_sys4(SYS_rt_sigaction, sig, NULL, &cur, 8) < 0)
			continue;
		g_actions[sig] = cur;
		if (sig == SIGSYS)
			continue;
		struct ksigaction k = kernel_action(sig, &cur);
		if (XS_SIGBIT(sig) & g_reserved_signals) {
			/* the sampler's: restarted calls, never the program's */
			k = (struct ksigaction){ (void *)signal_entry,
						 SA_SIGINFO | SA_RESTORER | SA_RESTART | SA_ONSTACK,
						 (void *)xs_restorer, 0 };
		}
		xs_sys4(SYS_rt_sigaction, sig, &k, NULL, 8);
	}
	/* The sampling signal waits while a call is in the runtime: it then
	 * lands at the program's call site, and never interrupts a call the
	 * runtime runs for the program (no EINTR the program would not see). */
	struct ksigaction sys = { (void *)xs_sigsys_handler, SA_SIGINFO | SA_NODEFER | SA_RESTORER | SA_ONSTACK,
				  (void *)xs_restorer, g_reserved_signals & ~XS_SIGBIT(SIGSYS) };
	long r = xs_sys4(SYS_rt_sigaction, SIGSYS, &sys, NULL, 8);
	if (r < 0)
		return (int)r;
	/* a blocked SIGSYS at dispatch kills the process: never let it be */
	uint64_t unblock = g_reserved_signals;
	xs_sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &unblock, NULL, 8);
	return 0;
}

long xs_sig_action(struct xs_thread *t, long sig, const void *act, void *oact, long size)
{
	struct ksigaction new, old;
	sigset_t mask;

	if (size != 8 || sig < 1 || sig > 64)
		return -EINVAL;
	if (act && (sig == SIGKILL || sig == SIGSTOP))
		return -EINVAL;
	if (act && xs_copy_user(&new, act, sizeof(new)) < 0)
		return -EFAULT;
	if (XS_SIGBIT(sig) & g_reserved_signals & ~XS_SIGBIT(SIGSYS)) {
		/* the sampler's signal: the program's view only */
		if (oact && xs_copy_user(oact, &g_actions[sig], sizeof(old)) < 0)
			return -EFAULT;
		if (act)
			g_actions[sig] = new;
		return 0;
	}
	if (t->kind == XS_KIND_VMPROC && sig != SIGSYS) {
		/* A vfork child shares our memory but not our actions: leave
		 * g_actions to the parent and set its own directly. */
		return xs_sys4(SYS_rt_sigaction, sig, act ? &new : NULL, oact, 8);
	}
	if (act && sig == g_ctl_sig && new.handler != SIG_DFL && new.handler != SIG_IGN)
		xs_control_give_up_signal();	/* the program wins */
	lock_actions(&mask);
	old = g_actions[sig];
	if (act) {
		if (sig != SIGSYS && t->kind != XS_KIND_VMPROC) {
			struct ksigaction k = kernel_action((int)sig, &new);
			long r = xs_sys4(SYS_rt_sigaction, sig, &k, NULL, 8);
			if (r < 0) {
				unlock_actions(&mask);
				return r;
			}
		}
		if (t->kind != XS_KIND_VMPROC)
			g_actions[sig] = new;
	}
	unlock_actions(&mask);
	if (oact && xs_copy_user(oact, &old, sizeof(old)) < 0)
		return -EFAULT;
	return 0;
}

long xs_sig_sanitize_mask(const void *user, long size, uint64_t *copy)
{
	if (size != 8)
		return -EINVAL;
	if (xs_copy_user(copy, user, 8) < 0)
		return -EFAULT;
	/* SIGSYS deliverable; the sampler's and the control signal held */
	*copy = (*copy & ~XS_SIGBIT(SIGSYS)) | (RESERVED_SIGNALS & ~XS_SIGBIT(SIGSYS));
	if (g_ctl_sig)
		*copy |= XS_SIGBIT(g_ctl_sig);
	return 0;
}

/* rt_sigprocmask inside the SIGSYS handler would be undone by the handler's
 * own sigreturn: run it, then carry the new mask into the saved context.
 * While the control signal is the runtime's, it stays blocked in the kernel
 * and the program sees (and sets) its own view of it. */
long xs_sig_procmask(struct xs_thread *t, long how, const void *set, void *oset, long size,
		     ucontext_t *uc)
{
	uint64_t copy = 0, program;
	bool view = t->ctl_view_blocked;
	if (size != 8)
		return -EINVAL;
	if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK && set)
		return -EINVAL;
	/* The program's mask is the saved context's: the handler's own mask
	 * differs (the sampler's signal held, faults let through). */
	memcpy(&program, &uc->uc_sigmask, 8);
	uint64_t old = program;
	if (set) {
		if (xs_copy_user(&copy, set, 8) < 0)
			return -EFAULT;
		copy &= ~(RESERVED_SIGNALS | XS_SIGBIT(SIGKILL) | XS_SIGBIT(SIGSTOP));
		if (g_ctl_sig) {
			uint64_t bit = XS_SIGBIT(g_ctl_sig);
			if (how == SIG_SETMASK)
				view = copy & bit;
			else if (how == SIG_BLOCK)
				view |= !!(copy & bit);
			else if (copy & bit)
				view = false;
			copy &= ~bit;
		}
		program = how == SIG_SETMASK ? copy : how == SIG_BLOCK ? program | copy : program & ~copy;
		if (g_ctl_sig)
			program |= XS_SIGBIT(g_ctl_sig);	/* the runtime's, kept blocked */
		memcpy(&uc->uc_sigmask, &program, 8);
	}
	if (g_ctl_sig) {
		old = t->ctl_view_blocked ? old | XS_SIGBIT(g_ctl_sig) : old & ~XS_SIGBIT(g_ctl_sig);
		t->ctl_view_blocked = view;
	}
	if (oset && xs_copy_user(oset, &old, 8) < 0)
		return -EFAULT;
	return 0;
}

/* Faults inside the runtime (xs_copy_user's fix-ups) need SIGSEGV and
 * SIGBUS deliverable even where the program blocks them: a blocked fault
 * is fatal. The saved context keeps the program's mask. */
void xs_sig_allow_faults(const ucontext_t *uc)
{
	uint64_t faults = XS_SIGBIT(SIGSEGV) | XS_SIGBIT(SIGBUS), mask;
	memcpy(&mask, &uc->uc_sigmask, 8);
	if (XS_UNLIKELY(mask & faults))
		xs_sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &faults, NULL, 8);
}

/* The mask as the program believes it is, from the kernel's. */
uint64_t xs_sig_program_view(struct xs_thread *t, uint64_t kernel_mask)
{
	if (!g_ctl_sig)
		return kernel_mask;
	uint64_t bit = XS_SIGBIT(g_ctl_sig);
	return t->ctl_view_blocked ? kernel_mask | bit : kernel_mask & ~bit;
}

/* The program took the control signal: unblock it in this thread if the
 * program's view has it unblocked. */
void xs_sig_ctl_resync(struct xs_thread *t, ucontext_t *uc)
{
	t->ctl_epoch = g_ctl_epoch;
	if (!g_ctl_sig && g_config.signal && !t->ctl_view_blocked)
		*(uint64_t *)&uc->uc_sigmask &= ~XS_SIGBIT(g_config.signal);
}

/* Does the program wait for the control signal itself (sigwait, signalfd)?
 * Then it is the program's. */
void xs_sig_check_wait(const void *user_set)
{
	uint64_t set;
	if (g_ctl_sig && user_set && xs_copy_user(&set, user_set, 8) == 0 && (set & XS_SIGBIT(g_ctl_sig)))
		xs_control_give_up_signal();
}

/* ---- the program's sigaltstack, as the kernel keeps it ---- */

static struct prog_ss *prog_ss_of(const struct xs_thread *t)
{
	return t ? &g_prog_ss[xs_slot_index(t)] : &g_no_ss;
}

static bool on_prog_stack(const struct prog_ss *ss, unsigned long sp)
{
	if (ss->flags & SS_AUTODISARM)
		return false;	/* the kernel's rule: it cannot be in use */
	return sp > ss->sp && sp - ss->sp <= ss->size;
}

static int prog_ss_flags(const struct prog_ss *ss, unsigned long sp)
{
	if (!ss->size)
		return SS_DISABLE;
	return on_prog_stack(ss, sp) ? SS_ONSTACK : 0;
}

/* The kernel's do_sigaltstack, on the program's state; sp: the program's
 * stack pointer at the call. */
static long prog_sigaltstack(struct prog_ss *ss, const stack_t *new, stack_t *old, unsigned long sp)
{
	if (old) {
		memset(old, 0, sizeof(*old));
		old->ss_sp = (void *)ss->sp;
		old->ss_size = ss->size;
		old->ss_flags = prog_ss_flags(ss, sp) | (int)(ss->flags & (int)SS_AUTODISARM);
	}
	if (!new)
		return 0;
	if (on_prog_stack(ss, sp))
		return -EPERM;
	int mode = new->ss_flags & ~SS_AUTODISARM;
	if (mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0)
		return -EINVAL;
	if (ss->sp == (unsigned long)new->ss_sp && ss->size == new->ss_size && ss->flags == new->ss_flags)
		return 0;
	if (mode == SS_DISABLE) {
		ss->sp = 0;
		ss->size = 0;
	} else {
		if (new->ss_size < KERNEL_MINSIGSTKSZ)
			return -ENOMEM;
		ss->sp = (unsigned long)new->ss_sp;
		ss->size = new->ss_size;
	}
	ss->flags = new->ss_flags;
	return 0;
}

long xs_sig_altstack(struct xs_thread *t, const void *ss_user, void *oss_user, ucontext_t *uc)
{
	stack_t new, old;
	if (ss_user && xs_copy_user(&new, ss_user, sizeof(new)) < 0)
		return -EFAULT;
	long r = prog_sigaltstack(prog_ss_of(t), ss_user ? &new : NULL, oss_user ? &old : NULL,
				  (unsigned long)uc->uc_mcontext.gregs[REG_RSP]);
	if (r == 0 && oss_user && xs_copy_user(oss_user, &old, sizeof(old)) < 0)
		r = -EFAULT;
	return r;
}

void xs_sig_altstack_task(uint32_t index, const struct xs_thread *parent, bool copy)
{
	g_prog_ss[index] = copy ? *prog_ss_of(parent) : g_no_ss;
}

void xs_sig_altstack_adopt(uint32_t index)
{
	stack_t cur;
	struct prog_ss *ss = &g_prog_ss[index];
	*ss = g_no_ss;
	if (xs_sys2(SYS_sigaltstack, NULL, &cur) == 0) {
		ss->sp = (unsigned long)cur.ss_sp;
		ss->size = cur.ss_size;
		ss->flags = cur.ss_size ? (cur.ss_flags & SS_AUTODISARM) : SS_DISABLE;
	}
}

void xs_sig_sigreturn(struct xs_thread *t, ucontext_t *uc)
{
	struct kucontext *user = (struct kucontext *)uc->uc_mcontext.gregs[REG_RSP];
	struct kucontext k;
	if (!t || xs_copy_user(&k, user, sizeof(k)) < 0)
		return;	/* the kernel will say what it thinks of the frame */
	/* the kernel's restore_altstack, on the program's state */
	prog_sigaltstack(prog_ss_of(t), &k.uc_stack, NULL, (unsigned long)k.uc_mcontext.gregs[REG_RSP]);
	stack_t ours = { xs_altstack_base(xs_slot_index(t)), 0, XS_ALTSTACK_SIZE };
	uint64_t mask = k.uc_sigmask & ~XS_SIGBIT(SIGSYS);
	xs_copy_user(&user->uc_stack, &ours, sizeof(ours));
	xs_copy_user(&user->uc_sigmask, &mask, sizeof(mask));
}

static void count_signal(struct xs_thread *t, int sig, const siginfo_t *info)
{
	if (!t)
		return;
	xs_section_enter_wait(t);
	if (is_fault_signal(sig) && info->si_code > 0)
		t->c.sync_signals++;
	else
		t->c.async_signals++;
	xs_section_leave(t);
}


/* The default action of a fatal signal: write the final record, then let
 * the kernel carry the action out with the original siginfo. */
static void die_of(struct xs_thread *t, int sig, siginfo_t *info, ucontext_t *uc)
{
	static int warned;
	xs_run_note_signal(sig);	/* the run file's end line names it (run.c) */
	if (t && xs_runtime_lock_held())
		/* a fault inside the runtime: the lock's state is unknown, and
		 * taking it again would hang the process with signals blocked */
		xs_warn_once(&warned, "exitscope: the program died of a fault inside the runtime; "
				      "its last record is lost\n");
	else if (t)
		xs_process_end(t, "exit");
	struct ksigaction dfl = { SIG_DFL, 0, NULL, 0 };
	xs_sys4(SYS_rt_sigaction, sig, &dfl, NULL, 8);
	uint64_t *mask = (uint64_t *)&uc->uc_sigmask;
	*mask &= ~XS_SIGBIT(sig);
	if (is_fault_signal(sig) && info->si_code > 0 && sig != SIGSYS)
		return;	/* the faulting instruction runs again and faults */
	xs_sys4(SYS_rt_tgsigqueueinfo, xs_sys0(SYS_getpid), xs_sys0(SYS_gettid), sig, info);
}

/*
 * Enter the program's handler for sig as the kernel would have: its frame
 * on the stack the kernel would choose, and the saved context uc (the
 * runtime's handler's) rewritten so that its rt_sigreturn lands in the
 * handler. base: the mask the handler's mask adds to (NULL: uc's). False if
 * the frame cannot be written (the kernel then forces SIGSEGV).
 */
static bool push_frame(struct xs_thread *t, int sig, const struct ksigaction *act, const siginfo_t *info,
		       ucontext_t *uc, const uint64_t *base)
{
	greg_t *r = uc->uc_mcontext.gregs;
	struct prog_ss *ss = prog_ss_of(t);
	unsigned long sp = (unsigned long)r[REG_RSP];
	bool onstack = on_prog_stack(ss, sp);

	sp -= 128;	/* the red zone */
	if ((act->flags & SA_ONSTACK) && prog_ss_flags(ss, sp) == 0)
		sp = ss->sp + ss->size;
	const char *fp = (const char *)uc->uc_mcontext.fpregs;
	size_t fpsize = 0;
	if (fp) {
		uint32_t sw[2];	/* magic1, extended_size */
		memcpy(sw, fp + FPX_SW_OFFSET, sizeof(sw));
		fpsize = sw[0] == FP_MAGIC1 ? sw[1] : 512;
		sp = (sp - fpsize) & ~63UL;
	}
	unsigned long fpaddr = sp;
	unsigned long frame = ((sp - sizeof(struct kframe)) & ~15UL) - 8;
	if (onstack && !on_prog_stack(ss, frame))
		return false;	/* it would overflow the alternate stack */
	if (fp && xs_copy_user((void *)fpaddr, fp, fpsize) < 0)
		return false;
	struct kframe f;
	memset(&f, 0, sizeof(f));
	f.pretcode = (act->flags & SA_RESTORER) ? act->restorer : NULL;
	memcpy(&f.uc.uc_flags, &uc->uc_flags, sizeof(f.uc.uc_flags));
	f.uc.uc_stack.ss_sp = (void *)ss->sp;
	f.uc.uc_stack.ss_size = ss->size;
	f.uc.uc_stack.ss_flags = ss->flags;
	memcpy(&f.uc.uc_mcontext, &uc->uc_mcontext, sizeof(f.uc.uc_mcontext));
	f.uc.uc_mcontext.fpregs = fp ? (fpregset_t)fpaddr : NULL;
	memcpy(&f.uc.uc_sigmask, &uc->uc_sigmask, 8);
	memcpy(&f.info, info, sizeof(f.info));
	if (xs_copy_user((void *)frame, &f, sizeof(f)) < 0)
		return false;
	if (ss->flags & SS_AUTODISARM)
		*ss = g_no_ss;

	uint64_t mask = base ? *base : f.uc.uc_sigmask;
	mask |= act->mask & ~RESERVED_SIGNALS;
	if (!(act->flags & SA_NODEFER))
		mask |= XS_SIGBIT(sig);
	mask &= ~(XS_SIGBIT(SIGSYS) | XS_SIGBIT(SIGKILL) | XS_SIGBIT(SIGSTOP));
	memcpy(&uc->uc_sigmask, &mask, 8);
	r[REG_RIP] = (greg_t)act->handler;
	r[REG_RSP] = (greg_t)frame;
	r[REG_RDI] = sig;
	r[REG_RSI] = (greg_t)(frame + offsetof(struct kframe, info));
	r[REG_RDX] = (greg_t)(frame + offsetof(struct kframe, uc));
	r[REG_RAX] = 0;
	r[REG_EFL] &= ~(0x400L | 0x100L | 0x10000L);	/* DF, TF, RF */
	return true;
}

static void deliver(struct xs_thread *t, int sig, siginfo_t *info, ucontext_t *uc, const uint64_t *base)
{
	struct ksigaction act = g_actions[sig];
	/* an ignored signal reaches us only when it is a fault (which the
	 * kernel would not let the program ignore) or by a race */
	if (act.handler == SIG_IGN && !(is_fault_signal(sig) && info->si_code > 0))
		return;
	if (act.handler == SIG_DFL || act.handler == SIG_IGN) {
		if (default_is_fatal(sig))
			die_of(t, sig, info, uc);
		return;
	}
	count_signal(t, sig, info);
	if (act.flags & SA_RESETHAND) {
		sigset_t m;
		lock_actions(&m);
		g_actions[sig].handler = SIG_DFL;
		struct ksigaction k = kernel_action(sig, &g_actions[sig]);
		xs_sys4(SYS_rt_sigaction, sig, &k, NULL, 8);
		unlock_actions(&m);
	}
	if (!push_frame(t, sig, &act, info, uc, base)) {
		/* the kernel's force_sigsegv */
		siginfo_t segv;
		memset(&segv, 0, sizeof(segv));
		segv.si_signo = SIGSEGV;
		segv.si_code = SI_KERNEL;
		sigset_t m;
		lock_actions(&m);
		g_actions[SIGSEGV].handler = SIG_DFL;
		unlock_actions(&m);
		die_of(t, SIGSEGV, &segv, uc);
	}
}

static void signal_entry(int sig, siginfo_t *info, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *r = uc->uc_mcontext.gregs;

	/* a fault in xs_copy_user: return -EFAULT from it */
	if ((sig == SIGSEGV || sig == SIGBUS) && (char *)r[REG_RIP] >= (char *)xs_copy_user &&
	    (char *)r[REG_RIP] < xs_copy_user_end) {
		r[REG_RIP] = (greg_t)xs_copy_user_fault;
		return;
	}
	/* a stub's %gs read found no block: it declines */
	if ((sig == SIGSEGV || sig == SIGBUS) && g_fast_on && xs_fast_fixup_fault(uc))
		return;
	struct xs_thread *t = xs_self();
	/* inside the fast entry's instructions: the program's context first */
	xs_fast_normalize(t, uc);
	if (sig == g_ctl_sig) {
		g_ctl_pending = 1;	/* for the service thread (see control.c) */
		return;
	}
	if (!t && g_service_tid && xs_sys0(SYS_gettid) == g_service_tid) {
		/* a signal that is the program's now reached the service thread
		 * in its wait before it blocked it again: pass it on */
		xs_sys3(SYS_rt_sigqueueinfo, xs_sys0(SYS_getpid), sig, info);
		return;
	}
	if (sig == XS_SAMPLE_SIG && (g_reserved_signals & XS_SIGBIT(XS_SAMPLE_SIG))) {
		xs_sig_allow_faults(uc);
		xs_profile_sample(t, uc);
		return;
	}
	if (t && (t->seq & 1)) {
		/* inside a counting section: hold it back until the end */
		uint64_t bit = XS_SIGBIT(sig);
		xs_sys4(SYS_rt_sigprocmask, SIG_BLOCK, &bit, NULL, 8);
		*(uint64_t *)&uc->uc_sigmask |= bit;
		t->deferred |= bit;
		xs_sys4(SYS_rt_tgsigqueueinfo, xs_sys0(SYS_getpid), xs_sys0(SYS_gettid), sig, info);
		return;
	}
	if (t && xs_on_runtime_stack(t, (unsigned long)r[REG_RSP]) && !(is_fault_signal(sig) && info->si_code > 0) &&
	    g_actions[sig].handler != SIG_DFL && g_actions[sig].handler != SIG_IGN) {
		/* The runtime is running a call for the program (the SIGSYS
		 * handler): hold it, blocked there and re-queued; it reaches
		 * the program's context when the handler is done. If the
		 * kernel wound the program's call back to restart it after
		 * the handler, the program issues it again itself. */
		uint64_t bit = XS_SIGBIT(sig);
		xs_sys4(SYS_rt_sigprocmask, SIG_BLOCK, &bit, NULL, 8);	/* (SA_NODEFER) */
		*(uint64_t *)&uc->uc_sigmask |= bit;
		t->held |= bit;
		xs_sys4(SYS_rt_tgsigqueueinfo, xs_sys0(SYS_getpid), xs_sys0(SYS_gettid), sig, info);
		/* (at the instruction with rcx still 0: a signal that came
		 * before the call was issued; it runs, then the signal) */
		if ((char *)r[REG_RIP] == xs_prog_syscall_insn &&
		    (char *)r[REG_RCX] == xs_prog_syscall_insn + 2) {
			r[REG_RIP] += 2;
			r[REG_RAX] = -XS_ERESTART;
		}
		return;
	}
	deliver(t, sig, info, uc, NULL);
}

/* The held signals: the kernel delivers them once the handler's
 * rt_sigreturn unblocks them, at the program's context, unless the
 * program's mask blocks them. A call that installed a mask of its own while
 * it waited (sigsuspend, ppoll, pselect, epoll_pwait) was ended by one that
 * mask let through: deliver those now, with that mask, as the kernel does
 * before it puts the program's mask back. */
void xs_sig_deliver_held(struct xs_thread *t, ucontext_t *uc, const uint64_t *wait_mask)
{
	uint64_t held = t->held;
	t->held = 0;
	if (!wait_mask)
		return;
	uint64_t base = *wait_mask;
	for (int sig = 1; sig <= 64; sig++) {
		uint64_t bit = XS_SIGBIT(sig);
		if (!(held & bit) || (base & bit))
			continue;
		siginfo_t info;
		struct timespec zero = { 0, 0 };
		if (xs_sys4(SYS_rt_sigtimedwait, &bit, &info, &zero, 8) != sig)
			continue;
		deliver(t, sig, &info, uc, &base);
		memcpy(&base, &uc->uc_sigmask, 8);	/* the next one interrupts this handler */
	}
}

/* A SIGSYS that is not a dispatch (a seccomp filter's SECCOMP_RET_TRAP, or
 * a kill): the program's, with the mask its handler asked for. */
void xs_forward_sigsys(siginfo_t *info, ucontext_t *uc)
{
	struct xs_thread *t = xs_self();
	struct ksigaction act = g_actions[SIGSYS];
	greg_t *r = uc->uc_mcontext.gregs;
	if (t && xs_on_runtime_stack(t, (unsigned long)r[REG_RSP])) {
		/* The runtime's call trapped: the program's own call, which a
		 * filter of the program's refused (the handler takes it to the
		 * program's context), or one of the runtime's: it fails. */
		if ((char *)r[REG_RIP] == xs_prog_syscall_insn + 2) {
			memcpy(&t->trap_info, info, sizeof(t->trap_info));
			r[REG_RAX] = -XS_ETRAPPED;
		} else {
			r[REG_RAX] = -ENOSYS;
		}
		return;
	}
	if (act.handler == SIG_DFL || act.handler == SIG_IGN) {
		die_of(t, SIGSYS, info, uc);
		return;
	}
	deliver(t, SIGSYS, info, uc, NULL);
}

void xs_sig_deliver_trap(struct xs_thread *t, ucontext_t *uc)
{
	siginfo_t info;
	memcpy(&info, &t->trap_info, sizeof(info));
	xs_forward_sigsys(&info, uc);
}

void xs_sig_ctl_block(struct xs_thread *t)
{
	uint64_t bit, old = 0;
	t->ctl_epoch = g_ctl_epoch;
	if (!g_ctl_sig)
		return;
	bit = XS_SIGBIT(g_ctl_sig);
	xs_sys4(SYS_rt_sigprocmask, SIG_BLOCK, &bit, &old, 8);
	t->ctl_view_blocked = old & bit;
}
