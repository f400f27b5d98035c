/*
 * The fast entry: a call from a rewritten site (entry/rewrite.c) arrives
 * through its stub (entry/stubs.c) and entry/trampoline.S on the thread's
 * runtime stack, without a signal. It is counted exactly as dispatch counts
 * it (call.c) and runs from the allowed region; whatever is not a plain
 * call is declined: the program's own `syscall`, left in place at the site,
 * then traps and dispatch takes it.
 *
 * The thread's block is found through %gs: a thread's %gs base points at
 * its block unless the program has put its own base there (arch_prctl or
 * WRGSBASE), and then its stubs decline every call. The program's view of
 * the base stays its own: ARCH_GET_GS answers 0 where the runtime's is.
 *
 * Signals while a thread is in here: in the C code they are held, as in the
 * SIGSYS handler (emulate/signals.c), and delivered by the finish trap; in
 * the instructions of trampoline.S or a stub, xs_fast_normalize first moves
 * the interrupted context to the program's.
 *
 * Compiled without vector registers (see the Makefile): the program's
 * vector state is live in here, and an XSAVE per call would cost more than
 * the whole entry.
 */
#include <errno.h>
#include <string.h>
#include <elf.h>
#include <sys/syscall.h>
#include <asm/prctl.h>
#include <linux/membarrier.h>
#include "runtime/call.h"

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

bool g_fast_on;

/* What trampoline.S builds on the runtime stack, below its top. */
struct xs_fast_frame {
	long a[6];
	long nr;
	unsigned long rbp;
	unsigned long resume;	/* where the program goes on */
	unsigned long flags;	/* its RFLAGS */
	unsigned long rsp;	/* its stack pointer */
};
_Static_assert(sizeof(struct xs_fast_frame) == 88, "entry/trampoline.S");

extern char xs_fast_code_start[], xs_fast_entry[], xs_fast_entry_switched[], xs_fast_entry_framed[];
extern char xs_fast_exit[], xs_fast_exit_late[], xs_fast_exit_on_program_stack[];
extern char xs_fast_finish_on_program_stack[], xs_fast_finish[], xs_fast_code_end[];

long xs_fast_call(struct xs_thread *t, struct xs_fast_frame *f);
long xs_fast_call(struct xs_thread *t, struct xs_fast_frame *f)
{
	long nr = f->nr;
	if (XS_UNLIKELY(!xs_call_is_plain(t, nr, f->a))) {
		f->resume -= 2;	/* the program's syscall: dispatch takes it */
		return nr;
	}
	uint64_t t0;
	xs_count_exit(t, nr, &t0, true);
	long ret = xs_syscall6_prog(nr, f->a[0], f->a[1], f->a[2], f->a[3], f->a[4], f->a[5]);
	xs_count_return(t, nr, ret, t0);
	if (XS_UNLIKELY(ret == -XS_ERESTART)) {
		/* a held signal's handler comes first, then the program issues
		 * the call again (counted again, as strace counts it) */
		f->resume -= 2;
		return nr;
	}
	if (XS_UNLIKELY(ret == -XS_ETRAPPED)) {
		t->fast_finish = 1;	/* the SIGSYS handler delivers it */
		return nr;		/* (the kernel's syscall_rollback) */
	}
	return ret;
}

/* ---- the thread's %gs base ---- */

static bool is_block(unsigned long v)
{
	extern char *g_slots;
	return v - (unsigned long)g_slots < (unsigned long)XS_MAX_THREADS * XS_SLOT_SIZE &&
	       (v - (unsigned long)g_slots) % XS_SLOT_SIZE == 0;
}

void xs_gs_claim(struct xs_thread *t, unsigned long current)
{
	unsigned long want = current;
	if (g_fast_on && (current == 0 || is_block(current)))
		want = (unsigned long)t;	/* (none: 0, never another's block) */
	xs_sys2(SYS_arch_prctl, ARCH_SET_GS, want);
}

unsigned long xs_gs_program_view(const struct xs_thread *t)
{
	unsigned long v = 0;
	xs_sys2(SYS_arch_prctl, ARCH_GET_GS, &v);
	return is_block(v) ? 0 : v;
}

/* ---- start-up ---- */

