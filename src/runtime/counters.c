/*
 * Per-thread counter blocks and the thread registry.
 *
 * All of it lives in one anonymous private mapping, the arena: a process
 * header, then fixed 16 KiB slots, one per thread. The arena is marked
 * MADV_WIPEONFORK, so a fork child starts with an empty registry and zero
 * counts without any clean-up. %gs points at the calling thread's slot.
 *
 * A slot is written by its owner only. Readers (process end, exec) stop the
 * world first: they set g_proc->exiting, force a barrier on every running
 * thread (membarrier), and wait until no thread is inside a counting section;
 * a thread that reaches a section afterwards parks until the process is gone
 * (or, if exec fails, until the world resumes).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <asm/prctl.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include "runtime/runtime.h"

#define ARENA_HEADER_SIZE 65536
#define ARENA_SIZE (ARENA_HEADER_SIZE + (size_t)XS_MAX_THREADS * XS_SLOT_SIZE)

_Static_assert(sizeof(struct xs_thread) <= XS_SLOT_SIZE, "a thread block must fit 16 KiB");
_Static_assert(sizeof(struct xs_process) <= ARENA_HEADER_SIZE, "process header too large");

struct xs_process *g_proc;
char *g_slots;		/* the thread blocks (in the arena) */
/* The runtime stacks, one per slot: a guard page, then the stack. Reserved
 * at start (no memory, no access), made usable on a slot's first use. Not
 * wiped on fork: a fork child goes on running on its copy of its parent's. */
#define ALTSTACK_STRIDE XS_ALTSTACK_STRIDE
char *g_altstacks;
static uint64_t g_altstack_ready[XS_MAX_THREADS / 64];
static bool g_have_membarrier;

