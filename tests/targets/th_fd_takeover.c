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
 * Prints what it saw; the same natively and under exitscope.
 */
#include "tt_common.h"
#include <fcntl.h>
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
		say("usage: th_fd_takeover all|high|close FILE\n");
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
