/*
 * tw_forkdev: fork while other threads use /dev/exitscope. Two threads open
 * and close /dev/exitscope (and read it) in a loop, so the runtime's
 * bookkeeping of the emulated file is busy at the moment of many forks;
 * each fork child then uses the file itself (exitscope_dump) and exits 0.
 * A child that inherited a lock held by a parent thread would hang: the
 * parent gives each child 2 s, kills it if it is still there, and counts it.
 *
 * Usage: tw_forkdev FORKS   prints "forks N hung H" (status 0 when H is 0)
 */
#include "tt_common.h"
#include <exitscope.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static volatile int g_stop;

static void *churn(void *arg)
{
	char buf[256];
	while (!g_stop) {
		int fd = open("/dev/exitscope", O_RDONLY);
		if (fd >= 0) {
			if (arg)
				(void)!read(fd, buf, sizeof(buf));
			close(fd);
		}
	}
	return NULL;
}

/* Wait up to ms for pid; kill it if it is still there. True if it exited 0 by itself. */
static int reap(pid_t pid, int ms)
{
	int st;
	for (int i = 0; i < ms; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) && WEXITSTATUS(st) == 0;
		struct timespec one = { 0, 1000000 };
		nanosleep(&one, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 0;
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 200, hung = 0;
	pthread_t t[2];
	if (pthread_create(&t[0], NULL, churn, NULL) || pthread_create(&t[1], NULL, churn, (void *)1))
		die("pthread_create");
	for (int i = 0; i < forks; i++) {
		pid_t p = fork();
		if (p < 0)
			die("fork");
		if (p == 0) {
			exitscope_dump("child");
			_exit(0);
		}
		if (!reap(p, 2000))
			hung++;
	}
	g_stop = 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	say("forks %d hung %d\n", forks, hung);
	return hung != 0;
}
