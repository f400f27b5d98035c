/*
 * A program that takes descriptor numbers the runtime may hold (t160).
 *   all FILE   dup2 FILE onto every descriptor from 3 up to the soft
 *              RLIMIT_NOFILE, write a byte to each, getppid 100 times,
 *              close them all with close_range
 *   high FILE  the same over 1000..1099 only, then close a window through
 *              /dev/exitscope (when the table has room for it) and getppid
 *              100 times more
 *   close FILE close every descriptor from 3 up to the soft limit, one by
 *              one, counting which close succeeded (FILE is not used)
 *   spawn FILE posix_spawn bash with FILE on descriptors 1000..1009 (a
 *              dup2 in a child that shares our memory), which writes to each;
 *              then getppid 100 times
 * Prints what it saw; the same natively and under exitscope.
 */
#include "tt_common.h"
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/syscall.h>

static struct rlimit g_start;

static int take(const char *file, long lo, long hi)
{
	int f = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	int bad = 0;
	for (long fd = lo; fd < hi; fd++)
		if (fd != f && dup2(f, (int)fd) != fd)
			bad++;
	for (long fd = lo; fd < hi; fd++)
		if (fd != f && write((int)fd, "p", 1) != 1)
			bad++;
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		say("usage: th_fd_takeover all|high|close|spawn FILE\n");
		return 2;
	}
	getrlimit(RLIMIT_NOFILE, &g_start);
	if (!strcmp(argv[1], "all") || !strcmp(argv[1], "high")) {
		bool all = !strcmp(argv[1], "all");
		long hi = all ? (long)g_start.rlim_cur : 1100;
		if (hi > (long)g_start.rlim_cur)
			hi = (long)g_start.rlim_cur;
		int bad = take(argv[2], all ? 3 : 1000, hi);
		for (int i = 0; i < 100; i++)
			syscall(SYS_getppid);
		if (!all) {
			int d = open("/dev/exitscope", O_WRONLY);
			if (d >= 0) {
				if (write(d, "dump taken\n", 11) != 11)
					bad++;
				close(d);
			}
			for (int i = 0; i < 100; i++)
				syscall(SYS_getppid);
		}
		if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
			bad++;
		say("%s: descriptors %ld..%ld taken, calls that failed: %d\n", argv[1], all ? 3L : 1000L, hi - 1, bad);
		return 0;
	}
	if (!strcmp(argv[1], "spawn")) {
		int f = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		for (int fd = 1000; fd < 1010; fd++)
			posix_spawn_file_actions_adddup2(&fa, f, fd);
		char *args[] = { "bash", "-c", "for fd in 1000 1001 1002 1003 1004 1005 1006 1007 1008 1009; do "
				 "echo spawned $fd >&$fd; done", NULL };
		pid_t pid;
		int st = -1;
		int r = posix_spawn(&pid, "/bin/bash", &fa, NULL, args, NULL);
		if (r == 0)
			waitpid(pid, &st, 0);
		for (int i = 0; i < 100; i++)
			syscall(SYS_getppid);
		say("spawn: posix_spawn %d, child status %d\n", r, st);
		return 0;
	}
	if (!strcmp(argv[1], "close")) {
		long closed = 0, ebadf = 0, other = 0;
		for (long fd = 3; fd < (long)g_start.rlim_cur; fd++) {
			if (close((int)fd) == 0)
				closed++;
			else if (errno == EBADF)
				ebadf++;
			else
				other++;
		}
		say("close: 3..%ld: closed %ld, EBADF %ld, other %ld\n", (long)g_start.rlim_cur - 1, closed, ebadf,
		    other);
		return 0;
	}
	say("unknown mode '%s'\n", argv[1]);
	return 2;
}
