/*
 * Signal handlers that siglongjmp out of blocking calls (read on an empty
 * pipe, pause, a nested handler), with and without the saved signal mask.
 */
#include "tt_common.h"
#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>

static sigjmp_buf g_env;
static volatile sig_atomic_t g_handled;

static void on_alarm(int sig)
{
    g_handled++;
    siglongjmp(g_env, g_handled);
}

static void on_usr2(int sig)
{
    /* Raise SIGALRM from inside this handler: on_alarm jumps out of both. */
    raise(SIGALRM);
    say("on_usr2: not reached\n");
}

static void arm(int ms)
{
    struct itimerval it = {{0, 0}, {0, ms * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
}

static const char *blocked(int sig)
{
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, sig) ? "blocked" : "unblocked";
}

int main(void)
{
    int p[2];
    char c;
    if (pipe(p))
        die("pipe");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);

    for (int round = 0; round < 3; round++) {
        int r = sigsetjmp(g_env, 1);
        if (r == 0) {
            arm(50);
            ssize_t n = read(p[0], &c, 1);
            say("read returned %zd: not expected\n", n);
        } else {
            say("round %d: jumped out of read (value %d), SIGALRM %s\n", round, r, blocked(SIGALRM));
        }
    }

    if (sigsetjmp(g_env, 1) == 0) {
        arm(50);
        pause();
        say("pause returned: not expected\n");
    } else {
        say("jumped out of pause, SIGALRM %s\n", blocked(SIGALRM));
    }

    if (sigsetjmp(g_env, 1) == 0) {
        raise(SIGUSR2);
        say("raise returned: not expected\n");
    } else {
        say("jumped out of nested handlers, SIGALRM %s, SIGUSR2 %s\n", blocked(SIGALRM), blocked(SIGUSR2));
    }

    /* Without savemask the handler's mask (SIGALRM blocked) stays in force. */
    if (sigsetjmp(g_env, 0) == 0) {
        arm(50);
        ssize_t n = read(p[0], &c, 1);
        say("read returned %zd: not expected\n", n);
    } else {
        say("jumped without savemask, SIGALRM %s\n", blocked(SIGALRM));
    }
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    say("after unblocking, SIGALRM %s; handler ran %d times\n", blocked(SIGALRM), (int)g_handled);
    return 0;
}
