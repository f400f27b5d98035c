/*
 * The sampler: a CPU profile of every program thread, written as perf.data
 * files that rotate with the windows (window N of process PID goes to
 * exitscope-PID-N.data).
 *
 * Each thread arms its own timer on its CPU-time clock; it fires the
 * reserved sampling signal (XS_SAMPLE_SIG, which the program never sees
 * and cannot block) at that thread. The handler, async-signal-safe, copies
 * the program's context into the thread's own ring: the instruction
 * pointer and a frame-pointer walk (fp), or the registers and a copy of
 * the stack (dwarf). The signal is in the SIGSYS handler's mask, so a
 * sample that falls while the runtime runs a trapped call waits and lands
 * at the program's call site when the call returns.
 *
 * Ownership: a ring has one producer (its thread; a sample that would
 * nest inside another write to the same ring is counted lost) and one
 * consumer, whoever holds the window lock: the service thread drains every
 * ring every 50 ms and at each boundary, writing the samples to the open
 * file, and rotates the file at each boundary. Every sample lands in
 * exactly one file; a full ring counts samples as lost, and the file
 * records them as lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include "runtime/runtime.h"
#include "runtime/profile/perfdata.h"

#define RING_SIZE (256 * 1024)
#define FP_MAX_FRAMES 127

enum { REC_PAD = 1, REC_SAMPLE, REC_MAP };

struct ring_rec {
	uint32_t size;		/* whole record, 8-byte aligned */
	uint16_t type;
	uint16_t ncallers;	/* fp */
	uint32_t stack_size;	/* dwarf */
	uint32_t pad;
	uint64_t period;	/* thread CPU ns since the thread's previous sample */
	uint64_t time;
	uint64_t ip;
	/* fp: ncallers return addresses; dwarf: XS_PERF_REG_COUNT regs, then
	 * stack_size bytes */
};

struct ring {
	volatile uint64_t head;		/* producer */
	volatile uint64_t tail;		/* consumer */
	volatile uint64_t lost;		/* producer */
	uint64_t lost_reported;		/* consumer */
	char data[RING_SIZE - 32];
};

struct profile {
	struct xs_perf_file file;
	bool open;
	uint32_t seq;
	char name[64];
	uint32_t announced[XS_MAX_THREADS];	/* gen whose COMM is in the file */
};

static struct ring *g_rings;		/* one per slot, WIPEONFORK */
static struct profile *g_profile;	/* window lock */
static uint64_t g_period_ns;

static struct ring *ring_of(struct xs_thread *t)
{
	return &g_rings[((char *)t - (char *)xs_slot(0)) / XS_SLOT_SIZE];
}

bool xs_profiling(void)
{
	return g_config.profile != XS_PROFILE_OFF && g_rings;
}

/* ---- the producer: in the thread, in the sampling signal's handler ---- */

static void *ring_reserve(struct ring *r, uint32_t size)
{
	const uint64_t cap = sizeof(r->data);
	uint64_t head = r->head, tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint64_t off = head % cap, pad = off + size > cap ? cap - off : 0;
	if (head + pad + size - tail > cap)
		return NULL;
	if (pad) {
		struct ring_rec *p = (struct ring_rec *)&r->data[off];
		p->size = (uint32_t)pad;
		p->type = REC_PAD;
		__atomic_store_n(&r->head, head + pad, __ATOMIC_RELEASE);
		off = 0;
	}
	return &r->data[off];
}

/* Publish the reserved record (reserve has already published its pad). */
static void ring_commit(struct ring *r, struct ring_rec *rec)
{
	__atomic_store_n(&r->head, r->head + rec->size, __ATOMIC_RELEASE);
}

/* Copy up to size bytes of the stack from sp; stops at the first page that
 * cannot be read. Returns the bytes copied. */
static uint32_t copy_stack(void *dst, uint64_t sp, uint32_t size)
{
	uint32_t done = 0;
	while (done < size) {
		uint64_t at = sp + done;
		uint32_t chunk = (uint32_t)(4096 - (at & 4095));
		if (chunk > size - done)
			chunk = size - done;
		if (xs_copy_user((char *)dst + done, (const void *)at, chunk) < 0)
			break;
		done += chunk;
	}
	return done;
}

/* The runtime's own code (the linker's bounds of this object's text). */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char __etext[] __attribute__((visibility("hidden")));

