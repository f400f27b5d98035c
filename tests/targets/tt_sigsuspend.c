/*
 * Block every signal, then let exactly one through with sigsuspend: first a
 * SIGUSR2 sent by a child, then a SIGALRM from a timer. Prints the mask read
 * back with sigprocmask(SIG_BLOCK, NULL, &old) for a few well-known signals,
 * and checks that a blocked signal stays pending until it is unblocked.
 */
#include "tt_common.h"
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>

static volatile sig_atomic_t g_usr2, g_alrm, g_term;

static void on_sig(int sig)
{
    if (sig == SIGUSR2)
        g_usr2++;
    else if (sig == SIGALRM)
        g_alrm++;
    else if (sig == SIGTERM)
        g_term++;
}

static void show_mask(const char *when)
{
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    say("%s: SIGINT %s, SIGTERM %s, SIGUSR2 %s, SIGALRM %s\n", when, sigismember(&cur, SIGINT) ? "blocked" : "open",
        sigismember(&cur, SIGTERM) ? "blocked" : "open", sigismember(&cur, SIGUSR2) ? "blocked" : "open",
        sigismember(&cur, SIGALRM) ? "blocked" : "open");
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sig;
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    show_mask("at start");
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    show_mask("after blocking all");

    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        kill(getppid(), SIGUSR2);
        _exit(0);
    }
    sigset_t wait_mask;
    sigfillset(&wait_mask);
    sigdelset(&wait_mask, SIGUSR2);
    int r = sigsuspend(&wait_mask);
    say("sigsuspend for SIGUSR2 returned %d %s, usr2 handler ran %d, alrm %d\n", r, errname(errno), (int)g_usr2,
        (int)g_alrm);
    show_mask("after sigsuspend");
    waitpid(pid, NULL, 0);

    struct itimerval it = {{0, 0}, {0, 50 * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    sigfillset(&wait_mask);
    sigdelset(&wait_mask, SIGALRM);
    r = sigsuspend(&wait_mask);
    say("sigsuspend for SIGALRM returned %d %s, usr2 handler ran %d, alrm %d\n", r, errname(errno), (int)g_usr2,
        (int)g_alrm);

    raise(SIGTERM);
    sigset_t pend;
    sigpending(&pend);
    say("SIGTERM raised while blocked: pending %s, handler ran %d\n", sigismember(&pend, SIGTERM) ? "yes" : "no",
        (int)g_term);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, SIGTERM);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    say("after unblocking SIGTERM: handler ran %d\n", (int)g_term);
    show_mask("after unblocking SIGTERM");

    sigprocmask(SIG_SETMASK, &old, NULL);
    show_mask("after restoring");
    return 0;
}
