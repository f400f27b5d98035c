/*
 * Concurrency stress for windows (t130). Usage:
 *   tw_stress OUTDIR SECONDS NTHREADS NFORKS
 * Keeps NTHREADS worker threads busy for SECONDS: each worker issues
 * getppid as fast as it can, a getpid every 8th iteration, and now and then
 * a /dev/exitscope mark; it lives for a random 500..5000 iterations, then
 * exits and the main thread starts a new one in its place, so threads are
 * created and exit all the while. NFORKS times, evenly spread, the process
 * forks; the child does the same with 8 threads for 1 second and exits.
 * Each process counts the calls it issued itself and writes
 * OUTDIR/counts-PID:
 *   TID GETPPID GETPID        one line per worker thread it ran
 *   marks N                   /dev/exitscope marks that succeeded
 * The main thread issues no getppid or getpid itself (its pid comes from
 * gettid). With TW_NO_MARKS=1 in the environment the workers make no marks.
 * The main thread prints "ready PID" once running and, at the end,
 * "total getppid=N getpid=N threads=N marks=N forks=N". The status is 0 only
 * if every child exited 0.
 */
#include "tt_common.h"
#include <exitscope.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define MAX_SLOTS 256
#define MAX_RESULTS 400000

struct result {
	int tid;
	long getppid, getpid;
};

static struct result g_res[MAX_RESULTS];
static int g_nres;
static int g_marks;
static volatile int g_stop;
static int g_no_marks;

struct slot {
	pthread_t t;
	int used;
	volatile int done;
	unsigned seed;
};
static struct slot g_slot[MAX_SLOTS];

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void *worker(void *arg)
{
	struct slot *s = arg;
	unsigned seed = s->seed;
	long iters = 500 + rand_r(&seed) % 4501, ppid = 0, pid = 0;
	int marks = 0;
	for (long i = 0; i < iters && !g_stop; i++) {
		syscall(SYS_getppid);
		ppid++;
		if (i % 8 == 7) {
			syscall(SYS_getpid);
			pid++;
		}
		if (i == 400 && !g_no_marks && rand_r(&seed) % 16 == 0 && exitscope_dump("mark") == 0)
			marks++;
	}
	int k = __atomic_fetch_add(&g_nres, 1, __ATOMIC_RELAXED);
	if (k < MAX_RESULTS)
		g_res[k] = (struct result){ (int)syscall(SYS_gettid), ppid, pid };
	__atomic_add_fetch(&g_marks, marks, __ATOMIC_RELAXED);
	s->done = 1;
	return NULL;
}

static unsigned g_seed = 12345;

static void start(struct slot *s)
{
	s->done = 0;
	s->seed = rand_r(&g_seed);
	if (pthread_create(&s->t, NULL, worker, s))
		die("pthread_create");
	s->used = 1;
}

/* Run nthreads workers for ms milliseconds; fork at the given times. */
static int run(int nthreads, long ms, int nforks, pid_t *kids)
{
	long t0 = now_ms(), nextfork = nforks ? ms / (nforks + 1) : -1;
	int forked = 0;
	struct timespec nap = { 0, 1000 * 1000 };
	for (int i = 0; i < nthreads; i++)
		start(&g_slot[i]);
	while (now_ms() - t0 < ms) {
		for (int i = 0; i < nthreads; i++)
			if (g_slot[i].done) {
				pthread_join(g_slot[i].t, NULL);
				start(&g_slot[i]);
			}
		if (forked < nforks && now_ms() - t0 >= nextfork * (forked + 1)) {
			pid_t p = fork();
			if (p < 0)
				die("fork");
			if (p == 0)
				return -1; /* the child: the caller takes over */
			kids[forked++] = p;
		}
		nanosleep(&nap, NULL);
	}
	g_stop = 1;
	for (int i = 0; i < nthreads; i++)
		if (g_slot[i].used)
			pthread_join(g_slot[i].t, NULL);
	return forked;
}

static void report(const char *outdir, int forks)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/counts-%ld", outdir, syscall(SYS_gettid));
	FILE *f = fopen(path, "w");
	if (!f)
		die("fopen counts");
	long ppid = 0, pid = 0;
	int n = g_nres < MAX_RESULTS ? g_nres : MAX_RESULTS;
	for (int i = 0; i < n; i++) {
		fprintf(f, "%d %ld %ld\n", g_res[i].tid, g_res[i].getppid, g_res[i].getpid);
		ppid += g_res[i].getppid;
		pid += g_res[i].getpid;
	}
	fprintf(f, "marks %d\n", g_marks);
	if (fclose(f))
		die("fclose counts");
	if (forks >= 0)
		say("total getppid=%ld getpid=%ld threads=%d marks=%d forks=%d%s\n", ppid, pid, g_nres, g_marks,
		    forks, g_nres > MAX_RESULTS ? " (results truncated)" : "");
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		say("usage: tw_stress OUTDIR SECONDS NTHREADS NFORKS\n");
		return 2;
	}
	const char *outdir = argv[1];
	long ms = atol(argv[2]) * 1000;
	int nthreads = atoi(argv[3]), nforks = atoi(argv[4]);
	if (nthreads < 1 || nthreads > MAX_SLOTS || nforks < 0 || nforks > 16)
		return 2;
	pid_t kids[16];
	g_no_marks = getenv("TW_NO_MARKS") != NULL;
	say("ready %ld\n", syscall(SYS_gettid));
	int forked = run(nthreads, ms, nforks, kids);
	if (forked < 0) {
		/* a fork child: only this thread survived; start afresh */
		g_nres = 0;
		g_marks = 0;
		memset(g_slot, 0, sizeof g_slot);
		g_seed = (unsigned)syscall(SYS_gettid);
		pid_t none[1];
		run(8, 1000, 0, none);
		report(outdir, -1);
		exit(0);
	}
	report(outdir, forked);
	int bad = 0;
	for (int i = 0; i < forked; i++) {
		int st;
		if (waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) || WEXITSTATUS(st)) {
			say("child %d failed (status 0x%x)\n", (int)kids[i], st);
			bad = 1;
		}
	}
	return bad;
}
