/*
 * A blocking read on an empty pipe interrupted by SIGALRM: with SA_RESTART
 * the read carries on and returns the data a helper thread writes later;
 * without it the read fails with EINTR. The helper blocks SIGALRM so the
 * signal always lands on the reading thread.
 */
#include "tt_common.h"
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t g_handled;
static int g_pipe[2];

static void on_alarm(int sig)
{
    g_handled++;
}

static void *writer(void *arg)
{
    const char *msg = arg;
    struct timespec ts = {0, 600 * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    if (write(g_pipe[1], msg, strlen(msg)) < 0)
        say("writer: write failed\n");
    return NULL;
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
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
}

static pthread_t start_writer(const char *msg)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    pthread_t t;
    if (pthread_create(&t, NULL, writer, (void *)msg))
        die("pthread_create");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return t;
}

int main(void)
{
    char buf[64];
    if (pipe(g_pipe))
        die("pipe");

    install(SA_RESTART);
    pthread_t t = start_writer("restarted");
    arm(100);
    ssize_t n = read(g_pipe[0], buf, sizeof buf);
    say("SA_RESTART: read returned %zd \"%.*s\", handler ran %d times\n", n, n > 0 ? (int)n : 0, buf,
        (int)g_handled);
    pthread_join(t, NULL);

    install(0);
    g_handled = 0;
    t = start_writer("late");
    arm(100);
    n = read(g_pipe[0], buf, sizeof buf);
    int e = errno;
    say("no SA_RESTART: read returned %zd %s, handler ran %d times\n", n, n < 0 ? errname(e) : "", (int)g_handled);
    pthread_join(t, NULL);
    n = read(g_pipe[0], buf, sizeof buf);
    say("after the writer: read returned %zd \"%.*s\"\n", n, n > 0 ? (int)n : 0, buf);
    return 0;
}