/*
 * A clone or vfork that the runtime continues in the program's context
 * (boundary.S's stubs, then xs_redirect_parent) runs runtime code with the
 * program's signal mask, so samples land there, the clone's kernel time
 * among them (delivered at the stub's first instruction). While the
 * redirect is pending they are the program's call: its syscall, its stack
 * and frame pointer as they were. The few instructions of the stub after
 * that (back to the program) have no frame to name: lost, which the
 * profile says, rather than the runtime's.
 */
enum redirect_sample { NOT_REDIRECT, REDIRECT_CALL, REDIRECT_LOST };

static enum redirect_sample redirect_sample(const struct xs_thread *t, const greg_t *g, greg_t out[NGREG])
{
	uint64_t ip = (uint64_t)g[REG_RIP];
	if (ip < (uint64_t)__ehdr_start || ip >= (uint64_t)__etext)
		return NOT_REDIRECT;
	if (!t->redirect_depth)
		return ip >= (uint64_t)xs_region_start && ip < (uint64_t)xs_region_end ? REDIRECT_LOST : NOT_REDIRECT;
	const struct xs_redirect *e = &t->redirect[t->redirect_depth - 1];
	memcpy(out, g, sizeof(greg_t) * NGREG);
	out[REG_RIP] = (greg_t)((char *)e->rip - 2);
	out[REG_RSP] = (greg_t)e->rsp;
	out[REG_RBP] = (greg_t)e->rbp;
	return REDIRECT_CALL;
}

