/*
 * The program's file descriptor space: which descriptors above 2 are open
 * (scanned with fcntl up to the soft RLIMIT_NOFILE), what the lowest new
 * descriptor is, and whether a write to fd 1000 fails with EBADF. A runtime
 * that keeps descriptors of its own shows up here.
 */
#include "tt_common.h"
#include <fcntl.h>
#include <sys/resource.h>

int main(void)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    long limit = rl.rlim_cur > 65536 ? 65536 : (long)rl.rlim_cur;
    int open_count = 0;
    for (long fd = 3; fd < limit; fd++)
        if (fcntl((int)fd, F_GETFD) >= 0) {
            open_count++;
            say("fd %ld is open\n", fd);
        }
    say("descriptors open above 2: %d\n", open_count);
    int fd = open("/dev/null", O_RDONLY);
    say("lowest new descriptor: %d\n", fd);
    errno = 0;
    ssize_t w = write(1000, "x", 1);
    say("write to fd 1000: %zd %s\n", w, errname(errno));
    say("dup2 onto fd 1000 then close: %s\n", dup2(fd, 1000) == 1000 && close(1000) == 0 ? "ok" : "failed");
    return 0;
}
