/*
 * Window boundaries. A boundary reads every thread's block as a consistent
 * snapshot (the owner's seq is even before and after the copy) and reports
 * snapshot minus base, the thread's snapshot at the previous boundary. Each
 * call is counted once, by its thread, so it lands in exactly one window,
 * and the program's threads never wait for the reader.
 *
 * Ownership: the bases (one per slot, in a mapping of their own) and the
 * retired counts belong to whoever holds the window lock: the service
 * thread for boundaries on demand, the exiting thread (with the world
 * stopped) for the last window. A slot's generation tells a base that
 * belongs to an earlier thread of the same slot from one that is current.
 * Dead threads keep their slot until a boundary has reported them.
 *
 * Faults and preemptions have one definition at every level. A thread's
 * count is the kernel's count for that thread (RUSAGE_THREAD for the caller,
 * /proc/self/task/TID/stat and status for the others, the caller's own
 * reading as it exits) minus the count when the runtime activated the
 * thread: for the first thread of an image, when the runtime started (the
 * loader's faults before it are not the program's to count), for later
 * threads and fork children, their first instruction under the runtime.
 * Its windows are differences of those readings, so they add up to its
 * total. The process's window and total are the sums of its threads' values
 * from the same readings (live, dead and reclaimed ones), plus, for totals,
 * the images before an exec; they are never read from RUSAGE_SELF, which
 * also counts the loader, the runtime's service thread and whatever the
 * threads did between their birth and their activation. The service thread
 * is the runtime's, not the program's: its faults are in no count.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "runtime/runtime.h"

struct slot_window {
	uint32_t gen;			/* the thread the base belongs to */
	uint32_t boundary;		/* last boundary that collected it */
	bool final;			/* the thread was dead when collected: snap is its last count */
	struct xs_usage usage_base, usage_snap;
	char comm[16];
	struct xs_counters base;
	struct xs_counters snap;
};

static struct slot_window *g_slot_windows;
/* The boundary stack: a guard page, then BOUNDARY_STACK_SIZE bytes. The
 * deepest path measured with -fstack-usage needs well under 32 KiB. */
#define BOUNDARY_STACK_SIZE (256 * 1024)
static char *g_boundary_stack;
/* Reused for every boundary (window lock): mapping and unmapping in a
 * process with many threads costs TLB shootdowns on every CPU it runs on. */
static struct xs_window *g_window;
static struct xs_buf g_json = { .grow = xs_buf_mmap_grow }, g_text = { .grow = xs_buf_mmap_grow };
static uint32_t g_boundary;		/* window lock */
static struct xs_buf g_unwritten = { .grow = xs_buf_mmap_grow };	/* window lock */
static struct xs_buf g_reclaimed = { .grow = xs_buf_mmap_grow };	/* window lock */

const struct xs_buf *xs_window_reclaimed(void)
{
	return &g_reclaimed;
}

int xs_windows_init(void)
{
	size_t size = (size_t)XS_MAX_THREADS * sizeof(struct slot_window);
	if (g_slot_windows) {
		/* A fork child: the mapping came back wiped. The buffers are
		 * dropped, not emptied: the fork may have come between another
		 * thread's mremap of one and its store of the new address, and
		 * what they hold is the parent's. Their pages stay mapped, shared
		 * copy-on-write with the parent until it writes them. */
		struct xs_buf fresh = { .grow = xs_buf_mmap_grow };
		g_json = g_text = g_unwritten = g_reclaimed = fresh;
		return 0;
	}
	g_slot_windows = xs_map(size, true);
	if (!g_slot_windows)
		return -ENOMEM;
	g_boundary_stack = xs_map(4096 + BOUNDARY_STACK_SIZE, false);
	if (g_boundary_stack)
		xs_sys3(SYS_mprotect, g_boundary_stack, 4096, PROT_NONE);
	g_window = xs_map(sizeof(struct xs_window), false);
	g_json.len = g_text.len = 0;	/* a fork child's copies are its own */
	return 0;
}

void xs_window_lock(void)
{
	xs_spin_lock(&g_proc->window_lock);
}

void xs_window_unlock(void)
{
	xs_spin_unlock(&g_proc->window_lock);
}

/* Leaving the runtime stack for the boundary stack with frames still live
 * on it: a signal would land at the runtime stack's top (the kernel enters
 * an SA_ONSTACK handler there whenever the thread is not on it) and
 * overwrite them. So while fn runs, the kernel's sigaltstack is the free
 * part of the runtime stack, below those frames. */
