/*
 * A signal at the edge of a call: a 50 µs interval timer (SA_RESTART)
 * fires while the program makes N getppid calls. Each call is counted
 * once and none fails, wherever the signal lands: just before the runtime
 * issues the call, during it, or just after. (A signal that came just
 * before the call was once taken for one that had interrupted it, and the
 * call counted twice, once failed.) Then N write + read pairs of 64 bytes
 * on a pipe under the same timer: every one moves 64 bytes, so a signal
 * that lands while the fast entry has the arguments' registers in use
 * gives them back to the program. (Such a call once went out again with
 * the thread block's address as its descriptor: EBADF.)
 * Usage: tf_edge [N]   (default 2000000). Exits 1 if a pipe call failed.
 */
#include "tf_common.h"
#include <signal.h>
#include <sys/time.h>
#include <errno.h>

static volatile long g_hits;

static void on_alarm(int sig)
{
    (void)sig;
    g_hits++;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGALRM, &sa, NULL))
        die("sigaction");
    struct itimerval it = { { 0, 50 }, { 0, 50 } };
    if (setitimer(ITIMER_REAL, &it, NULL))
        die("setitimer");
    for (long i = 0; i < n; i++)
        getppid();
    int fd[2];
    if (pipe(fd))
        die("pipe");
    char buf[64] = { 0 };
    long bad = 0, first_errno = 0;
    for (long i = 0; i < n; i++) {
        long w = write(fd[1], buf, sizeof(buf));
        if (w != (long)sizeof(buf) && !first_errno)
            first_errno = errno;
        long r = w == (long)sizeof(buf) ? read(fd[0], buf, sizeof(buf)) : 0;
        if (r != (long)sizeof(buf) && w == (long)sizeof(buf) && !first_errno)
            first_errno = errno;
        bad += w != (long)sizeof(buf) || r != (long)sizeof(buf);
    }
    memset(&it, 0, sizeof(it));
    setitimer(ITIMER_REAL, &it, NULL);
    say("signals handled: %s\n", g_hits > 0 ? "some" : "none");
    say("pipe write+read pairs that failed: %ld%s%s\n", bad, bad ? ", first: " : "",
        bad ? strerror((int)first_errno) : "");
    return bad ? 1 : 0;
}
