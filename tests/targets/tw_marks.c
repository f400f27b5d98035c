/*
 * Exact windows from inside the program (t120). The main thread and three
 * worker threads issue known numbers of distinct system calls between marks
 * written to /dev/exitscope (include/exitscope.h). Workers are synchronised
 * with the marks by spinning on shared variables, so no system call of the
 * synchronisation itself lands in a checked window.
 *
 * For every checked window it prints one line
 *   expect LABEL {"TID": {"SYSCALL": "CALLS/ERRORS", ...}, ...}
 * naming every thread that must have made calls in that window and all of
 * its calls (any other call in the window is an error). The windows, in
 * order, with the reason "app":
 *   start   (label)  start-up: not checked
 *   a       (label)  main: 1000 getppid
 *   b       (label)  main: 700 getpid + 300 getppid + 50 close(-1) (EBADF)
 *   (reset) (null)   main: 3 getppid
 *   spawn   (label)  thread creation: not checked
 *   w1      (label)  worker i: 100+i getppid and i+1 getuid; main: nothing
 *   w2      (label)  worker i: 20*(i+1) geteuid; main: 7 getgid
 *   join    (label)  workers exit, main joins: not checked (threads exited)
 *   end     (label)  main: 11 getppid
 * then the process exits (reason "exit", main: the output writes and
 * exit_group). Without exitscope, every mark returns -1 (printed as
 * "marks=-1").
 */
#include "tt_common.h"
#include <exitscope.h>
#include <pthread.h>
#include <sys/syscall.h>

#define NWORKERS 3

static volatile int g_phase;
static int g_done;
static long g_tid[NWORKERS];
static int g_marks_ok = 1;

static void mark(const char *label)
{
	int r = label ? exitscope_dump(label) : exitscope_reset();
	if (r != 0)
		g_marks_ok = 0;
}

static void calls(long nr, int n, long arg)
{
	for (int i = 0; i < n; i++)
		syscall(nr, arg);
}

static void wait_phase(int p)
{
	while (__atomic_load_n(&g_phase, __ATOMIC_ACQUIRE) != p)
		__builtin_ia32_pause();
}

static void done(void)
{
	__atomic_add_fetch(&g_done, 1, __ATOMIC_ACQ_REL);
}

static void wait_done(int n)
{
	while (__atomic_load_n(&g_done, __ATOMIC_ACQUIRE) != n)
		__builtin_ia32_pause();
}

static void *worker(void *arg)
{
	long i = (long)arg;
	g_tid[i] = syscall(SYS_gettid);
	done();
	wait_phase(1);
	calls(SYS_getppid, 100 + (int)i, 0);
	calls(SYS_getuid, (int)i + 1, 0);
	done();
	wait_phase(2);
	calls(SYS_geteuid, 20 * ((int)i + 1), 0);
	done();
	wait_phase(3);
	return NULL;
}

int main(void)
{
	char out[4096];
	int len = 0;
	long me = syscall(SYS_gettid);
	pthread_t t[NWORKERS];

	mark("start");
	calls(SYS_getppid, 1000, 0);
	mark("a");
	calls(SYS_getpid, 700, 0);
	calls(SYS_getppid, 300, 0);
	calls(SYS_close, 50, -1);
	mark("b");
	calls(SYS_getppid, 3, 0);
	mark(NULL);
	for (long i = 0; i < NWORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			die("pthread_create");
	wait_done(NWORKERS);
	mark("spawn");
	__atomic_store_n(&g_phase, 1, __ATOMIC_RELEASE);
	wait_done(2 * NWORKERS);
	mark("w1");
	__atomic_store_n(&g_phase, 2, __ATOMIC_RELEASE);
	calls(SYS_getgid, 7, 0);
	wait_done(3 * NWORKERS);
	mark("w2");
	__atomic_store_n(&g_phase, 3, __ATOMIC_RELEASE);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(t[i], NULL);
	mark("join");
	calls(SYS_getppid, 11, 0);
	mark("end");

	/* the expectations, written after the last mark */
	len += snprintf(out + len, sizeof out - len, "marks=%d\n", g_marks_ok ? 0 : -1);
	len += snprintf(out + len, sizeof out - len, "main %ld\n", me);
	for (int i = 0; i < NWORKERS; i++)
		len += snprintf(out + len, sizeof out - len, "worker %d %ld\n", i, g_tid[i]);
	len += snprintf(out + len, sizeof out - len, "expect a {\"%ld\": {\"getppid\": \"1000/0\"}}\n", me);
	len += snprintf(out + len, sizeof out - len,
			"expect b {\"%ld\": {\"getpid\": \"700/0\", \"getppid\": \"300/0\", \"close\": \"50/50\"}}\n",
			me);
	len += snprintf(out + len, sizeof out - len, "expect - {\"%ld\": {\"getppid\": \"3/0\"}}\n", me);
	len += snprintf(out + len, sizeof out - len, "expect w1 {");
	for (int i = 0; i < NWORKERS; i++)
		len += snprintf(out + len, sizeof out - len, "%s\"%ld\": {\"getppid\": \"%d/0\", \"getuid\": \"%d/0\"}",
				i ? ", " : "", g_tid[i], 100 + i, i + 1);
	len += snprintf(out + len, sizeof out - len, "}\nexpect w2 {\"%ld\": {\"getgid\": \"7/0\"}", me);
	for (int i = 0; i < NWORKERS; i++)
		len += snprintf(out + len, sizeof out - len, ", \"%ld\": {\"geteuid\": \"%d/0\"}", g_tid[i],
				20 * (i + 1));
	len += snprintf(out + len, sizeof out - len, "}\nexpect end {\"%ld\": {\"getppid\": \"11/0\"}}\n", me);
	if (write(1, out, len) != len)
		return 1;
	return 0;
}
