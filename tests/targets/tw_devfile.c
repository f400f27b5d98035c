/*
 * /dev/exitscope from the program's side (t120). Usage: tw_devfile JSONFILE
 *   1. exitscope_dump/exitscope_reset: prints "dump=R reset=R" (R = 0 under
 *      exitscope, -1 natively); with exitscope that closes two windows.
 *   2. malformed writes, each on its own open: "bogus\n", "dump a\nbogus\n"
 *      (all or nothing), "" is not tested; prints
 *      "malformed=RESULT/ERRNO ..." (-1/EINVAL expected under exitscope).
 *   3. 25 getppid, then reads the file to EOF into JSONFILE (the live
 *      counters) and prints "read=BYTES" (natively: "read=-1").
 */
#include "tt_common.h"
#include <exitscope.h>
#include <fcntl.h>
#include <sys/syscall.h>

static void malformed(const char *what)
{
	int fd = open("/dev/exitscope", O_WRONLY);
	if (fd < 0) {
		say("malformed=open-failed/%s\n", errname(errno));
		return;
	}
	errno = 0;
	ssize_t r = write(fd, what, strlen(what));
	say("malformed=%zd/%s\n", r, errname(r < 0 ? errno : 0));
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		say("usage: tw_devfile JSONFILE\n");
		return 2;
	}
	int d = exitscope_dump("one");
	int r = exitscope_reset();
	say("dump=%d reset=%d\n", d, r);
	malformed("bogus\n");
	malformed("dump a\nbogus\n");
	malformed("resetx\n");
	for (int i = 0; i < 25; i++)
		syscall(SYS_getppid);
	int fd = open("/dev/exitscope", O_RDONLY);
	if (fd < 0) {
		say("read=-1\n");
		return 0;
	}
	int out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		die("open JSONFILE");
	char buf[1000]; /* small reads: the JSON comes in pieces */
	long total = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		if (write(out, buf, n) != n)
			die("write JSONFILE");
		total += n;
	}
	close(out);
	close(fd);
	say("read=%ld%s\n", total, n < 0 ? " (error)" : "");
	return 0;
}
