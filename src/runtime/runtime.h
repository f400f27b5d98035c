/*
 * Internal interfaces of libexitscope.so, the runtime that lives inside the
 * program. Every system call instruction the runtime owns is in boundary.S
 * (the region Syscall User Dispatch lets through); every other system call
 * of the process traps into boundary.c.
 *
 * The runtime calls no C library function (see freestanding.h), so it
 * never writes the program's errno: its handlers need not save it.
 *
 * Ownership rule for counters: a thread's block is written only by the
 * thread itself, inside a counting section (seq odd). Readers wait for an
 * even seq; process end and exec first stop the other threads at their next
 * section (see counters.c).
 */
#ifndef XS_RUNTIME_H
#define XS_RUNTIME_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <ucontext.h>
#include "common/buf.h"
#include "common/counters.h"
#include "common/syscalls.h"
#include "runtime/entry/offsets.h"
#include "runtime/freestanding.h"

#define XS_LIKELY(x) __builtin_expect(!!(x), 1)
#define XS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define xs_barrier() __asm__ __volatile__("" ::: "memory")

/* ---- boundary.S: the allowed region ---- */
long xs_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
/* The same, for the program's own call: a signal that interrupts it is
 * recognised by this syscall instruction (signals.c). */
long xs_syscall6_prog(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
extern char xs_prog_syscall_insn[];
/* What xs_syscall6_prog returns when a signal for the program interrupted
 * the call and the kernel would restart it after the program's handler. */
#define XS_ERESTART 512
/* ...and when a seccomp filter of the program's trapped it (SIGSYS). */
#define XS_ETRAPPED 513
#define xs_sys0(nr) xs_syscall6((nr), 0, 0, 0, 0, 0, 0)
#define xs_sys1(nr, a) xs_syscall6((nr), (long)(a), 0, 0, 0, 0, 0)
#define xs_sys2(nr, a, b) xs_syscall6((nr), (long)(a), (long)(b), 0, 0, 0, 0)
#define xs_sys3(nr, a, b, c) xs_syscall6((nr), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define xs_sys4(nr, a, b, c, d) xs_syscall6((nr), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define xs_sys5(nr, a, b, c, d, e) \
	xs_syscall6((nr), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)
extern char xs_region_start[], xs_region_end[];
void xs_restorer(void);
void xs_stub_clone_newstack(void);
void xs_stub_clone_samestack(void);
void xs_stub_sigreturn(void);
/* Copy n bytes between the program's memory and ours; 0, or -EFAULT if a
 * page was unmapped (a fault inside is turned into that return value by
 * signals.c; see xs_fixup_fault). */
long xs_copy_user(void *dst, const void *src, size_t n);
extern char xs_copy_user_end[], xs_copy_user_fault[];
long xs_clone_service(unsigned long flags, void *stack_top, void (*entry)(void));
/* Call fn(arg) with the stack pointer at stack_top (16-byte aligned). */
long xs_call_on_stack(void *stack_top, long (*fn)(void *), void *arg);

/* ---- counters.c: thread blocks, the registry, stopping the world ---- */
enum xs_task_kind {
	XS_KIND_THREAD = 1,	/* a thread of this process (CLONE_THREAD) */
	XS_KIND_VMPROC = 2,	/* a process sharing our memory (vfork, posix_spawn) */
	XS_KIND_PROC = 3,	/* a process with its own copy (fork with a new stack) */
};

enum xs_slot_state { XS_SLOT_FREE = 0, XS_SLOT_LIVE, XS_SLOT_DEAD };

/* How a thread in seccomp's strict mode ends: it cannot go through the
 * runtime's exit path (only read, write, exit and rt_sigreturn are left to
 * it), so it says how, and the service thread retires it (tasks.c). */
enum xs_fate { XS_FATE_NONE = 0, XS_FATE_EXIT, XS_FATE_KILLED };

/* A system call whose execution continues in the program's own context
 * (see boundary.S): what its return path needs. */
struct xs_redirect {
	void *rip;
	unsigned long rsp, rbp;		/* the program's, for profile samples taken on the way */
	unsigned long program_gs;	/* the program's %gs base, put back after the stub */
	long nr;
	uint64_t t0;
	struct xs_thread *child;
	long kind;
	unsigned long flags;
};
#define XS_REDIRECT_DEPTH 16

struct xs_usage {
	uint64_t minor_faults, major_faults, preemptions;
};

struct xs_thread {
	/* The fast entry's fields first, at the offsets of entry/offsets.h
	 * (the stubs and entry/trampoline.S address them directly). */
	struct xs_thread *self;		/* %gs:0 */
	long fast_key;			/* -(long)self while the block is live: a stub
					 * checks it against its %gs base */
	char *fast_stack;		/* top of the runtime stack, for the fast entry */
	volatile uint64_t fast_in;	/* inside the fast entry's C code (the
					 * sampler's attribution) */
	/* a fast call that ends through the finish trap (entry/fast.c) */
	volatile uint64_t fast_finish;	/* nonzero: the program's seccomp SIGSYS is due */
	long fast_finish_rax;		/* the program's rax after the call */
	unsigned long fast_finish_rip;	/* where it goes on */
	volatile uint64_t held;		/* signals held while the runtime ran a call
					 * for the program (emulate/signals.c) */
	unsigned long fast_rsp;		/* the program's rsp at the fast entry */
	volatile uint32_t seq;		/* odd while the owner updates counts */
	volatile uint32_t state;	/* enum xs_slot_state */
	volatile uint32_t active;	/* set once the thread has taken its block on:
					 * only then do boundaries list it */
	uint32_t kind;			/* enum xs_task_kind */
	int tid;
	int pid;			/* the process it counts for */
	uint32_t redirect_depth;
	uint64_t deferred;		/* signals held back during a section */
	siginfo_t trap_info;		/* a seccomp trap of the program's call, for its handler */
	uint32_t gen;			/* which thread holds the slot: see windows.c */
	uint32_t ctl_epoch;		/* g_ctl_epoch this thread's mask follows */
	volatile uint32_t ring_busy;	/* writing to its sample ring */
	int timer;			/* sampling timer id + 1, or 0 */
	uint64_t start_ns;		/* CLOCK_MONOTONIC at start (COMM time) */
	uint64_t last_sample_cpu;	/* thread CPU ns at its previous sample */
	bool ctl_view_blocked;		/* the program's view of the control signal */
	bool seccomp_strict;		/* in seccomp's strict mode: see boundary.c */
	volatile uint8_t fate;		/* enum xs_fate: how a strict thread ends */
	int fate_status;		/* its exit status */
	struct {			/* the program's own Syscall User Dispatch (emulated) */
		bool on;
		unsigned long start, len;
		const char *selector;
	} program_sud;
	struct xs_usage usage_start;	/* the kernel's counts when activated: see windows.c */
	struct xs_usage usage_at_exit;	/* ...and when it exited */
	char comm[16];
	struct xs_redirect redirect[XS_REDIRECT_DEPTH];
	struct xs_counters c;
};

#define XS_SLOT_SIZE 16384
_Static_assert(offsetof(struct xs_thread, fast_key) == XS_OFF_FAST_KEY &&
	       offsetof(struct xs_thread, fast_stack) == XS_OFF_FAST_STACK &&
	       offsetof(struct xs_thread, fast_in) == XS_OFF_FAST_IN &&
	       offsetof(struct xs_thread, fast_finish) == XS_OFF_FAST_FINISH &&
	       offsetof(struct xs_thread, fast_finish_rax) == XS_OFF_FAST_FINISH_RAX &&
	       offsetof(struct xs_thread, fast_finish_rip) == XS_OFF_FAST_FINISH_RIP &&
	       offsetof(struct xs_thread, held) == XS_OFF_HELD &&
	       offsetof(struct xs_thread, fast_rsp) == XS_OFF_FAST_RSP, "entry/offsets.h");
#define XS_MAX_THREADS 4096

/*
 * The stack budget. Every handler of the runtime (SIGSYS, the program's
 * signals, the sampler's, the control signal's) is installed with
 * SA_ONSTACK and runs on the thread's own runtime stack: 64 KiB with a
 * guard page below, one per slot, kept in the kernel's sigaltstack of the
 * thread (the program's sigaltstack is virtual: signals.c). So no runtime
 * code runs on a program stack except the kernel's own entry into a
 * handler, which switches stacks itself, and the stubs of boundary.S that
 * continue a call in the program's context (clone, vfork, rt_sigreturn:
 * under 256 bytes below the red zone). On the runtime stack, the deepest
 * path is a kernel frame (3.4 KiB with AVX-512) plus the SIGSYS path plus
 * one nested signal frame; the deep paths of a boundary switch to the
 * boundary stack (windows.c). Every function takes at most 8 KiB
 * (-Wstack-usage=8192).
 */
#define XS_ALTSTACK_SIZE 65536
#define XS_ALTSTACK_GUARD 4096
#define XS_ALTSTACK_STRIDE ((size_t)XS_ALTSTACK_GUARD + XS_ALTSTACK_SIZE)
extern char *g_altstacks;		/* every slot's runtime stack, in slot order */
extern char *g_slots;			/* every slot's block, in slot order */

/* Per-process state. It lives in the arena, which fork children get zeroed
 * (MADV_WIPEONFORK), so a child starts from nothing, locks included. */
struct xs_process {
	volatile int lock;		/* the registry; taken with signals blocked */
	volatile int exiting;		/* futex word: nonzero stops counting sections */
	volatile int sigaction_lock;
	int pid;
	uint32_t slots_used;		/* high-water mark of slots */
	uint32_t live;			/* live threads of this process */
	uint32_t seq;			/* number of the open window */
	uint32_t gen;			/* slot generations handed out */
	volatile uint32_t dead;		/* dead slots not reclaimed yet */
	volatile int window_lock;	/* the boundaries: see windows.c */
	volatile int devfile_lock;	/* the /dev/exitscope table: see devfile.c */
	volatile int rewrite_lock;	/* the rewriter: see entry/rewrite.c */
	volatile int pool_lock;		/* the buffer pool: see output.c */
	uint64_t window_start_ns;	/* CLOCK_REALTIME */
	uint64_t window_start_mono;
	struct xs_counters retired;	/* reclaimed dead threads, this image */
	struct xs_counters retired_window; /* ...their part not yet in a window */
	struct xs_counters base_total;	/* earlier images (exec), for totals */
};

extern struct xs_process *g_proc;
extern uint64_t g_reserved_signals;	/* never blocked, never the program's */

/*
 * The calling thread's block. %gs belongs to the program (it may set it
 * with arch_prctl or WRGSBASE): the runtime finds the block from the stack
 * it runs on, since every handler of the runtime runs on the thread's own
 * runtime stack, one per slot. Only the stubs of boundary.S that continue a
 * clone or vfork in the program's context run elsewhere: for them the
 * handler points %gs at the block, and the stub's C half puts the
 * program's value back (tasks.c). The service thread's %gs points at a
 * block pointer of NULL.
 */
struct xs_thread *xs_slot(uint32_t i);
static inline struct xs_thread *xs_self(void)
{
	unsigned long off = (unsigned long)__builtin_frame_address(0) - (unsigned long)g_altstacks;
	if (g_altstacks && off < XS_MAX_THREADS * XS_ALTSTACK_STRIDE)
		return xs_slot((uint32_t)(off / XS_ALTSTACK_STRIDE));
	struct xs_thread *t;
	__asm__ __volatile__("mov %%gs:0, %0" : "=r"(t));
	return t;
}

/* Spin locks for the runtime's rare paths (taken with signals blocked
 * where a handler could want them), and the back-off of every wait. */
void xs_spin_lock(volatile int *l);
void xs_spin_unlock(volatile int *l);
/* Does the calling thread hold one of the runtime's locks? (Only a fault
 * inside the runtime can interrupt it there: every lock is taken with the
 * other signals blocked.) */
bool xs_runtime_lock_held(void);
void xs_backoff(unsigned *spins);
/* Private anonymous memory (reserved lazily); wipe_on_fork: a fork child
 * gets it zeroed. NULL without memory. */
void *xs_map(size_t size, bool wipe_on_fork);
int xs_counters_init(void);
struct xs_thread *xs_thread_alloc(enum xs_task_kind kind, int pid);
void xs_thread_free(struct xs_thread *t);
/* The slot number of t, and the runtime stack that goes with the slot. */
uint32_t xs_slot_index(const struct xs_thread *t);
char *xs_altstack_base(uint32_t index);
/* Is sp on the calling thread's runtime stack? */
bool xs_on_runtime_stack(const struct xs_thread *t, unsigned long sp);
/* Point the kernel's sigaltstack of the calling thread at t's runtime
 * stack (mapped on first use). */
int xs_altstack_install(struct xs_thread *t);
/* The calling thread is exiting (signals blocked): capture its name and
 * usage, mark its block dead; returns the number of threads still live. */
uint32_t xs_thread_retire(struct xs_thread *t);
int xs_thread_activate(struct xs_thread *t);
/* In a fork child: parent_index is the slot of the thread that forked, whose
 * runtime stack the child inherited; the child's block takes the same slot. */
void xs_fork_child_reset(bool ctl_view_blocked, uint32_t parent_index);
/* Stop every other thread of this process at its next counting section and
 * wait until none is inside one; returns with all signals blocked, old mask
 * in *old. xs_world_resume undoes it (exec failed). */
void xs_world_stop(struct xs_thread *self, sigset_t *old);
void xs_world_resume(const sigset_t *old);
void xs_park(void);
void xs_release_deferred(struct xs_thread *t);
uint64_t xs_now_mono(void);
uint64_t xs_now_real(void);
void xs_registry_lock(sigset_t *old);
void xs_registry_unlock(const sigset_t *old);
void xs_usage_thread(int tid, struct xs_usage *u, char comm[16]);
/* The state letter of thread tid of this process in /proc ('R', 'S',
 * 'Z', ...), or 0 when it is gone. */
char xs_task_state(int tid);
void xs_usage_init(void);
/* Up to size bytes of a /proc file of this process (made when the program
 * holds every descriptor, see xs_fd_make); its length or -errno. */
long xs_read_proc(const char *path, char *out, size_t size);
/* Fields 1..n of /proc/self/stat, numbered as proc(5) does, into f[1..n]
 * (the pid, name and state as 0); false when it cannot be read. */
bool xs_self_stat(unsigned long *f, int n);
void xs_block_all_signals(sigset_t *old);
void xs_restore_signals(const sigset_t *old);
/* A spin lock taken with every signal blocked (a handler on this thread
 * must not find it held), and given back with the mask restored. */
void xs_lock_blocked(volatile int *l, sigset_t *old);
void xs_unlock_blocked(volatile int *l, const sigset_t *old);

/* Counting sections, inlined into the system-call path. */
static inline bool xs_section_enter(struct xs_thread *t)
{
	t->seq++;
	xs_barrier();
	if (XS_UNLIKELY(g_proc->exiting)) {
		t->seq++;
		return false;
	}
	return true;
}

static inline void xs_section_leave(struct xs_thread *t)
{
	xs_barrier();
	t->seq++;
	xs_barrier();
	if (XS_UNLIKELY(t->deferred))
		xs_release_deferred(t);
}

/* Enter a section, parking while the process ends or execs. */
static inline void xs_section_enter_wait(struct xs_thread *t)
{
	while (!xs_section_enter(t))
		xs_park();
}

/* ---- entry/dispatch.c: the trap (Syscall User Dispatch, SIGSYS) ---- */
int xs_dispatch_enable(void);

/* ---- call.c, call.h: what decides and counts a call, for both entries ---- */
void xs_call_init(void);

/* ---- runtime.c: start-up ---- */
/* How exitscope-ld (src/loader/) hands the runtime a program it loaded. */
struct xs_launch {
	int exe_fd;			/* the program's file */
	void *auxv;			/* the program's auxv (Elf64_auxv_t[]) */
};
/* Start the runtime in this process: configuration, counters, handlers,
 * the service thread. envp: the process's initial environment array, with
 * the auxiliary vector after its NULL (or NULL: no configuration, no auxv);
 * launch: NULL when preloaded. Failures are said on the log; the program
 * then runs unobserved. */
void xs_runtime_start(char **envp, const struct xs_launch *launch);

/* ---- clock.c: the time of a call, in TSC ticks ---- */
/* Find the vDSO's clock (before the first read) and the tick scale. */
int xs_clock_init(void);
/* clock_gettime without the C library: 0 or a negative errno (no errno
 * set); safe in any handler, and before xs_clock_init (the system call). */
int xs_clock_gettime(clockid_t clock, struct timespec *ts);
static inline uint64_t xs_ticks(void)
{
	extern bool g_ticks_are_ns;
	if (XS_UNLIKELY(g_ticks_are_ns))
		return xs_now_mono();
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
/* Ticks to ns, with one scale for the whole life of the process (and of
 * its exec'd images): differences of converted totals are the windows. */
uint64_t xs_ticks_to_ns(uint64_t ticks);
/* The scale, for the environment of an exec (0: not fixed yet). */
uint64_t xs_clock_scale(void);

/* ---- entry/fast.c, entry/trampoline.S, entry/stubs.c, entry/rewrite.c:
 * the fast entry ---- */
extern bool g_fast_on;		/* the fast path is on in this process */
/* Start the fast path if the configuration and the machine allow it. */
void xs_fast_init(void);
/* A fork child: the membarrier registration is per process. */
void xs_fast_fork_child(void);
/* Point the calling thread's %gs at t, unless the program has put its own
 * base there (current: the base the thread has now or inherits). */
void xs_gs_claim(struct xs_thread *t, unsigned long current);
/* The program's view of the calling thread's %gs base. */
unsigned long xs_gs_program_view(const struct xs_thread *t);
/* A signal handler of the runtime interrupted ctx: if that was inside the
 * fast entry's own instructions, make ctx the program's context that the
 * fast call stands for (before the call, or after it), as if the signal
 * had come there. Returns true when ctx was changed. */
bool xs_fast_normalize(struct xs_thread *t, ucontext_t *uc);
/* A fault on a stub's %gs read: resume at its decline path. */
bool xs_fast_fixup_fault(ucontext_t *uc);
/* The thread is inside the fast entry's C code: the program's registers
 * at its call, for a profile sample. */
bool xs_fast_program_regs(const struct xs_thread *t, const ucontext_t *uc, greg_t out[NGREG]);
/* The finish trap of a fast call (see trampoline.S): true if this SIGSYS
 * was one, and the context is now the program's after its call. */
bool xs_fast_finish_trap(struct xs_thread *t, ucontext_t *uc);
/* Dispatch ran a plain call nr for the program at the syscall instruction
 * before rip: rewrite its site if it is one the fast path can take. regs:
 * the program's registers at the trap (rax then held nr). */
void xs_rewrite_site(unsigned long rip, long nr, const greg_t *regs);
/* Stub memory (entry/stubs.c): does addr lie in a stub, and which site
 * does it serve? */
bool xs_stub_site(unsigned long addr, unsigned long *stub, unsigned long *site);
#define XS_STUB_SIZE 64
#define XS_STUB_DECLINE 20	/* a stub's path back to the program's syscall */
/* A new stub for a site: call_insn is the program's syscall instruction,
 * site the instruction the rewriter replaces, set_eax the 5 bytes the stub
 * runs in its place (they put the number in eax, as the site did). Placed within 1 GiB of the site; 0 if
 * no memory could be had there. Hold the rewrite lock. */
unsigned long xs_stub_make(unsigned long site, unsigned long call_insn, const unsigned char set_eax[5]);

/* ---- tasks.c: clone family, exec, exit ---- */
/* What became of a call the runtime ran for the program. */
enum xs_outcome {
	XS_RETURNED = 0,	/* count its return now */
	XS_ELSEWHERE,		/* continues in the program's context, or never returns */
	XS_NEW_PROCESS,		/* we are a fork child: counts start from zero */
};
enum xs_outcome xs_task_clone(struct xs_thread *t, long nr, const long *a, ucontext_t *uc, uint64_t t0, long *ret);
long xs_task_exec(struct xs_thread *t, long nr, const long *a, ucontext_t *uc);
void xs_task_exit_thread(struct xs_thread *t, long status);
void xs_task_exit_group(struct xs_thread *t, long status);
void xs_process_end(struct xs_thread *t, const char *reason);
/* Service thread: retire the threads that ended in strict mode, and end
 * the process as the kernel would have if none is left. */
void xs_reap_fated(void);

/* ---- signals.c ---- */
int xs_signals_init(void);
long xs_sig_action(struct xs_thread *t, long sig, const void *act, void *oact, long size);
long xs_sig_procmask(struct xs_thread *t, long how, const void *set, void *oset, long size,
		     ucontext_t *uc);
uint64_t xs_sig_program_view(struct xs_thread *t, uint64_t kernel_mask);
void xs_sig_allow_faults(const ucontext_t *uc);
void xs_sig_ctl_resync(struct xs_thread *t, ucontext_t *uc);
void xs_sig_check_wait(const void *user_set);
/* Block the control signal in the calling thread (start-up). */
void xs_sig_ctl_block(struct xs_thread *t);
long xs_sig_altstack(struct xs_thread *t, const void *ss, void *oss, ucontext_t *uc);
/* The program's rt_sigreturn (the stub re-issues it): take the program's
 * alternate stack from its frame, keep the kernel's the runtime's. */
void xs_sig_sigreturn(struct xs_thread *t, ucontext_t *uc);
/* The program's sigaltstack state of a new task: slot index's, reset
 * (a thread) or a copy of the parent's (vfork). */
void xs_sig_altstack_task(uint32_t index, const struct xs_thread *parent, bool copy);
/* The first thread: the program's sigaltstack is what the kernel has now. */
void xs_sig_altstack_adopt(uint32_t index);
/* Deliver the signals held while the runtime ran the program's call, at
 * the program's context uc. wait_mask: the mask the call installed
 * (sigsuspend, ppoll...) or NULL. */
void xs_sig_deliver_held(struct xs_thread *t, ucontext_t *uc, const uint64_t *wait_mask);
/* Copy a program sigset for a call that installs it temporarily
 * (sigsuspend, ppoll, ...), with the runtime's signals removed. */
long xs_sig_sanitize_mask(const void *user, long size, uint64_t *copy);
void xs_forward_sigsys(siginfo_t *info, ucontext_t *uc);
/* The program's call returned -XS_ETRAPPED: its SIGSYS, at its context. */
void xs_sig_deliver_trap(struct xs_thread *t, ucontext_t *uc);
#define XS_SIGBIT(sig) (1ULL << ((sig) - 1))

/* ---- windows.c: boundaries ---- */
struct xs_window {
	int pid;
	uint32_t seq;
	const char *reason;
	char label[128];
	bool has_label;
	uint64_t start_ns, end_ns, duration_ns;
	uint32_t nthreads;
	uint32_t boundary;		/* marks the slots collected for it */
	uint32_t run_window;		/* the run-wide window it closes, 0: none */
	bool has_profile;
	char profile_file[64];
	uint64_t profile_samples;
	struct xs_counters window;
	struct xs_counters total;
	struct xs_counters scratch;	/* one thread's window, while formatting */
	uint16_t order[XS_NR_SYSCALLS];	/* system calls sorted, while formatting */
};
/* Collect the window that closes now into a mapping the caller releases
 * with xs_window_free; NULL without memory. Hold the window lock; the
 * counts are read from consistent per-thread snapshots. caller, if not
 * NULL, is a snapshot the calling thread took of its own block at the
 * moment it asked for the boundary (/dev/exitscope). */
struct xs_window *xs_window_collect(struct xs_thread *self, const char *reason, const char *label,
				    const struct xs_counters *caller);
/* Make the collected window the new base: the next window starts now. */
void xs_window_commit(struct xs_window *w);
void xs_window_free(struct xs_window *w);
/* Per listed thread of w: the thread, its window and its total counters.
 * Returns false after the last. *i starts at 0. */
bool xs_window_thread(struct xs_window *w, uint32_t *i, struct xs_thread **t, const char **comm,
		      const struct xs_counters **window, const struct xs_counters **total);
void xs_window_lock(void);
void xs_window_unlock(void);
/* Run fn(arg) on the boundary stack, the runtime's own stack for whoever
 * holds the window lock: the deep paths of a boundary (collecting,
 * formatting, writing, rotating the profile) never run on a program's
 * stack, which may be a small alternate signal stack. Hold the window
 * lock. Returns what fn returns. */
long xs_on_boundary_stack(long (*fn)(void *), void *arg);
/* What closing a window shows, and where. */
enum xs_show {
	XS_SHOW_LOG,	/* the log, in the --format the user chose */
	XS_SHOW_NONE,	/* nothing (reset) */
	XS_SHOW_TEXT,	/* the text block, appended to out, whatever --format says */
	XS_SHOW_JSON,	/* the record line, appended to out */
};
/* Close a window now and record it (service thread, /dev/exitscope),
 * showing it as show says (out is used by XS_SHOW_TEXT and XS_SHOW_JSON
 * only). 0 or a negative errno. */
int xs_window_close(const char *reason, const char *label, const struct xs_counters *caller,
		    struct xs_buf *out, enum xs_show show);
/* The same for a run-wide window (run_window > 0: the record carries
 * "run_window"), closed silently. */
int xs_window_close_run(const char *reason, const char *label, uint32_t run_window, enum xs_show show);
/* Append a record line to the process's file, after any earlier lines that
 * could not be written; what fails now is kept for the next try (window
 * lock held). 0 or a negative errno. */
int xs_window_write_record(int pid, struct xs_buf *json);
/* Move the lines not written yet to b (exec hands them to the new image). */
void xs_window_take_unwritten(struct xs_buf *b);
/* Fold dead threads into the retired counts (window lock held). */
void xs_reclaim_dead(void);
int xs_windows_init(void);
/* A consistent copy of t's counters. */
void xs_snapshot(struct xs_thread *t, struct xs_counters *out);

/* ---- profile/sampler.c ---- */
#define XS_SAMPLE_SIG 63		/* the sampler's signal: the program never sees it */
#define XS_PROFILE_STACK 8192		/* dwarf: stack bytes per sample */
/* 199 Hz: thread CPU-time timers fire on scheduler ticks anyway, and at
 * this rate a dwarf sample (about 6.5 KiB, one signal) costs well under 1%. */
#define XS_DEFAULT_FREQUENCY 199
int xs_profile_init(void);
bool xs_profiling(void);
void xs_profile_sample(struct xs_thread *t, ucontext_t *uc);
void xs_profile_map_event(struct xs_thread *t);
void xs_profile_thread_start(struct xs_thread *t);
void xs_profile_thread_stop(struct xs_thread *t);
void xs_profile_drain(void);
void xs_profile_open_window(uint32_t seq);
bool xs_profile_close_window(char name[64], uint64_t *samples);

/* ---- control.c: the service thread ---- */
/* glibc's SIGRTMIN (the kernel's 32 and 33 are glibc's own, for threads),
 * a constant here: the runtime calls no glibc function, and the CLI parses
 * "SIGRTMIN+N" with glibc's value, so both agree. */
#define XS_SIGRTMIN 34
extern int g_ctl_sig;
extern volatile int g_ctl_pending;
extern int g_service_tid;
extern volatile uint32_t g_ctl_epoch;
const char *xs_control_signal_name(void);
int xs_control_start(void);
void xs_control_give_up_signal(void);
void xs_control_poke(void);
/* Replace the control socket with a fresh one, listened on with the
 * calling thread's current credentials (the service thread calls it after
 * it follows the program's credential change). 0 or a negative errno (the
 * old socket then stays). */
int xs_control_rebind(void);
/* Run a control command line ("dump [LABEL]", "reset", and with out only
 * "dump-json [LABEL]"): the closed window's number, -EINVAL for an unknown
 * command, or another -errno. A dump's text block (dump-json: its record
 * line) goes to out if not NULL, else to the log per --format. */
int xs_control_command(const char *line, const char *reason, struct xs_buf *out);

/* ---- run.c: the run file and run-wide windows from inside ---- */
extern int g_run_fd, g_run_cli_fd;
/* EXITSCOPE_RUN ("FD:NAME") as the runtime starts; after_exec: this image
 * was exec'd by a process of the run. */
void xs_run_config(const char *env, bool after_exec);
/* Append EXITSCOPE_RUN=... (and its NUL) for an exec's environment. */
void xs_run_env(struct xs_buf *b);
/* This process (or image) starts: its start or exec line. */
void xs_run_process_start(void);
/* The status exit_group or the last thread's exit gives, for the end line. */
void xs_run_note_exit(long status);
/* The signal the process dies of (signals.c's die_of), for the end line. */
void xs_run_note_signal(int sig);
/* The last window w of this process was collected: its end line, then
 * the log: text (w's block), or the run's summary (DESIGN.md §3.11).
 * whole: false for a vfork child (which shares the parent's memory). */
void xs_run_process_end(const struct xs_window *w, bool whole, const struct xs_buf *text);
/* Does the log show pid's exec and exit blocks? (the run's first process,
 * or every one with --log-each; DESIGN.md §3.11) */
bool xs_run_logs_blocks_of(int pid);
/* This process's comm (/proc/self/comm), for block headers. */
void xs_run_comm(char comm[17]);
/* Close a run-wide window in every live process of the run, this one
 * first (reason "app"); returns when each has written its record. 0 or a
 * negative errno (-ENOENT: not in a run). */
int xs_run_window(const char *label, bool reset);
/* The control signal in the run's first process: a run-wide window, its
 * own block on the log (reason "signal"). -ENOENT when this process is not
 * a run's first, -EWOULDBLOCK while another closer holds the run file:
 * then the caller closes its own window. */
int xs_run_signal_window(void);

/* ---- creds.c: the service thread follows the program's credentials ---- */
int xs_creds_init(void);
/* Program thread t changed its credentials: have the service thread take
 * the same (waits up to 2 s for it). */
void xs_creds_changed(struct xs_thread *t);
/* Service thread: take the credentials asked for, if any; true if it did. */
bool xs_creds_follow(void);

/* ---- devfile.c: /dev/exitscope ---- */
bool xs_devfile_path(const char *user_path);
bool xs_devfile_owns(long fd);
long xs_devfile_open(long flags);
long xs_devfile_call(long nr, const long *a);
/* dup/dup2/dup3/F_DUPFD: to is the file too if from is; a replaced number
 * is no more. */
void xs_devfile_dup(long from, long to);
/* close_range closed [first, last]. */
void xs_devfile_closed_range(unsigned long first, unsigned long last);

/* The JSON entries (each after ", ") of threads reclaimed since the last
 * boundary: listed in the next record, as exited. */
const struct xs_buf *xs_window_reclaimed(void);

/* ---- record.c: a window as JSON and as text ---- */
/* One entry of a record's "threads" list. */
void xs_format_thread(struct xs_buf *b, int tid, const char *comm, bool exited,
		      const struct xs_counters *window, const struct xs_counters *total);
/* Append the record line (JSON) and the log block (text, per g_config). */
void xs_window_format(struct xs_window *w, struct xs_buf *json, struct xs_buf *text);
/* Append the text block, whatever g_config.format says (exitscope dump). */
void xs_window_format_text(struct xs_window *w, struct xs_buf *text);

/* ---- runtime.c: configuration, files, the log ---- */
/* Every variable the runtime reads or passes on starts so; the program
 * never sees them. */
#define XS_ENV_PREFIX "EXITSCOPE_"

struct xs_config {
	char lib[4096];
	char loader[4096];		/* exitscope-ld, for static programs */
	int exe_fd;			/* loaded by exitscope-ld: the program's file, else -1 */
	char dir[4096];
	char preload_orig[4096];
	bool have_preload_orig;
	int log_fd;			/* -1: no log */
	bool no_records;		/* run --no-records: the log only, no files */
	bool fast_path;			/* rewrite hot sites (run --no-fast-path: off) */
	int signal;			/* control signal, 0: none */
	enum { XS_PROFILE_OFF, XS_PROFILE_NONE, XS_PROFILE_FP, XS_PROFILE_DWARF } profile;
	uint32_t frequency;		/* samples per second of thread CPU time */
	uint64_t interval_ms;
	enum { XS_FORMAT_TEXT, XS_FORMAT_GRAMINE, XS_FORMAT_NONE } format;
};
extern struct xs_config g_config;
/* output.c: the output directory, this process's record file and its pid */
extern int g_dir_fd, g_record_fd, g_record_pid;
void xs_log(const char *msg);
void xs_log_buf(const char *data, size_t len);
void xs_warn_once(int *flag, const char *msg);
int xs_write_all(int fd, const void *data, size_t size);
/* Open a file in the output directory without following a symlink:
 * created new (mode), or with append, an existing regular file of ours with
 * one link. The descriptor, or a negative errno (a refusal is said once on
 * the log). */
int xs_output_open(const char *name, bool append, mode_t mode);
/* Open (or keep) this process's exitscope-PID.jsonl: 0 or a negative errno. */
int xs_record_open(void);
/* Append a record line to exitscope-PID.jsonl, whole or not at all. */
int xs_append_record(int pid, const char *data, size_t len);
/* The memfd that carries the window exec closed into the new image. */
struct xs_handoff_header {
	uint64_t magic, json_size, text_size, next_seq;
};
#define XS_HANDOFF_MAGIC 0x3166666f646e6168ULL
int xs_buf_mmap_grow(struct xs_buf *b, size_t need);
void xs_buf_mmap_free(struct xs_buf *b);
/* The same, from and back to a pool of mappings (output.c): a boundary on
 * demand makes no mmap or munmap in steady state. */
int xs_buf_pool_grow(struct xs_buf *b, size_t need);
void xs_buf_pool_release(struct xs_buf *b);
/* Descriptors the program's calls must not reach as they are: the
 * runtime's own (EBADF for the program) and /dev/exitscope's (emulated). */
#define XS_FD_WATCH_MAX (65536 + 128)	/* emulate/fds.c: ABOVE_LIMIT_MAX and room */
extern uint64_t g_fd_watch[XS_FD_WATCH_MAX / 64];
static inline bool xs_fd_watched(long fd)
{
	return (unsigned long)fd < XS_FD_WATCH_MAX && ((g_fd_watch[fd >> 6] >> (fd & 63)) & 1);
}
void xs_fd_watch(int fd, bool on);
bool xs_is_runtime_fd(long fd);
/* fd moved out of the program's reach (above its descriptor limit when
 * there is room, else high below it; where it is when there is no room at
 * all); the original is closed. The new number, or fd if negative. */
long xs_fd_out_of_reach(long fd, bool cloexec);
/* A call that makes a descriptor for the runtime (openat, socket, accept4,
 * eventfd2, memfd_create...): when the program holds every descriptor below
 * its limit (EMFILE), made again with the limit raised for a moment, so it
 * lands above it. */
long xs_fd_make_call(long nr, long a0, long a1, long a2, long a3);
#define xs_fd_make(nr, a, b, c, d) xs_fd_make_call((nr), (long)(a), (long)(b), (long)(c), (long)(d))
/* Make fd a runtime descriptor held in *owner: moved out of reach,
 * close-on-exec, hidden from the program, and *owner kept up to date when
 * the program's dup2 makes it move. *owner and the result: the descriptor
 * or a negative errno. */
#define XS_FD_FORK_SHARED 1u	/* a fork child keeps the parent's copy */
int xs_runtime_fd_adopt(long fd, int *owner, unsigned flags);
/* No longer the runtime's: *owner keeps the number, for the caller to
 * close. */
void xs_runtime_fd_forget(int *owner);
/* Forget and close; *owner = -1. */
void xs_runtime_fd_close(int *owner);
/* Runtime descriptor fd's number in the calling process: another in a
 * process sharing our memory whose dup2 moved it there, -1 if lost. */
int xs_runtime_fd_here(int fd);
/* That child (pid) has exec'd or exited: its moves are forgotten. */
void xs_runtime_fds_vm_end(int pid);
void xs_runtime_fds_reset(void);
long xs_fd_close(long fd);
long xs_fd_close_range(unsigned long first, unsigned long last, unsigned long flags);
long xs_fd_dup_onto(long nr, const long *a);
long xs_fd_rlimit(long nr, const long *a);
/* What an exec passes on to the new image: to the runtime preloaded into
 * it, or to exitscope-ld with the program it is to load (its path as the
 * caller gave it, and the file checked: exe_fd). */
struct xs_exec_target {
	bool loader;
	const char *exe_path;		/* the program's string: read with xs_copy_user */
	int exe_fd;
};
int xs_exec_env(const long *envp_user, char ***out, struct xs_buf *store, int handoff_fd, uint64_t sigmask,
		const struct xs_exec_target *target);
/* emulate/self_exe.c: the program exitscope-ld loaded, as it sees itself.
 * Is the program's string one of the paths of its own executable? */
bool xs_self_exe_path(const char *user_path);
/* readlink/readlinkat of such a path: true, with *ret, when answered. */
bool xs_self_exe_readlink(long nr, const long *a, long *ret);
/* The process's executable as /proc/self/exe would name it (the program's
 * under exitscope-ld), NUL-terminated; the length or a negative errno. */
long xs_self_exe(char *buf, size_t size);
/* Syscalls whose first argument is a file descriptor. */
bool xs_fd_first_arg(long nr);
void xs_runtime_fds_for_exec(bool keep);
/* Is the record file this process's own (not a vfork parent's)? */
bool xs_record_fd_is_callers(void);

#endif