uint64_t xs_now_mono(void)
{
	struct timespec ts;
	xs_clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t xs_now_real(void)
{
	struct timespec ts;
	xs_clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void xs_block_all_signals(sigset_t *old)
{
	uint64_t all = ~0ULL & ~XS_SIGBIT(SIGSYS) & ~XS_SIGBIT(SIGSEGV) & ~XS_SIGBIT(SIGBUS);
	xs_sys4(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, 8);
}

void xs_restore_signals(const sigset_t *old)
{
	xs_sys4(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, 8);
}

void xs_backoff(unsigned *spins)
{
	/* yield first; then sleep, so that a holder that was preempted gets
	 * the CPU even from a waiter the scheduler favours */
	if ((*spins)++ < 16) {
		xs_sys0(SYS_sched_yield);
	} else {
		struct timespec nap = { 0, 50000 };
		xs_sys2(SYS_nanosleep, &nap, NULL);
	}
}

/* A lock word holds its holder's tid, so a thread can tell that it holds a
 * lock itself: a fault inside the runtime that becomes a fatal signal must
 * not try to take it again (see xs_runtime_lock_held). */
void xs_spin_lock(volatile int *l)
{
	int me = (int)xs_sys0(SYS_gettid);
	unsigned spins = 0;
	for (;;) {
		int expected = 0;
		if (__atomic_compare_exchange_n(l, &expected, me, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		while (*l)
			xs_backoff(&spins);
	}
}

void xs_spin_unlock(volatile int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

bool xs_runtime_lock_held(void)
{
	if (!g_proc)
		return false;
	int me = (int)xs_sys0(SYS_gettid);
	return g_proc->lock == me || g_proc->window_lock == me || g_proc->sigaction_lock == me ||
	       g_proc->devfile_lock == me;
}

static struct xs_thread *slot_at(uint32_t i)
{
	return (struct xs_thread *)(g_slots + (size_t)i * XS_SLOT_SIZE);
}

static void process_open(int pid)
{
	g_proc->pid = pid;
	g_proc->window_start_ns = xs_now_real();
	g_proc->window_start_mono = xs_now_mono();
}

void *xs_map(size_t size, bool wipe_on_fork)
{
	long p = xs_syscall6(SYS_mmap, 0, size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if ((unsigned long)p > -4096UL)
		return NULL;
	if (wipe_on_fork)
		xs_sys3(SYS_madvise, p, size, MADV_WIPEONFORK);
	return (void *)p;
}

int xs_counters_init(void)
{
	char *p = xs_map(ARENA_SIZE, true);
	if (!p)
		return -ENOMEM;
	g_proc = (struct xs_process *)p;
	g_slots = p + ARENA_HEADER_SIZE;
	long a = xs_syscall6(SYS_mmap, 0, ALTSTACK_STRIDE * XS_MAX_THREADS, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if ((unsigned long)a > -4096UL)
		return -ENOMEM;
	g_altstacks = (char *)a;
	if (xs_sys3(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
		g_have_membarrier = true;
	process_open((int)xs_sys0(SYS_getpid));
	return 0;
}

struct xs_thread *xs_slot(uint32_t i)
{
	return slot_at(i);
}

uint32_t xs_slot_index(const struct xs_thread *t)
{
	return (uint32_t)(((const char *)t - g_slots) / XS_SLOT_SIZE);
}

char *xs_altstack_base(uint32_t index)
{
	return g_altstacks + index * ALTSTACK_STRIDE + XS_ALTSTACK_GUARD;
}

bool xs_on_runtime_stack(const struct xs_thread *t, unsigned long sp)
{
	if (!t || !g_altstacks)
		return false;
	unsigned long base = (unsigned long)xs_altstack_base(xs_slot_index(t));
	return sp - base <= XS_ALTSTACK_SIZE;
}

int xs_altstack_install(struct xs_thread *t)
{
	uint32_t i = xs_slot_index(t);
	char *base = xs_altstack_base(i);
	uint64_t bit = 1ULL << (i & 63);
	if (!(__atomic_load_n(&g_altstack_ready[i / 64], __ATOMIC_ACQUIRE) & bit)) {
		long r = xs_sys3(SYS_mprotect, base, XS_ALTSTACK_SIZE, PROT_READ | PROT_WRITE);
		if (r < 0)
			return (int)r;
		__atomic_fetch_or(&g_altstack_ready[i / 64], bit, __ATOMIC_RELEASE);
	}
	stack_t ss = { .ss_sp = base, .ss_flags = 0, .ss_size = XS_ALTSTACK_SIZE };
	/* EPERM: already on it (a fork child in its parent's handler) */
	long r = xs_sys2(SYS_sigaltstack, &ss, NULL);
	return r == -EPERM ? 0 : (int)r;
}

/* May slot t be handed out? Its runtime stack must not be in use: a thread
 * that exited keeps running on it for a few instructions after it marked
 * its block dead, and a zombie leader never leaves. */
static bool slot_stack_free(const struct xs_thread *t)
{
	return t->tid == 0 || xs_sys2(SYS_kill, t->tid, 0) == -ESRCH;
}

void xs_lock_blocked(volatile int *l, sigset_t *old)
{
	xs_block_all_signals(old);
	xs_spin_lock(l);
}

void xs_unlock_blocked(volatile int *l, const sigset_t *old)
{
	xs_spin_unlock(l);
	xs_restore_signals(old);
}

void xs_registry_lock(sigset_t *old)
{
	xs_lock_blocked(&g_proc->lock, old);
}

void xs_registry_unlock(const sigset_t *old)
{
	xs_unlock_blocked(&g_proc->lock, old);
}

/* Dead threads keep their slots until a boundary has reported them; the
 * service thread reclaims them (windows.c) and is asked to when many wait. */
static struct xs_thread *thread_alloc_in(enum xs_task_kind kind, int pid, uint32_t want)
{
	static int warned;
	sigset_t old;
	struct xs_thread *t = NULL;

	xs_registry_lock(&old);
	if (want < XS_MAX_THREADS) {
		t = slot_at(want);
		if (g_proc->slots_used <= want)
			g_proc->slots_used = want + 1;
	}
	for (uint32_t i = 0; !t && i < g_proc->slots_used; i++)
		if (slot_at(i)->state == XS_SLOT_FREE && slot_stack_free(slot_at(i))) {
			t = slot_at(i);
			break;
		}
	if (!t && g_proc->slots_used < XS_MAX_THREADS)
		t = slot_at(g_proc->slots_used++);
	if (t) {
		memset(t, 0, offsetof(struct xs_thread, c));
		memset(&t->c, 0, sizeof(t->c));
		t->self = t;
		t->fast_key = -(long)t;
		t->fast_stack = xs_altstack_base(xs_slot_index(t)) + XS_ALTSTACK_SIZE;
		t->kind = kind;
		t->pid = pid;
		t->gen = ++g_proc->gen;
		t->state = XS_SLOT_LIVE;
		if (kind == XS_KIND_THREAD)
			g_proc->live++;
	}
	xs_registry_unlock(&old);
	if (!t)
		xs_warn_once(&warned, "exitscope: more than 4096 threads since the last window; "
				      "new threads are not counted\n");
	return t;
}

struct xs_thread *xs_thread_alloc(enum xs_task_kind kind, int pid)
{
	return thread_alloc_in(kind, pid, XS_MAX_THREADS);
}

void xs_thread_free(struct xs_thread *t)
{
	sigset_t old;
	xs_block_all_signals(&old);
	xs_spin_lock(&g_proc->lock);
	if (t->kind == XS_KIND_THREAD && t->state == XS_SLOT_LIVE)
		g_proc->live--;
	t->state = XS_SLOT_FREE;
	t->fast_key = 0;	/* a stale %gs finds no block */
	xs_spin_unlock(&g_proc->lock);
	xs_restore_signals(&old);
}

uint32_t xs_thread_retire(struct xs_thread *t)
{
	uint32_t live;
	xs_usage_thread(0, &t->usage_at_exit, t->comm);
	xs_spin_lock(&g_proc->lock);
	t->state = XS_SLOT_DEAD;
	live = --g_proc->live;
	uint32_t dead = ++g_proc->dead;
	xs_spin_unlock(&g_proc->lock);
	if (dead >= XS_MAX_THREADS / 4)
		xs_control_poke();
	return live;
}

/* Make t the calling thread's block and turn dispatch on. */
int xs_thread_activate(struct xs_thread *t)
{
	t->tid = (int)xs_sys0(SYS_gettid);
	if (t->kind != XS_KIND_THREAD)
		t->pid = t->tid;
	/* before any program code runs on the thread, and before dispatch:
	 * SIGSYS runs on it */
	xs_altstack_install(t);
	/* faults and preemptions count from here (windows.c) */
	xs_usage_thread(0, &t->usage_start, NULL);
	xs_profile_thread_start(t);
	/* Between its slot's allocation (by the parent, at clone) and here, a
	 * thread has no tid and no usage base: a boundary must not list it
	 * (its counts are all zero until now). */
	__atomic_store_n(&t->active, 1, __ATOMIC_RELEASE);
	return xs_dispatch_enable();
}

/* In a fork child: the arena came back zeroed. Open this process's state
 * and give the calling thread a block. */
void xs_fork_child_reset(bool ctl_view_blocked, uint32_t parent_index)
{
	process_open((int)xs_sys0(SYS_getpid));
	xs_runtime_fds_reset();
	xs_record_open();	/* now, while the child has the parent's rights */
	/* the parent's slot: its runtime stack (and the program's sigaltstack
	 * state, signals.c) are the ones this thread has */
	struct xs_thread *t = thread_alloc_in(XS_KIND_THREAD, g_proc->pid, parent_index);
	if (!t)
		return;
	t->ctl_view_blocked = ctl_view_blocked;
	t->ctl_epoch = g_ctl_epoch;
	if (xs_profile_init() < 0)
		g_config.profile = XS_PROFILE_OFF;
	xs_fast_fork_child();
	xs_thread_activate(t);
	if (xs_windows_init() < 0 || xs_control_start() < 0)
		xs_log("exitscope: cannot start the service thread in a fork child; "
		       "its windows close only at exit\n");
}

void xs_park(void)
{
	while (g_proc->exiting)
		xs_sys4(SYS_futex, &g_proc->exiting, FUTEX_WAIT_PRIVATE, 1, NULL);
}

void xs_world_stop(struct xs_thread *self, sigset_t *old)
{
	xs_block_all_signals(old);
	if (self->kind != XS_KIND_THREAD)
		return;		/* a vfork child: its process is itself */
	__atomic_store_n(&g_proc->exiting, 1, __ATOMIC_SEQ_CST);
	if (g_proc->live <= 1)
		return;
	if (g_have_membarrier)
		xs_sys3(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i < g_proc->slots_used; i++) {
		struct xs_thread *t = slot_at(i);
		if (t == self || t->kind != XS_KIND_THREAD || t->state != XS_SLOT_LIVE)
			continue;
		/* A thread inside a section leaves it within a few instructions
		 * unless it was preempted; give it up to about a second. */
		unsigned spins = 0;
		while ((t->seq & 1) && spins < 20000)
			xs_backoff(&spins);
	}
}

void xs_world_resume(const sigset_t *old)
{
	if (g_proc->exiting) {
		__atomic_store_n(&g_proc->exiting, 0, __ATOMIC_SEQ_CST);
		xs_sys3(SYS_futex, &g_proc->exiting, FUTEX_WAKE_PRIVATE, 0x7fffffff);
	}
	xs_restore_signals(old);
}

/* A signal arrived inside a counting section and was held back blocked and
 * re-queued (signals.c). Unblock it now that the section is complete. */
void xs_release_deferred(struct xs_thread *t)
{
	uint64_t mask = t->deferred;
	t->deferred = 0;
	xs_sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &mask, NULL, 8);
}

static uint64_t parse_u64(const char *s, const char **end)
{
	uint64_t v = 0;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (uint64_t)(*s++ - '0');
	if (end)
		*end = s;
	return v;
}

static void usage_of(int who, struct xs_usage *u)
{
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	xs_sys2(SYS_getrusage, who, &ru);
	u->minor_faults = (uint64_t)ru.ru_minflt;
	u->major_faults = (uint64_t)ru.ru_majflt;
	u->preemptions = (uint64_t)ru.ru_nivcsw;
}

static int g_task_dir = -1;	/* /proc/self/task of this process */

/* Open /proc/self/task for this process (start-up, fork children). */
void xs_usage_init(void)
{
	xs_runtime_fd_adopt(xs_fd_make(SYS_openat, AT_FDCWD, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0),
			    &g_task_dir, 0);
}

static long read_task_file(int tid, const char *name, char *buf, size_t size)
{
	char path[64];
	struct xs_buf p = { path, 0, sizeof(path), false, NULL };
	if (g_task_dir < 0)
		xs_buf_add(&p, "/proc/self/task/");
	xs_buf_u64(&p, (uint64_t)tid, 0);
	xs_buf_addc(&p, '/');
	xs_buf_add(&p, name);
	xs_buf_addc(&p, 0);
	long fd = xs_fd_make(SYS_openat, g_task_dir >= 0 ? g_task_dir : AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	long n = xs_sys3(SYS_read, fd, buf, size - 1);
	xs_sys1(SYS_close, fd);
	if (n < 0)
		return n;
	buf[n] = 0;
	return n;
}

long xs_read_proc(const char *path, char *out, size_t size)
{
	long fd = xs_fd_make(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	long n = xs_sys3(SYS_read, fd, out, size);
	xs_sys1(SYS_close, fd);
	return n;
}

bool xs_self_stat(unsigned long *f, int n)
{
	char buf[1024];
	long got = xs_read_proc("/proc/self/stat", buf, sizeof(buf) - 1);
	if (got <= 0)
		return false;
	buf[got] = 0;
	const char *p = strrchr(buf, ')');	/* the name may hold anything */
	if (!p)
		return false;
	memset(f, 0, (size_t)(n + 1) * sizeof(*f));
	/* from field 3, the state letter (0 here) */
	for (int field = 3; field <= n && *p; field++) {
		while (*p == ' ' || *p == ')')
			p++;
		f[field] = xs_strtoul(p, NULL, 10);
		while (*p && *p != ' ')
			p++;
	}
	return true;
}

char xs_task_state(int tid)
{
	char buf[512];
	if (read_task_file(tid, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	const char *s = strrchr(buf, ')');
	return s && s[1] == ' ' ? s[2] : 0;
}

/* Faults, preemptions and name of thread tid (0: the caller) so far. */
void xs_usage_thread(int tid, struct xs_usage *u, char comm[16])
{
	memset(u, 0, sizeof(*u));
	if (comm)
		memset(comm, 0, 16);
	if (tid == 0) {
		usage_of(RUSAGE_THREAD, u);
		if (comm)
			xs_sys5(SYS_prctl, PR_GET_NAME, comm, 0, 0, 0);
		return;
	}
	char buf[4096];
	if (read_task_file(tid, "stat", buf, sizeof(buf)) > 0) {
		/* "tid (comm) state ppid pgrp session tty tpgid flags minflt
		 * cminflt majflt ..." */
		const char *open = strchr(buf, '('), *s = strrchr(buf, ')');
		if (comm && open && s && s > open) {
			size_t n = (size_t)(s - open - 1);
			memcpy(comm, open + 1, n < 15 ? n : 15);
		}
		for (int field = 0; s && *s && field < 10; s++)
			if (*s == ' ') {
				field++;
				if (field == 8)
					u->minor_faults = parse_u64(s + 1, NULL);
				if (field == 10)
					u->major_faults = parse_u64(s + 1, NULL);
			}
	}
	if (read_task_file(tid, "status", buf, sizeof(buf)) > 0) {
		const char *s = strstr(buf, "nonvoluntary_ctxt_switches:");
		if (s) {
			s += strlen("nonvoluntary_ctxt_switches:");
			while (*s == ' ' || *s == '\t')
				s++;
			u->preemptions = parse_u64(s, NULL);
		}
	}
}
