/*
 * prof_target: a CPU-bound program that profiles itself with the perf.data
 * writer (src/runtime/profile/perfdata.c), for tests/integration/t400.
 *
 * It samples its two hot threads the way the runtime's sampler will: a
 * per-thread CPU-time timer (timer_create on CLOCK_THREAD_CPUTIME_ID,
 * SIGEV_THREAD_ID) sends SIGPROF; the handler records the interrupted ip
 * and either a frame-pointer walk (fp) or the user registers and a copy of
 * the stack (dwarf) into the thread's ring; a writer thread drains the
 * rings into the perf.data file every 10 ms and flushes. A sample taken
 * while a ring is full is lost and reported with xs_perf_lost; so that
 * every run has a few (perf warns above 5%), each thread's samples 10..12
 * are treated as if their ring were full.
 *
 * Usage: prof_target MODE OUT.data [LIB]
 *   fp       main thread: hot_main_loop; worker: worker_hot; fp call chains
 *   dwarf    main thread sorts with qsort and a slow comparator; dwarf chains
 *   crash    like fp, but SIGKILLs itself after a flush once 250 samples
 *            are in the file (with more records buffered, never written)
 *   deleted  like fp, with LIB dlopen'ed from a copy that is then deleted
 * Prints "samples N" (written), "lost N", "taken N" (by the handler),
 * "flushed_samples N" (in the file as of the last flush), and on a write
 * error "write_error EXXX" and "close_error EXXX" (exit status 3).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "runtime/profile/perfdata.h"

#define RING_CAP 64
#define MAX_CALLERS 64
#define STACK_COPY 8192
#define PERIOD_NS 1000000	/* 1 ms of thread CPU time */
#define RUN_NS 800000000	/* each hot thread runs 0.8 s of CPU */
#define SIMULATED_FULL 3	/* samples 10..12 of each thread find the ring "full" */

/* boundary.S calls into the runtime for clone redirection; never here. */
void xs_child_start_handoff(void);
void xs_child_start_shared(void);
void xs_redirect_parent(void);
void xs_child_start_handoff(void) { abort(); }
void xs_child_start_shared(void) { abort(); }
void xs_redirect_parent(void) { abort(); }

struct sample {
	uint64_t ip, time;
	uint32_t ncallers, stack_size;
	uint64_t callers[MAX_CALLERS];
	uint64_t regs[XS_PERF_REG_COUNT];
	char stack[STACK_COPY];
};

struct ring {
	_Atomic uint32_t head, tail;
	_Atomic uint64_t taken, lost;
	_Atomic int tid;
	_Atomic int done;
	struct sample *slots;
};

static struct ring g_rings[2];
static bool g_dwarf;
static const char *g_mode;
static _Atomic int g_stop_writer;
static volatile uint64_t g_sink;
static int (*g_deleted_hot)(int);

static __thread struct ring *t_ring;
static __thread uintptr_t t_stack_lo, t_stack_hi;

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void on_prof(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;
	ucontext_t *uc = ctx;
	struct ring *r = t_ring;
	uint32_t head, tail;
	uint64_t taken;
	struct sample *s;
	uintptr_t sp, fp;

	(void)sig;
	(void)si;
	if (!r)
		goto out;
	taken = atomic_fetch_add(&r->taken, 1);
	head = atomic_load_explicit(&r->head, memory_order_relaxed);
	tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (head - tail >= RING_CAP || (taken >= 10 && taken < 10 + SIMULATED_FULL)) {
		atomic_fetch_add(&r->lost, 1);
		goto out;
	}
	s = &r->slots[head % RING_CAP];
	s->ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	s->time = now_ns(CLOCK_MONOTONIC);
	s->ncallers = 0;
	s->stack_size = 0;
	sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	if (g_dwarf) {
		xs_perf_regs_from_gregs(uc->uc_mcontext.gregs, s->regs);
		if (sp >= t_stack_lo && sp < t_stack_hi) {
			size_t n = t_stack_hi - sp < STACK_COPY ? t_stack_hi - sp : STACK_COPY;
			memcpy(s->stack, (void *)sp, n);
			s->stack_size = (uint32_t)n;
		}
	} else {
		/* Frame-pointer walk, reading only inside this thread's stack. */
		fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
		while (s->ncallers < MAX_CALLERS && fp >= sp && fp + 16 <= t_stack_hi &&
		       !(fp & 7)) {
			uintptr_t next = ((uintptr_t *)fp)[0], ret = ((uintptr_t *)fp)[1];
			if (!ret)
				break;
			s->callers[s->ncallers++] = ret;
			if (next <= fp)
				break;
			fp = next;
		}
	}
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
out:
	errno = saved;
}