struct below {
	long (*fn)(void *);
	void *arg;
	char *base;
	unsigned long used_from;
	const sigset_t *mask;
};

static long run_below(void *p)
{
	struct below *b = p;
	stack_t part = { b->base, 0, (b->used_from - (unsigned long)b->base) & ~15UL };
	stack_t whole = { b->base, 0, XS_ALTSTACK_SIZE };
	sigset_t blocked;
	xs_sys2(SYS_sigaltstack, &part, NULL);
	xs_restore_signals(b->mask);
	long r = b->fn(b->arg);
	xs_block_all_signals(&blocked);
	xs_sys2(SYS_sigaltstack, &whole, NULL);
	return r;
}

long xs_on_boundary_stack(long (*fn)(void *), void *arg)
{
	char *lo = g_boundary_stack + 4096, *hi = lo + BOUNDARY_STACK_SIZE;
	char *sp = __builtin_frame_address(0);
	if (!g_boundary_stack || (sp >= lo && sp < hi))
		return fn(arg);	/* (no stack: the caller's, as before) */
	/* on a thread's runtime stack (a handler)? which slot's, from sp
	 * alone: at start-up and in the service thread there is no block */
	unsigned long here = (unsigned long)sp - 512;
	unsigned long off = here - (unsigned long)g_altstacks;
	if (!g_altstacks || off >= XS_MAX_THREADS * XS_ALTSTACK_STRIDE)
		return xs_call_on_stack(hi, fn, arg);
	sigset_t old;
	xs_block_all_signals(&old);
	struct below b = { fn, arg, xs_altstack_base((uint32_t)(off / XS_ALTSTACK_STRIDE)), here, &old };
	long r = xs_call_on_stack(hi, run_below, &b);
	xs_restore_signals(&old);
	return r;
}

void xs_snapshot(struct xs_thread *t, struct xs_counters *out)
{
	unsigned spins = 0;
	for (;;) {
		uint32_t before = __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE);
		if (before & 1) {
			xs_backoff(&spins);
			continue;
		}
		memcpy(out, &t->c, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&t->seq, __ATOMIC_RELAXED) == before)
			return;
	}
}

static void counters_sub(struct xs_counters *dst, const struct xs_counters *a, const struct xs_counters *b)
{
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
	uint64_t *d = (uint64_t *)dst;
	for (size_t i = 0; i < sizeof(*dst) / sizeof(uint64_t); i++)
		d[i] = x[i] - y[i];
}

/* The thread's faults and preemptions since its activation (see the top of
 * the file), and its name; self: the caller. Never below floor, the
 * previous reading: a reading that failed (zeros) must not run backwards. */
static void thread_usage(const struct xs_thread *t, bool self, const struct xs_usage *floor,
			 struct xs_usage *u, char comm[16])
{
	struct xs_usage raw;
	if (t->state == XS_SLOT_LIVE) {
		xs_usage_thread(self ? 0 : t->tid, &raw, comm);
	} else {
		raw = t->usage_at_exit;
		if (comm)
			memcpy(comm, t->comm, 16);
	}
	const uint64_t *r = (const uint64_t *)&raw, *s = (const uint64_t *)&t->usage_start;
	const uint64_t *f = (const uint64_t *)floor;
	uint64_t *out = (uint64_t *)u;
	for (size_t i = 0; i < sizeof(*u) / sizeof(uint64_t); i++) {
		out[i] = r[i] > s[i] ? r[i] - s[i] : 0;
		if (out[i] < f[i])
			out[i] = f[i];
	}
}

static void set_usage(struct xs_counters *c, const struct xs_usage *u)
{
	c->minor_faults = u->minor_faults;
	c->major_faults = u->major_faults;
	c->preemptions = u->preemptions;
}

static bool listed(const struct xs_thread *t)
{
	return t->kind == XS_KIND_THREAD && t->state != XS_SLOT_FREE &&
	       __atomic_load_n(&t->active, __ATOMIC_ACQUIRE);
}

/* A thread's base, or zero for a thread born since the last boundary. */
static void fresh_base(struct slot_window *sw, const struct xs_thread *t)
{
	if (sw->gen == t->gen)
		return;
	memset(&sw->base, 0, sizeof(sw->base));
	memset(&sw->usage_base, 0, sizeof(sw->usage_base));
	sw->gen = t->gen;
}

