/*
 * Window latency (bench/window_latency.sh). Three modes:
 *   tw_latency idle|busy NTHREADS STOPFILE
 *       under exitscope: NTHREADS threads that sleep in a blocking read
 *       (idle) or issue getppid as fast as they can (busy) until STOPFILE
 *       exists; prints "ready PID".
 *   tw_latency measure PID FILE ROUNDS
 *       natively: ROUNDS times, kill(PID, SIGUSR1) and spin until FILE (the
 *       process's exitscope-PID.jsonl) has grown by one complete line; prints
 *       one line per round: microseconds from kill to the record on disk;
 *       after 30 s without the record: "timeout", status 3, no more rounds.
 *   tw_latency devdump ROUNDS
 *       under exitscope: ROUNDS times exitscope_dump("lat"), printing the
 *       microseconds each took (the record is written when it returns).
 */
#include "tt_common.h"
#include <exitscope.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

static volatile int g_stop;
static int g_pipe[2];

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *idle(void *arg)
{
	char c;
	while (read(g_pipe[0], &c, 1) < 0)
		;
	return NULL;
}

static void *busy(void *arg)
{
	while (!g_stop)
		syscall(SYS_getppid);
	return NULL;
}

static off_t size_of(const char *f)
{
	struct stat st;
	return stat(f, &st) == 0 ? st.st_size : -1;
}

static int measure(pid_t pid, const char *file, int rounds)
{
	for (int r = 0; r < rounds; r++) {
		off_t before = size_of(file);
		double t0 = now_us();
		if (kill(pid, SIGUSR1) < 0)
			die("kill");
		for (;;) {
			off_t now = size_of(file);
			if (now > before) {
				/* a complete line: the file ends with a newline */
				int fd = open(file, O_RDONLY);
				char c = 0;
				if (fd >= 0 && pread(fd, &c, 1, now - 1) == 1 && c == '\n') {
					close(fd);
					break;
				}
				if (fd >= 0)
					close(fd);
			}
			if (now_us() - t0 > 30e6) {
				say("timeout\n");
				return 3;
			}
		}
		say("%.1f\n", now_us() - t0);
		struct timespec gap = { 0, 20 * 1000 * 1000 };
		nanosleep(&gap, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "measure"))
		return measure((pid_t)atol(argv[2]), argv[3], atoi(argv[4]));
	if (argc >= 3 && !strcmp(argv[1], "devdump")) {
		int rounds = atoi(argv[2]);
		for (int r = 0; r < rounds; r++) {
			double t0 = now_us();
			if (exitscope_dump("lat") != 0)
				die("exitscope_dump");
			say("%.1f\n", now_us() - t0);
		}
		return 0;
	}
	if (argc < 4 || (strcmp(argv[1], "idle") && strcmp(argv[1], "busy"))) {
		say("usage: tw_latency idle|busy NTHREADS STOPFILE | measure PID FILE ROUNDS | devdump ROUNDS\n");
		return 2;
	}
	int n = atoi(argv[2]), is_busy = !strcmp(argv[1], "busy");
	if (pipe(g_pipe))
		die("pipe");
	pthread_t *t = calloc(n, sizeof *t);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, is_busy ? busy : idle, NULL))
			die("pthread_create");
	say("ready %d\n", (int)getpid());
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	while (access(argv[3], F_OK) != 0)
		nanosleep(&nap, NULL);
	g_stop = 1;
	close(g_pipe[1]);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
