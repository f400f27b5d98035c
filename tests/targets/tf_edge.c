/*
 * A signal at the edge of a call: a 50 µs interval timer (SA_RESTART)
 * fires while the program makes N getppid calls. Each call is counted
 * once and none fails, wherever the signal lands: just before the runtime
 * issues the call, during it, or just after. (A signal that came just
 * before the call was once taken for one that had interrupted it, and the
 * call counted twice, once failed.)
 * Usage: tf_edge [N]   (default 2000000). Prints the handler's count.
 */
#include "tf_common.h"
#include <signal.h>
#include <sys/time.h>

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
    memset(&it, 0, sizeof(it));
    setitimer(ITIMER_REAL, &it, NULL);
    say("signals handled: %s\n", g_hits > 0 ? "some" : "none");
    return 0;
}