struct xs_window *xs_window_collect(struct xs_thread *self, const char *reason, const char *label,
				    const struct xs_counters *caller)
{
	struct xs_window *w = g_window;
	if (w && (!self || self->kind == XS_KIND_THREAD)) {
		memset(w, 0, offsetof(struct xs_window, scratch));
	} else {
		w = xs_map(sizeof(struct xs_window), false);
		if (!w)
			return NULL;
	}
	bool whole_process = !self || self->kind == XS_KIND_THREAD;

	w->pid = whole_process ? g_proc->pid : self->pid;
	w->seq = whole_process ? g_proc->seq : 0;
	w->reason = reason;
	if (label) {
		size_t n = strlen(label);
		if (n >= sizeof(w->label)) {
			/* cut at a character boundary, not inside a UTF-8 sequence */
			n = sizeof(w->label) - 1;
			for (size_t k = 0; k < 3 && n > 0 && ((unsigned char)label[n] & 0xc0) == 0x80; k++)
				n--;
		}
		memcpy(w->label, label, n);
		w->has_label = true;
	}
	w->end_ns = xs_now_real();
	if (!whole_process) {
		/* a vfork child: one thread, one window, no service thread */
		w->start_ns = w->end_ns;
		w->nthreads = 1;
		xs_counters_add(&w->window, &self->c);
		struct xs_usage u, zero = { 0, 0, 0 };
		thread_usage(self, true, &zero, &u, NULL);
		set_usage(&w->window, &u);
		w->total = w->window;
		return w;
	}
	w->start_ns = g_proc->window_start_ns;
	w->duration_ns = xs_now_mono() - g_proc->window_start_mono;
	w->boundary = ++g_boundary;
	for (uint32_t i = 0; i < g_proc->slots_used; i++) {
		struct xs_thread *t = xs_slot(i);
		if (!listed(t))
			continue;
		struct slot_window *sw = &g_slot_windows[i];
		fresh_base(sw, t);
		if (t == self && caller)
			sw->snap = *caller;
		else
			xs_snapshot(t, &sw->snap);
		sw->final = t->state != XS_SLOT_LIVE;
		thread_usage(t, t == self, &sw->usage_base, &sw->usage_snap, sw->comm);
		set_usage(&sw->snap, &sw->usage_snap);
		set_usage(&sw->base, &sw->usage_base);
		sw->boundary = w->boundary;
		counters_sub(&w->scratch, &sw->snap, &sw->base);
		xs_counters_add(&w->window, &w->scratch);
		xs_counters_add(&w->total, &sw->snap);
		w->nthreads++;
	}
	xs_counters_add(&w->window, &g_proc->retired_window);
	xs_counters_add(&w->total, &g_proc->retired);
	xs_counters_add(&w->total, &g_proc->base_total);
	return w;
}

bool xs_window_thread(struct xs_window *w, uint32_t *i, struct xs_thread **t, const char **comm,
		      const struct xs_counters **window, const struct xs_counters **total)
{
	if (!g_slot_windows || w->boundary == 0) {
		/* a vfork child's window: its only thread */
		static char own[16];
		struct xs_usage u;
		if ((*i)++ != 0)
			return false;
		*t = xs_self();
		xs_usage_thread(0, &u, own);
		*comm = own;
		*window = *total = &w->window;
		return true;
	}
	while (*i < g_proc->slots_used) {
		uint32_t k = (*i)++;
		struct slot_window *sw = &g_slot_windows[k];
		if (sw->boundary != w->boundary)
			continue;
		*t = xs_slot(k);
		*comm = sw->comm;
		counters_sub(&w->scratch, &sw->snap, &sw->base);
		*window = &w->scratch;
		*total = &sw->snap;
		return true;
	}
	return false;
}

/* Fold a dead slot whose last counts are in snap into the retired counts;
 * window lock held. in_window: its counts since the base are already in a
 * reported window. */
static void retire_slot(uint32_t i, bool in_window)
{
	struct slot_window *sw = &g_slot_windows[i];
	struct xs_thread *t = xs_slot(i);
	if (!in_window) {
		/* its last window, listed at the next boundary */
		counters_sub(&sw->snap, &sw->snap, &sw->base);
		xs_counters_add(&g_proc->retired_window, &sw->snap);
		struct xs_counters *total = &sw->base;
		xs_counters_add(total, &sw->snap);
		xs_buf_add(&g_reclaimed, ", ");
		xs_format_thread(&g_reclaimed, t->tid, t->comm, true, &sw->snap, total);
		sw->snap = *total;
	}
	xs_counters_add(&g_proc->retired, &sw->snap);
	sigset_t old;
	xs_registry_lock(&old);
	t->state = XS_SLOT_FREE;
	g_proc->dead--;
	xs_registry_unlock(&old);
}