void xs_profile_sample(struct xs_thread *t, ucontext_t *uc)
{
	if (!t || !g_rings || t->ring_busy)
		return;
	struct ring *r = ring_of(t);
	const greg_t *g = uc->uc_mcontext.gregs;	/* the program's: see the top of the file */
	greg_t program_regs[NGREG];
	enum redirect_sample redirect;
	if (xs_fast_program_regs(t, uc, program_regs)) {
		g = program_regs;	/* inside the fast entry: at the program's call */
	} else if ((redirect = redirect_sample(t, g, program_regs)) == REDIRECT_CALL) {
		g = program_regs;
	} else if (redirect == REDIRECT_LOST) {
		r->lost++;
		return;
	}
	t->ring_busy = 1;
	uint32_t size = sizeof(struct ring_rec);
	if (g_config.profile == XS_PROFILE_FP)
		size += FP_MAX_FRAMES * 8;
	else if (g_config.profile == XS_PROFILE_DWARF)
		size += XS_PERF_REG_COUNT * 8 + XS_PROFILE_STACK;
	struct ring_rec *rec = ring_reserve(r, size);
	if (!rec) {
		r->lost++;
		t->ring_busy = 0;
		return;
	}
	rec->type = REC_SAMPLE;
	rec->time = xs_now_mono();
	/* CPU-time timers fire on scheduler ticks: weigh each sample by the
	 * CPU time it stands for, not by the nominal period */
	struct timespec cpu;
	uint64_t cpu_ns = 0;
	if (xs_sys2(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
		cpu_ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
	rec->period = t->last_sample_cpu && cpu_ns > t->last_sample_cpu ? cpu_ns - t->last_sample_cpu : g_period_ns;
	t->last_sample_cpu = cpu_ns;
	rec->ip = (uint64_t)g[REG_RIP];
	rec->ncallers = 0;
	rec->stack_size = 0;
	size = sizeof(*rec);
	if (g_config.profile == XS_PROFILE_FP) {
		uint64_t *callers = (uint64_t *)(rec + 1);
		uint64_t fp = (uint64_t)g[REG_RBP], frame[2];
		while (rec->ncallers < FP_MAX_FRAMES && fp && !(fp & 7) &&
		       xs_copy_user(frame, (const void *)fp, sizeof(frame)) == 0 && frame[1]) {
			callers[rec->ncallers++] = frame[1];
			if (frame[0] <= fp)
				break;	/* frames grow up the stack; anything else is garbage */
			fp = frame[0];
		}
		size += rec->ncallers * 8u;
	} else if (g_config.profile == XS_PROFILE_DWARF) {
		uint64_t *regs = (uint64_t *)(rec + 1);
		xs_perf_regs_from_gregs(g, regs);
		rec->stack_size = copy_stack(regs + XS_PERF_REG_COUNT, (uint64_t)g[REG_RSP], XS_PROFILE_STACK);
		size += XS_PERF_REG_COUNT * 8 + ((rec->stack_size + 7) & ~7u);
	}
	rec->size = size;
	ring_commit(r, rec);
	t->ring_busy = 0;
}

/* An executable mapping appeared (mmap, mprotect): the next drain
 * re-reads the maps as of this time. */
void xs_profile_map_event(struct xs_thread *t)
{
	if (!xs_profiling() || !t || t->ring_busy)
		return;
	struct ring *r = ring_of(t);
	t->ring_busy = 1;
	struct ring_rec *rec = ring_reserve(r, sizeof(*rec));
	if (rec) {
		rec->type = REC_MAP;
		rec->time = xs_now_mono();
		rec->size = sizeof(*rec);
		ring_commit(r, rec);
	}
	t->ring_busy = 0;
}

/* ---- per thread: the timer ---- */

void xs_profile_thread_start(struct xs_thread *t)
{
	if (!xs_profiling() || t->kind != XS_KIND_THREAD)
		return;	/* a vfork child lives only until its exec */
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = XS_SAMPLE_SIG;
	ev._sigev_un._tid = t->tid;
	int id;
	if (xs_sys3(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &ev, &id) < 0)
		return;
	struct itimerspec its;
	its.it_interval.tv_sec = (time_t)(g_period_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(g_period_ns % 1000000000u);
	its.it_value = its.it_interval;
	xs_sys4(SYS_timer_settime, id, 0, &its, NULL);
	t->timer = id + 1;
	t->start_ns = xs_now_mono();
}

void xs_profile_thread_stop(struct xs_thread *t)
{
	if (t->timer) {
		xs_sys1(SYS_timer_delete, t->timer - 1);
		t->timer = 0;
	}
}

/* ---- the consumer: window lock held ---- */

static void announce(struct xs_thread *t, uint32_t slot)
{
	struct profile *p = g_profile;
	if (p->announced[slot] == t->gen || !t->tid)
		return;	/* done, or a thread that has not started yet */
	p->announced[slot] = t->gen;
	char comm[16];
	struct xs_usage u;
	if (t->state == XS_SLOT_LIVE)
		xs_usage_thread(t->tid, &u, comm);
	else
		memcpy(comm, t->comm, sizeof(comm));
	xs_perf_comm(&p->file, g_proc->pid, t->tid, comm, t->start_ns);
}

static void drain_ring(struct xs_thread *t, uint32_t slot)
{
	struct profile *p = g_profile;
	struct ring *r = &g_rings[slot];
	const uint64_t cap = sizeof(r->data);
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), tail = r->tail;
	if (head != tail)
		announce(t, slot);
	while (tail < head) {
		struct ring_rec *rec = (struct ring_rec *)&r->data[tail % cap];
		if (rec->type == REC_SAMPLE) {
			struct xs_perf_sample s;
			memset(&s, 0, sizeof(s));
			s.ip = rec->ip;
			s.pid = g_proc->pid;
			s.tid = t->tid;
			s.time = rec->time;
			s.period = rec->period;
			if (g_config.profile == XS_PROFILE_FP) {
				s.callers = (const uint64_t *)(rec + 1);
				s.ncallers = rec->ncallers;
			} else if (g_config.profile == XS_PROFILE_DWARF) {
				s.regs = (const uint64_t *)(rec + 1);
				s.stack = s.regs + XS_PERF_REG_COUNT;
				s.stack_size = rec->stack_size;
			}
			xs_perf_sample(&p->file, &s);
		} else if (rec->type == REC_MAP) {
			xs_perf_maps(&p->file, g_proc->pid, rec->time);
		}
		tail += rec->size;
	}
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	uint64_t lost = r->lost;
	if (lost != r->lost_reported) {
		xs_perf_lost(&p->file, lost - r->lost_reported, xs_now_mono());
		r->lost_reported = lost;
	}
}

void xs_profile_drain(void)
{
	if (!xs_profiling() || !g_profile || !g_profile->open)
		return;
	for (uint32_t i = 0; i < g_proc->slots_used; i++) {
		struct xs_thread *t = xs_slot(i);
		if (t->kind == XS_KIND_THREAD && t->state != XS_SLOT_FREE)
			drain_ring(t, i);
	}
	xs_perf_flush(&g_profile->file);
}

static void report_failure(int err)
{
	static int warned;
	char msg[200];
	struct xs_buf b = { msg, 0, sizeof(msg), false, NULL };
	xs_buf_add(&b, "exitscope: cannot write the profile (error ");
	xs_buf_u64(&b, (uint64_t)-err, 0);
	xs_buf_add(&b, "); profiling stops, the stats go on\n");
	xs_buf_addc(&b, 0);
	xs_warn_once(&warned, msg);
}

/* Open the profile of window seq: COMM for every thread, every mapping. */
void xs_profile_open_window(uint32_t seq)
{
	struct profile *p = g_profile;
	if (!xs_profiling() || !p || p->open)
		return;
	struct xs_buf b = { p->name, 0, sizeof(p->name), false, NULL };
	xs_buf_add(&b, "exitscope-");
	xs_buf_u64(&b, (uint64_t)g_proc->pid, 0);
	xs_buf_addc(&b, '-');
	xs_buf_u64(&b, seq, 0);
	xs_buf_add(&b, ".data");
	xs_buf_addc(&b, 0);
	/* never an existing file: a planted one is refused on the log */
	int out = xs_output_open(p->name, false, 0600);
	if (out < 0) {
		g_config.profile = XS_PROFILE_OFF;
		return;
	}

	char cmdline[4096];
	long n = xs_read_proc("/proc/self/cmdline", cmdline, sizeof(cmdline));
	struct xs_perf_config cfg = {
		.sample_type = g_config.profile == XS_PROFILE_FP    ? XS_PERF_SAMPLE_FP
			     : g_config.profile == XS_PROFILE_DWARF ? XS_PERF_SAMPLE_DWARF
								    : XS_PERF_SAMPLE_NONE,
		.period_ns = g_period_ns,
		.stack_size = XS_PROFILE_STACK,
		.cmdline = n > 0 ? cmdline : NULL,
		.cmdline_size = n > 0 ? (size_t)n : 0,
	};
	int r = xs_perf_open(&p->file, out, &cfg);
	if (r < 0) {
		report_failure(r);
		g_config.profile = XS_PROFILE_OFF;
		return;
	}
	xs_runtime_fd_adopt(p->file.fd, &p->file.fd, 0);
	p->open = true;
	p->seq = seq;
	memset(p->announced, 0, sizeof(p->announced));
	for (uint32_t i = 0; i < g_proc->slots_used; i++) {
		struct xs_thread *t = xs_slot(i);
		if (t->kind == XS_KIND_THREAD && t->state != XS_SLOT_FREE) {
			/* time 0: before every sample of this file */
			uint64_t start = t->start_ns;
			t->start_ns = 0;
			announce(t, i);
			t->start_ns = start;
		}
	}
	xs_perf_maps(&p->file, g_proc->pid, 0);
	xs_perf_flush(&p->file);
}

/* Drain and complete the window's file; its name and sample count for the
 * record. Returns false when there is no profile. */
bool xs_profile_close_window(char name[64], uint64_t *samples)
{
	struct profile *p = g_profile;
	if (!p || !p->open)
		return false;
	xs_profile_drain();
	*samples = xs_perf_samples(&p->file);
	/* the runtime's no more just before it is closed (a number freed
	 * while still listed would be hidden from the program) */
	xs_runtime_fd_forget(&p->file.fd);
	int r = xs_perf_close(&p->file);
	p->open = false;
	memcpy(name, p->name, 64);
	if (r < 0) {
		report_failure(r);
		g_config.profile = XS_PROFILE_OFF;
	}
	return true;
}

int xs_profile_init(void)
{
	if (g_config.profile == XS_PROFILE_OFF)
		return 0;
	if (g_rings) {
		/* a fork child: the rings came back wiped; the file is the
		 * parent's, not ours */
		if (g_profile->open)
			xs_perf_abandon(&g_profile->file);
		g_profile->open = false;
	} else {
		struct ring *rings = xs_map((size_t)XS_MAX_THREADS * sizeof(struct ring), true);
		g_profile = xs_map(sizeof(struct profile), false);
		if (!rings || !g_profile)
			return -ENOMEM;
		g_rings = rings;
	}
	g_period_ns = 1000000000u / g_config.frequency;
	return 0;
}