/* Name the thread, note its stack, and start its CPU-time timer. */
static timer_t sampled_thread_start(struct ring *r, const char *name)
{
	pthread_attr_t a;
	void *lo;
	size_t size;
	struct sigevent sev;
	struct itimerspec its;
	timer_t timer;

	pthread_setname_np(pthread_self(), name);
	if (pthread_getattr_np(pthread_self(), &a) || pthread_attr_getstack(&a, &lo, &size)) {
		fprintf(stderr, "prof_target: no stack bounds\n");
		exit(2);
	}
	pthread_attr_destroy(&a);
	t_stack_lo = (uintptr_t)lo;
	t_stack_hi = (uintptr_t)lo + size;
	atomic_store(&r->tid, gettid());
	t_ring = r;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer)) {
		perror("prof_target: timer_create");
		exit(2);
	}
	its.it_interval.tv_sec = 0;
	its.it_interval.tv_nsec = PERIOD_NS;
	its.it_value = its.it_interval;
	timer_settime(timer, 0, &its, NULL);
	return timer;
}

static void sampled_thread_end(struct ring *r, timer_t timer)
{
	timer_delete(timer);
	t_ring = NULL;
	atomic_store(&r->done, 1);
}

/* ---- the hot code ---- */

/* GCC 12 ignores -mno-omit-leaf-frame-pointer, and a leaf without a frame
 * hides its caller from a frame-pointer walk: the hot functions call this
 * once so they are not leaves. */
__attribute__((noinline)) static void progress(void)
{
	g_sink++;
}

__attribute__((noinline)) static uint64_t worker_hot(uint64_t n)
{
	uint64_t x = n;
	progress();
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) static void *worker_start(void *arg)
{
	timer_t timer = sampled_thread_start(&g_rings[1], "xs-worker");
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	(void)arg;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < RUN_NS)
		g_sink += worker_hot(g_sink);
	sampled_thread_end(&g_rings[1], timer);
	return NULL;
}

