/*
 * siglongjmp out of a handler that interrupted a blocking call: a read on
 * an empty pipe, a nanosleep and a ppoll are each interrupted by SIGALRM
 * (with SA_RESTART for the read) and the handler jumps out. Afterwards the
 * mask is as sigsetjmp saved it and the calls work again.
 */
#include "tt_common.h"
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

static sigjmp_buf g_env;
static volatile int g_jumps;

static void on_alarm(int sig)
{
    (void)sig;
    g_jumps++;
    siglongjmp(g_env, 1);
}

static void arm(int ms)
{
    struct itimerval it = {{0, 0}, {0, ms * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
}

int main(void)
{
    int p[2];
    char buf[16];
    if (pipe(p))
        die("pipe");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    for (int round = 0; round < 3; round++) {
        if (sigsetjmp(g_env, 1) == 0) {
            arm(30);
            ssize_t n = read(p[0], buf, sizeof buf);
            say("read returned %zd: not interrupted?\n", n);
        }
        if (sigsetjmp(g_env, 1) == 0) {
            arm(30);
            struct timespec ts = {5, 0};
            nanosleep(&ts, NULL);
            say("nanosleep returned: not interrupted?\n");
        }
        if (sigsetjmp(g_env, 1) == 0) {
            arm(30);
            struct pollfd pfd = {p[0], POLLIN, 0};
            sigset_t none;
            sigemptyset(&none);
            struct timespec ts = {5, 0};
            ppoll(&pfd, 1, &ts, &none);
            say("ppoll returned: not interrupted?\n");
        }
    }
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    say("jumps %d, SIGALRM %s\n", g_jumps, sigismember(&cur, SIGALRM) ? "blocked" : "open");
    if (write(p[1], "ok", 2) != 2)
        die("write");
    ssize_t n = read(p[0], buf, sizeof buf);
    say("read after the jumps: %zd \"%.*s\"\n", n, n > 0 ? (int)n : 0, buf);
    return 0;
}