static int sync_core_register(void)
{
	return (int)xs_sys3(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
}

void xs_fast_init(void)
{
	static int warned;
	if (!g_config.fast_path)
		return;
	const char *why = NULL;
	if (!(xs_getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE))
		why = "the CPU or kernel does not let user code read %gs (FSGSBASE)";
	else if (sync_core_register() < 0)
		why = "membarrier cannot serialise the other threads' instruction fetch";
	if (why) {
		xs_warn_once(&warned, "exitscope: no fast path (");
		xs_log(why);
		xs_log("): every call traps\n");
		return;
	}
	g_fast_on = true;
}

void xs_fast_fork_child(void)
{
	if (g_fast_on && sync_core_register() < 0)
		g_fast_on = false;	/* rewritten sites stay; new ones are not made */
}

/* ---- signals inside the entry's own instructions ---- */

static bool in_range(unsigned long ip, const char *lo, const char *hi)
{
	return ip >= (unsigned long)lo && ip < (unsigned long)hi;
}

bool xs_fast_fixup_fault(ucontext_t *uc)
{
	greg_t *r = uc->uc_mcontext.gregs;
	unsigned long stub, site;
	if (!xs_stub_site((unsigned long)r[REG_RIP], &stub, &site) || (unsigned long)r[REG_RIP] != stub)
		return false;
	r[REG_RIP] = (greg_t)(stub + XS_STUB_DECLINE);
	return true;
}

/* The frame trampoline.S built, while the thread is on the runtime stack. */
static const struct xs_fast_frame *frame_of(const struct xs_thread *t)
{
	return (const struct xs_fast_frame *)(t->fast_stack - sizeof(struct xs_fast_frame));
}

/* The program's registers the frame holds (arguments, rbp, rsp, RFLAGS). */
static void frame_regs(const struct xs_fast_frame *f, greg_t *r)
{
	r[REG_RDI] = f->a[0];
	r[REG_RSI] = f->a[1];
	r[REG_RDX] = f->a[2];
	r[REG_R10] = f->a[3];
	r[REG_R8] = f->a[4];
	r[REG_R9] = f->a[5];
	r[REG_RBP] = (greg_t)f->rbp;
	r[REG_RSP] = (greg_t)f->rsp;
	r[REG_EFL] = (greg_t)f->flags;
}

/* The context after the call: the program's registers from the frame. */
static void after_call(struct xs_thread *t, greg_t *r, long rax, unsigned long rip)
{
	const struct xs_fast_frame *f = frame_of(t);
	frame_regs(f, r);
	r[REG_RAX] = rax;
	r[REG_RIP] = (greg_t)rip;
	r[REG_RCX] = (greg_t)rip;
	r[REG_R11] = (greg_t)f->flags;
}

/* The call is over: signals held while it ran become deliverable with
 * this one, and a seccomp trap of the program's call is delivered first. */
static void release_held(struct xs_thread *t, ucontext_t *uc)
{
	*(uint64_t *)&uc->uc_sigmask &= ~t->held;
	t->held = 0;
	if (t->fast_finish) {
		t->fast_finish = 0;
		xs_sig_deliver_trap(t, uc);
	}
}

bool xs_fast_normalize(struct xs_thread *t, ucontext_t *uc)
{
	greg_t *r = uc->uc_mcontext.gregs;
	unsigned long ip = (unsigned long)r[REG_RIP], stub, site;

	if (!g_fast_on || !t)
		return false;
	if (xs_stub_site(ip, &stub, &site)) {
		/* not in the entry yet: back to the site, which runs again */
		r[REG_RIP] = (greg_t)site;
		return true;
	}
	if (!in_range(ip, xs_fast_code_start, xs_fast_code_end))
		return false;
	t->fast_in = 0;
	if (ip < (unsigned long)xs_fast_exit) {
		/* before the call: the program issues it again, and it traps */
		r[REG_RIP] = r[REG_R11] - 2;
		if (ip > (unsigned long)xs_fast_entry_framed)
			frame_regs(frame_of(t), r);	/* whole: rsi, rdi and DF are ours by now */
		else if (ip >= (unsigned long)xs_fast_entry_switched)
			r[REG_RSP] = (greg_t)t->fast_rsp;
		return true;
	}
	if (ip == (unsigned long)xs_fast_exit_on_program_stack) {
		r[REG_RIP] = r[REG_RCX];	/* every other register is in place */
	} else if (ip >= (unsigned long)xs_fast_finish_on_program_stack) {
		r[REG_RAX] = t->fast_finish_rax;
		r[REG_RIP] = r[REG_RCX] = (greg_t)t->fast_finish_rip;
		r[REG_R11] = r[REG_EFL];
	} else if (ip >= (unsigned long)xs_fast_exit_late) {
		after_call(t, r, t->fast_finish_rax, t->fast_finish_rip);
	} else {
		after_call(t, r, r[REG_RAX], frame_of(t)->resume);
	}
	release_held(t, uc);
	return true;
}

bool xs_fast_finish_trap(struct xs_thread *t, ucontext_t *uc)
{
	greg_t *r = uc->uc_mcontext.gregs;
	if (r[REG_RAX] != XS_NR_FAST_FINISH || (char *)r[REG_RIP] != xs_fast_finish + 2 || !t)
		return false;
	r[REG_RAX] = t->fast_finish_rax;
	r[REG_RIP] = r[REG_RCX] = (greg_t)t->fast_finish_rip;
	r[REG_R11] = r[REG_EFL];
	release_held(t, uc);
	return true;
}

bool xs_fast_program_regs(const struct xs_thread *t, const ucontext_t *uc, greg_t out[NGREG])
{
	if (!g_fast_on || !t || !t->fast_in || !xs_on_runtime_stack(t, (unsigned long)uc->uc_mcontext.gregs[REG_RSP]))
		return false;
	const struct xs_fast_frame *f = frame_of(t);
	memcpy(out, uc->uc_mcontext.gregs, sizeof(greg_t) * NGREG);
	frame_regs(f, out);
	out[REG_RIP] = (greg_t)(f->resume - 2);	/* the program's syscall */
	out[REG_RAX] = f->nr;
	return true;
}
