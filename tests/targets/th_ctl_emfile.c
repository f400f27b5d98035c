/*
 * A program that holds every file descriptor (t610): it opens /dev/null
 * until open fails with EMFILE, prints "ready PID held=N errno=E", then
 * issues one getppid every 5 ms until STOPFILE exists (access() needs no
 * descriptor), and prints "getppid=N". Usage: th_ctl_emfile STOPFILE
 */
#include "tt_common.h"
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		say("usage: th_ctl_emfile STOPFILE\n");
		return 2;
	}
	int held = 0, err = 0;
	for (;;) {
		if (open("/dev/null", O_RDONLY) < 0) {
			err = errno;
			break;
		}
		held++;
	}
	say("ready %d held=%d errno=%s\n", (int)getpid(), held, err == EMFILE ? "EMFILE" : strerror(err));
	long n = 0;
	struct timespec nap = { 0, 5 * 1000 * 1000 };
	while (access(argv[1], F_OK) != 0) {
		syscall(SYS_getppid);
		n++;
		nanosleep(&nap, NULL);
	}
	say("getppid=%ld\n", n);
	return 0;
}
