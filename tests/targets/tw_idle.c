/*
 * A long-running program for outside boundaries (t120): it issues one
 * getppid every 5 ms until a stop file exists (or a time is up), then prints
 * how many getppid calls it made. Usage:
 *   tw_idle MODE STOPFILE
 * MODE:
 *   plain     nothing special
 *   block     blocks every signal first (sigprocmask)
 *   ignore    ignores every signal it can (SIG_IGN), blocks none
 *   handler   installs its own SIGUSR1 handler, which counts ("got=N")
 *   fork      forks a child first; both loop (each prints its own lines),
 *             the parent waits for the child and fails if it failed
 *   timed:MS  loops for MS milliseconds instead of waiting for STOPFILE
 *   touch     creates STOPFILE and exits at once (did the program run?)
 * Prints "ready PID" once looping (a fork child: "child PID ready"), and at
 * the end "getppid=N" (fork child: "child getppid=N"; handler: "got=N").
 */
#include "tt_common.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static volatile sig_atomic_t g_got;

static void on_usr1(int sig)
{
	(void)sig;
	g_got++;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static long loop(const char *stop, long ms)
{
	long n = 0, end = now_ms() + ms;
	struct timespec nap = { 0, 5 * 1000 * 1000 };
	for (;;) {
		if (ms >= 0 ? now_ms() >= end : access(stop, F_OK) == 0)
			break;
		syscall(SYS_getppid);
		n++;
		nanosleep(&nap, NULL);
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		say("usage: tw_idle MODE STOPFILE\n");
		return 2;
	}
	const char *mode = argv[1], *stop = argv[2];
	long ms = -1;
	pid_t child = -1;

	if (!strcmp(mode, "touch")) {
		int fd = open(stop, O_WRONLY | O_CREAT, 0644);
		return fd < 0;
	} else if (!strcmp(mode, "block")) {
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
	} else if (!strcmp(mode, "ignore")) {
		for (int s = 1; s < 65; s++)
			if (s != SIGKILL && s != SIGSTOP)
				signal(s, SIG_IGN);
	} else if (!strcmp(mode, "handler")) {
		struct sigaction sa = { .sa_handler = on_usr1 };
		sigaction(SIGUSR1, &sa, NULL);
	} else if (!strcmp(mode, "fork")) {
		child = fork();
		if (child < 0)
			die("fork");
		if (child == 0) {
			say("child %d ready\n", (int)getpid());
			long n = loop(stop, -1);
			say("child getppid=%ld\n", n);
			return 0;
		}
	} else if (!strncmp(mode, "timed:", 6)) {
		ms = atol(mode + 6);
	} else if (strcmp(mode, "plain")) {
		say("unknown mode %s\n", mode);
		return 2;
	}
	say("ready %d\n", (int)getpid());
	long n = loop(stop, ms);
	if (child > 0) {
		int st;
		if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st))
			die("child");
	}
	if (!strcmp(mode, "handler"))
		say("got=%d\n", (int)g_got);
	say("getppid=%ld\n", n);
	return 0;
}
