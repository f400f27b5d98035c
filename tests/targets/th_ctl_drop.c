/*
 * A root program that drops to another user (t610): it sets its groups,
 * gid and uid to those given (setgroups, setresgid, setresuid, so every
 * thread the C library knows follows), prints "dropped PID uid=U euid=E",
 * then issues one getppid every 5 ms until STOPFILE exists.
 * Usage: th_ctl_drop UID GID STOPFILE
 */
#include "tt_common.h"
#include <grp.h>
#include <sys/syscall.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		say("usage: th_ctl_drop UID GID STOPFILE\n");
		return 2;
	}
	uid_t uid = (uid_t)atol(argv[1]);
	gid_t gid = (gid_t)atol(argv[2]);
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0) {
		say("drop failed: %s\n", strerror(errno));
		return 1;
	}
	say("dropped %d uid=%d euid=%d\n", (int)getpid(), (int)getuid(), (int)geteuid());
	long n = 0;
	struct timespec nap = { 0, 5 * 1000 * 1000 };
	while (access(argv[3], F_OK) != 0) {
		syscall(SYS_getppid);
		n++;
		nanosleep(&nap, NULL);
	}
	say("getppid=%ld\n", n);
	return 0;
}