__attribute__((noinline)) static uint64_t hot_main_loop(uint64_t n)
{
	uint64_t x = n | 1;
	progress();
	for (int i = 0; i < 20000; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

__attribute__((noinline)) static int compare_slow(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	for (volatile int i = 0; i < 300; i++)
		;
	return (x > y) - (x < y);
}

__attribute__((noinline)) static void sort_caller(int *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (int)((i * 7919) % n);
	qsort(v, n, sizeof(*v), compare_slow);
	g_sink += (uint64_t)v[n / 2];
}

/* Set by the writer once 250 samples are flushed or writing failed: under
 * load the tick-based CPU timers fire less often, so the run lasts until
 * then (at most 30 s), not a fixed time, for the crash and full-disk
 * checks to see enough samples. */
static atomic_int g_enough;

static void main_work(void)
{
	static int v[2000];
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < RUN_NS ||
	       (!atomic_load(&g_enough) && now_ns(CLOCK_MONOTONIC) - w0 < 30000000000ull)) {
		if (g_dwarf)
			sort_caller(v, 2000);
		else if (g_deleted_hot)
			g_sink += (uint64_t)g_deleted_hot((int)g_sink) + hot_main_loop(g_sink);
		else
			g_sink += hot_main_loop(g_sink);
	}
}

/* ---- the writer (what the runtime's service thread will do) ---- */

struct writer {
	struct xs_perf_file f;
	uint64_t lost_written[2];
	uint64_t flushed_samples;	/* samples in the file as of the last flush */
	int pid;
};

static int drain(struct writer *w)
{
	for (int i = 0; i < 2; i++) {
		struct ring *r = &g_rings[i];
		uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
		uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		uint64_t lost;
		for (; tail != head; tail++) {
			struct sample *s = &r->slots[tail % RING_CAP];
			struct xs_perf_sample ps = {
				.ip = s->ip, .pid = w->pid, .tid = atomic_load(&r->tid),
				.time = s->time, .callers = s->callers, .ncallers = s->ncallers,
				.regs = s->regs, .stack = s->stack, .stack_size = s->stack_size,
			};
			int e = xs_perf_sample(&w->f, &ps);
			if (e)
				return e;
		}
		atomic_store_explicit(&r->tail, tail, memory_order_release);
		lost = atomic_load(&r->lost);
		if (lost != w->lost_written[i]) {
			int e = xs_perf_lost(&w->f, lost - w->lost_written[i], now_ns(CLOCK_MONOTONIC));
			if (e)
				return e;
			w->lost_written[i] = lost;
		}
	}
	return 0;
}

static void die_err(const char *what, int e)
{
	fprintf(stderr, "prof_target: %s: %s\n", what, strerror(-e));
	exit(1);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct timespec ten_ms = {0, 10000000};
	int e;

	pthread_setname_np(pthread_self(), "xs-writer");
	while (!atomic_load(&g_stop_writer)) {
		if ((e = drain(w)) || (e = xs_perf_flush(&w->f))) {
			/* A full disk (or RLIMIT_FSIZE): stop writing, keep running. */
			printf("write_error %s\n", strerrorname_np(-e));
			atomic_store(&g_enough, 1);
			return NULL;
		}
		w->flushed_samples = xs_perf_samples(&w->f);
		if (w->flushed_samples >= 250)
			atomic_store(&g_enough, 1);
		/* Crash mode: die once enough samples are in the file that the
		 * few lost ones stay under perf's 5% warning. */
		if (w->flushed_samples >= 250 && strcmp(g_mode, "crash") == 0) {
			printf("flushed_samples %llu\n", (unsigned long long)xs_perf_samples(&w->f));
			fflush(stdout);
			/* more records, buffered but never flushed */
			nanosleep(&ten_ms, NULL);
			if ((e = drain(w)))
				die_err("write", e);
			kill(getpid(), SIGKILL);
		}
		nanosleep(&ten_ms, NULL);
	}
	if ((e = drain(w)))
		die_err("write", e);
	return NULL;
}

int main(int argc, char **argv)
{
	static struct writer w;
	struct xs_perf_config cfg = {0};
	struct sigaction sa;
	pthread_t worker, writer;
	timer_t timer;
	char cmdline[4096];
	size_t cmd_len = 0;
	int e;

	if (argc < 3) {
		fprintf(stderr, "usage: prof_target fp|dwarf|crash|deleted OUT.data [LIB]\n");
		return 2;
	}
	g_mode = argv[1];
	g_dwarf = strcmp(g_mode, "dwarf") == 0;
	for (int i = 0; i < argc && cmd_len + strlen(argv[i]) + 1 < sizeof(cmdline); i++) {
		memcpy(cmdline + cmd_len, argv[i], strlen(argv[i]) + 1);
		cmd_len += strlen(argv[i]) + 1;
	}
	if (strcmp(g_mode, "deleted") == 0) {
		void *h;
		if (argc < 4 || !(h = dlopen(argv[3], RTLD_NOW))) {
			fprintf(stderr, "prof_target: dlopen: %s\n", argc < 4 ? "no LIB" : dlerror());
			return 2;
		}
		g_deleted_hot = (int (*)(int))dlsym(h, "deleted_hot");
		if (!g_deleted_hot || unlink(argv[3])) {
			fprintf(stderr, "prof_target: no deleted_hot or cannot unlink\n");
			return 2;
		}
	}
	for (int i = 0; i < 2; i++) {
		g_rings[i].slots = mmap(NULL, RING_CAP * sizeof(struct sample), PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (g_rings[i].slots == MAP_FAILED)
			return 2;
	}

	cfg.sample_type = g_dwarf ? XS_PERF_SAMPLE_DWARF : XS_PERF_SAMPLE_FP;
	cfg.period_ns = PERIOD_NS;
	cfg.stack_size = STACK_COPY;
	cfg.cmdline = cmdline;
	cfg.cmdline_size = cmd_len;
	w.pid = getpid();
	int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0)
		die_err("open", -errno);
	if ((e = xs_perf_open(&w.f, out, &cfg)))
		die_err("open", e);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);

	timer = sampled_thread_start(&g_rings[0], "xs-main");
	pthread_create(&worker, NULL, worker_start, NULL);
	while (!atomic_load(&g_rings[1].tid))
		sched_yield();
	/* Before any sample is written: threads and mappings at time 0. */
	if ((e = xs_perf_comm(&w.f, w.pid, w.pid, "xs-main", 0)) ||
	    (e = xs_perf_comm(&w.f, w.pid, atomic_load(&g_rings[1].tid), "xs-worker", 0)) ||
	    (e = xs_perf_maps(&w.f, w.pid, 0)))
		die_err("maps", e);
	pthread_create(&writer, NULL, writer_main, &w);

	main_work();
	sampled_thread_end(&g_rings[0], timer);
	pthread_join(worker, NULL);
	atomic_store(&g_stop_writer, 1);
	pthread_join(writer, NULL);

	printf("samples %llu\n", (unsigned long long)xs_perf_samples(&w.f));
	printf("lost %llu\n", (unsigned long long)(w.lost_written[0] + w.lost_written[1]));
	printf("taken %llu\n", (unsigned long long)(g_rings[0].taken + g_rings[1].taken));
	{
		struct xs_perf_stats st;
		xs_perf_stats(&w.f, &st);
		printf("bytes %llu\n", (unsigned long long)st.bytes);
		printf("raised_times %llu\n", (unsigned long long)st.raised_times);
		printf("build_id_errors %u\n", st.build_id_errors);
	}
	printf("flushed_samples %llu\n", (unsigned long long)w.flushed_samples);
	if ((e = xs_perf_close(&w.f))) {
		printf("close_error %s\n", strerrorname_np(-e));
		return 3;
	}
	return 0;
}