void xs_window_commit(struct xs_window *w)
{
	if (!g_slot_windows || w->boundary == 0)
		return;
	memset(&g_proc->retired_window, 0, sizeof(g_proc->retired_window));
	g_reclaimed.len = 0;
	for (uint32_t i = 0; i < g_proc->slots_used; i++) {
		struct slot_window *sw = &g_slot_windows[i];
		if (sw->boundary != w->boundary)
			continue;
		/* Only a thread that was already dead when its snapshot was taken
		 * is done; one that died since then has calls after the snapshot,
		 * for the next window. */
		if (sw->final) {
			retire_slot(i, true);
			continue;
		}
		sw->base = sw->snap;
		sw->usage_base = sw->usage_snap;
	}
	g_proc->seq++;
	g_proc->window_start_ns = w->end_ns;
	g_proc->window_start_mono = xs_now_mono();
}

void xs_reclaim_dead(void)
{
	xs_profile_drain();	/* the dead threads' last samples first */
	for (uint32_t i = 0; i < g_proc->slots_used; i++) {
		struct xs_thread *t = xs_slot(i);
		if (t->kind != XS_KIND_THREAD || t->state != XS_SLOT_DEAD)
			continue;
		struct slot_window *sw = &g_slot_windows[i];
		fresh_base(sw, t);
		xs_snapshot(t, &sw->snap);
		thread_usage(t, false, &sw->usage_base, &sw->usage_snap, NULL);
		set_usage(&sw->snap, &sw->usage_snap);
		set_usage(&sw->base, &sw->usage_base);
		retire_slot(i, false);
	}
}

void xs_window_take_unwritten(struct xs_buf *b)
{
	xs_buf_addn(b, g_unwritten.data, g_unwritten.len);
	g_unwritten.len = 0;
}

void xs_window_free(struct xs_window *w)
{
	if (w && w != g_window)
		xs_sys2(SYS_munmap, w, sizeof(*w));
}

int xs_window_write_record(int pid, struct xs_buf *json)
{
	static int warned;
	xs_buf_addn(&g_unwritten, json->data, json->len);
	if (g_unwritten.failed)
		return -ENOMEM;
	int r = xs_append_record(pid, g_unwritten.data, g_unwritten.len);
	if (r == 0) {
		g_unwritten.len = 0;
		return 0;
	}
	if (r != -EPERM)	/* a refused file is on the log already */
		xs_warn_once(&warned, "exitscope: cannot write the stats record; keeping it in memory and "
				      "retrying at the next window\n");
	return r;
}

struct close_args {
	uint32_t run_window;
	const char *reason, *label;
	const struct xs_counters *caller;
	struct xs_buf *out;
	enum xs_show show;
};

static long close_locked(void *arg)
{
	struct close_args *c = arg;
	struct xs_thread *self = c->caller ? xs_self() : NULL;
	struct xs_window *w = xs_window_collect(self, c->reason, c->label, c->caller);
	if (!w)
		return -ENOMEM;
	w->run_window = c->run_window;
	g_json.len = g_text.len = 0;
	g_json.failed = g_text.failed = false;
	w->has_profile = xs_profile_close_window(w->profile_file, &w->profile_samples);
	xs_window_format(w, &g_json, c->show == XS_SHOW_LOG ? &g_text : NULL);
	int r = g_json.failed ? -ENOMEM : xs_window_write_record(w->pid, &g_json);
	if (c->show == XS_SHOW_LOG && g_text.len)
		xs_log_buf(g_text.data, g_text.len);
	else if (c->show == XS_SHOW_TEXT && c->out)
		xs_window_format_text(w, c->out);
	else if (c->show == XS_SHOW_JSON && c->out)
		xs_buf_addn(c->out, g_json.data, g_json.len);
	xs_window_commit(w);
	xs_profile_open_window(g_proc->seq);
	xs_window_free(w);
	return r;
}

int xs_window_close(const char *reason, const char *label, const struct xs_counters *caller,
		    struct xs_buf *out, enum xs_show show)
{
	struct close_args c = { 0, reason, label, caller, out, show };
	xs_window_lock();
	int r = (int)xs_on_boundary_stack(close_locked, &c);
	xs_window_unlock();
	return r;
}

int xs_window_close_run(const char *reason, const char *label, uint32_t run_window, enum xs_show show)
{
	struct close_args c = { run_window, reason, label, NULL, NULL, show };
	xs_window_lock();
	int r = (int)xs_on_boundary_stack(close_locked, &c);
	xs_window_unlock();
	return r;
}
