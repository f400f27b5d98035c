/*
 * EINTR from nanosleep and clock_nanosleep: a timer signal interrupts a long
 * sleep, with and without SA_RESTART (sleeps are never restarted), and the
 * remaining time is reported back; a resumed sleep then completes.
 */
#include "tt_common.h"
#include <signal.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t g_handled;

static void on_alarm(int sig)
{
    g_handled++;
}

static void arm(int ms)
{
    struct itimerval it = {{0, 0}, {0, ms * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
}

static void install(int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = flags;
    sigaction(SIGALRM, &sa, NULL);
}

int main(void)
{
    struct timespec req = {5, 0}, rem = {0, 0};

    install(0);
    arm(100);
    int r = nanosleep(&req, &rem);
    say("nanosleep: returned %d %s, remaining over 3 s: %s, handler ran %d\n", r, errname(errno),
        rem.tv_sec >= 3 ? "yes" : "no", (int)g_handled);

    install(SA_RESTART);
    arm(100);
    r = nanosleep(&req, &rem);
    say("nanosleep with SA_RESTART: returned %d %s, remaining over 3 s: %s, handler ran %d\n", r, errname(errno),
        rem.tv_sec >= 3 ? "yes" : "no", (int)g_handled);

    arm(100);
    r = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
    say("clock_nanosleep: returned %s, remaining over 3 s: %s, handler ran %d\n", errname(r),
        rem.tv_sec >= 3 ? "yes" : "no", (int)g_handled);

    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    struct timespec until = now;
    until.tv_sec += 5;
    arm(100);
    r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
    say("clock_nanosleep absolute: returned %s, handler ran %d\n", errname(r), (int)g_handled);

    arm(50);
    struct timespec shortreq = {0, 300 * 1000 * 1000};
    int interrupted = 0;
    while (nanosleep(&shortreq, &shortreq) != 0 && errno == EINTR)
        interrupted++;
    say("resumed sleep completed after %d interruption(s), handler ran %d\n", interrupted, (int)g_handled);
    return 0;
}
