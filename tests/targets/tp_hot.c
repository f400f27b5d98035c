/*
 * tp_hot: CPU-bound target with known hot functions for the profiler tests
 * (tests/integration/t410-profile.sh) and bench/profile.sh.
 *
 * Every hot function spends about half its time in its own loop and half in
 * a small out-of-line leaf (spin_leaf), so that it shows by name both as a
 * leaf and, in the leaf's frame-pointer walk, as the caller (gcc keeps no
 * frame pointer setup to rely on at the leaf's first instructions, and
 * ignores -mno-omit-leaf-frame-pointer). Work is measured in the thread's own CPU time, checked every few
 * hundred microseconds of work.
 *
 * Usage:
 *   tp_hot phases K MS   K phases (1..4). In phase k the main thread burns
 *                        MS ms of CPU in main_phase<k> and the worker thread
 *                        (named "xs-hotworker", start function worker_main)
 *                        in worker_phase<k>; then main calls
 *                        exitscope_dump("phase<k>"). So window k's profile
 *                        holds phase k. Prints "phases K marks OK|FAILED".
 *   tp_hot rotate N MS   N times: main burns MS ms in rotate_burn, then
 *                        exitscope_dump("r<i>"). Prints "rotations N marks ...".
 *   tp_hot fork MS       forks; the child burns MS ms in child_hot and exits 0;
 *                        the parent burns MS ms in parent_hot and waits.
 *                        Prints "child PID status S".
 *   tp_hot burn MS       main (main_burn) and worker (worker_burn, thread
 *                        "xs-hotworker") each burn MS ms of CPU, no marks.
 *                        Prints "burned".
 *   tp_hot work N        fixed work (for overhead benchmarks): main
 *                        (main_work) and worker (worker_work) each do N
 *                        rounds of leaf + own loop, no clock reads, no
 *                        marks (about 4 us per round). Prints "worked".
 */
#include "tt_common.h"
#include <exitscope.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t g_sink;

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

NOINLINE uint64_t spin_leaf(uint64_t x)
{
	for (int i = 0; i < 2000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* The body of every hot function: burn ms of this thread's CPU time, calling
 * the leaf. A macro, so each hot function has its own code (no tail call). */
#define BURN(ms)                                                        \
	do {                                                            \
		uint64_t x_ = (uint64_t)(ms), end_ = cpu_ns() + (uint64_t)(ms) * 1000000u; \
		while (cpu_ns() < end_)                                 \
			for (int j_ = 0; j_ < 100; j_++) {              \
				x_ = spin_leaf(x_);                     \
				for (int k_ = 0; k_ < 2000; k_++) {     \
					x_ = x_ * 2862933555777941757ULL + 3037000493ULL; \
					__asm__ volatile("" : "+r"(x_)); \
				}                                       \
			}                                               \
		g_sink += x_;                                           \
	} while (0)

#define HOT(name) \
	NOINLINE void name(long ms) { BURN(ms); __asm__ volatile(""); }

HOT(main_phase0) HOT(main_phase1) HOT(main_phase2) HOT(main_phase3)
HOT(worker_phase0) HOT(worker_phase1) HOT(worker_phase2) HOT(worker_phase3)
HOT(rotate_burn) HOT(child_hot) HOT(parent_hot) HOT(main_burn) HOT(worker_burn)

/* Fixed work, no clock reads: n rounds of the leaf and the own loop. */
#define WORK(name) \
	NOINLINE void name(long n) \
	{ \
		uint64_t x_ = (uint64_t)n; \
		for (long i_ = 0; i_ < n; i_++) { \
			x_ = spin_leaf(x_); \
			for (int k_ = 0; k_ < 2000; k_++) { \
				x_ = x_ * 2862933555777941757ULL + 3037000493ULL; \
				__asm__ volatile("" : "+r"(x_)); \
			} \
		} \
		g_sink += x_; \
	}

WORK(main_work) WORK(worker_work)

static void (*const g_main_phase[4])(long) = { main_phase0, main_phase1, main_phase2, main_phase3 };
static void (*const g_worker_phase[4])(long) = { worker_phase0, worker_phase1, worker_phase2, worker_phase3 };

static pthread_barrier_t g_start, g_done;
static int g_phases;
static long g_ms;
static int g_burn_only, g_work_only;

NOINLINE void *worker_main(void *arg)
{
	(void)arg;
	if (g_burn_only) {
		worker_burn(g_ms);
		return NULL;
	}
	if (g_work_only) {
		worker_work(g_ms);
		return NULL;
	}
	for (int k = 0; k < g_phases; k++) {
		pthread_barrier_wait(&g_start);
		g_worker_phase[k](g_ms);
		pthread_barrier_wait(&g_done);
	}
	return NULL;
}

static pthread_t start_worker(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, worker_main, NULL) != 0) {
		say("pthread_create failed\n");
		exit(1);
	}
	pthread_setname_np(th, "xs-hotworker");
	return th;
}

NOINLINE static int run_phases(void)
{
	int marks_ok = 1;
	pthread_barrier_init(&g_start, NULL, 2);
	pthread_barrier_init(&g_done, NULL, 2);
	pthread_t th = start_worker();
	for (int k = 0; k < g_phases; k++) {
		char label[16];
		pthread_barrier_wait(&g_start);
		g_main_phase[k](g_ms);
		pthread_barrier_wait(&g_done);
		snprintf(label, sizeof(label), "phase%d", k);
		if (exitscope_dump(label) != 0)
			marks_ok = 0;
	}
	pthread_join(th, NULL);
	say("phases %d marks %s\n", g_phases, marks_ok ? "OK" : "FAILED");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		say("usage: tp_hot phases K MS | rotate N MS | fork MS | burn MS | work N\n");
		return 2;
	}
	const char *mode = argv[1];
	if (!strcmp(mode, "phases") && argc == 4) {
		g_phases = atoi(argv[2]);
		g_ms = atol(argv[3]);
		if (g_phases < 1 || g_phases > 4)
			return 2;
		return run_phases();
	}
	if (!strcmp(mode, "rotate") && argc == 4) {
		int n = atoi(argv[2]), marks_ok = 1;
		long ms = atol(argv[3]);
		for (int i = 0; i < n; i++) {
			char label[16];
			rotate_burn(ms);
			snprintf(label, sizeof(label), "r%d", i);
			if (exitscope_dump(label) != 0)
				marks_ok = 0;
		}
		say("rotations %d marks %s\n", n, marks_ok ? "OK" : "FAILED");
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		long ms = atol(argv[2]);
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			child_hot(ms);
			_exit(0);
		}
		parent_hot(ms);
		int st = 0;
		if (waitpid(pid, &st, 0) != pid)
			return 1;
		say("child %d status %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		return 0;
	}
	if (!strcmp(mode, "burn")) {
		g_ms = atol(argv[2]);
		g_burn_only = 1;
		pthread_t th = start_worker();
		main_burn(g_ms);
		pthread_join(th, NULL);
		say("burned\n");
		return 0;
	}
	if (!strcmp(mode, "work")) {
		g_ms = atol(argv[2]);
		g_work_only = 1;
		pthread_t th = start_worker();
		main_work(g_ms);
		pthread_join(th, NULL);
		say("worked\n");
		return 0;
	}
	say("tp_hot: unknown mode '%s'\n", mode);
	return 2;
}
