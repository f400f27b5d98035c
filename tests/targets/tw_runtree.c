/*
 * tw_runtree: a small forking tree with a known number of getppid calls
 * per phase, for run-wide windows (t900). Usage: tw_runtree WORKERS CALLS
 *   1. forks WORKERS children; each makes CALLS getppid calls and says so;
 *   2. once all have, child 0 writes "run-dump inside" to /dev/exitscope
 *      (a run-wide window closed from inside a child), then every child
 *      makes CALLS more getppid calls and exits 0;
 *   3. after they are gone, one late child makes CALLS getppid calls.
 * Prints "devfile=R" (child 0's write: bytes or -errno) and exits 0.
 */
#include "tt_common.h"
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void calls(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int workers = atoi(argv[1]);
	long n = atol(argv[2]);
	int ready[2], result[2];
	int go[64][2];
	if (workers < 1 || workers > 64 || pipe(ready) || pipe(result))
		return 2;
	for (int w = 0; w < workers; w++) {
		if (pipe(go[w]))
			return 2;
		if (fork() == 0) {
			char c = 'r';
			calls(n);
			if (write(ready[1], &c, 1) != 1 || read(go[w][0], &c, 1) != 1)
				_exit(3);
			if (c == 'd') {
				static const char cmd[] = "run-dump inside\n";
				int fd = open("/dev/exitscope", O_WRONLY);
				long r = fd < 0 ? -errno : write(fd, cmd, sizeof(cmd) - 1);
				if (r < 0 && fd >= 0)
					r = -errno;
				if (fd >= 0)
					close(fd);
				if (write(result[1], &r, sizeof(r)) != sizeof(r))
					_exit(3);
			}
			calls(n);
			_exit(0);
		}
	}
	char c;
	for (int w = 0; w < workers; w++)
		if (read(ready[0], &c, 1) != 1)
			return 3;
	c = 'd';
	long r = 0;
	if (write(go[0][1], &c, 1) != 1 || read(result[0], &r, sizeof(r)) != sizeof(r))
		return 3;
	c = 'g';
	for (int w = 1; w < workers; w++)
		if (write(go[w][1], &c, 1) != 1)
			return 3;
	int status, bad = 0;
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	if (fork() == 0) {
		calls(n);
		_exit(0);
	}
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	say("devfile=%ld\n", r);
	return bad ? 4 : 0;
}
