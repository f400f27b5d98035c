/*
 * exit_group from a non-main thread while the others are blocked: three
 * threads wait in read on a pipe nobody writes, one in pthread_cond_wait, and
 * the main thread in pthread_join. The last thread calls exit_group(7).
 */
#include "tt_common.h"
#include <pthread.h>
#include <sys/syscall.h>

static int g_pipe[2];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t g_ready;

static void *reader(void *arg)
{
    char c;
    pthread_barrier_wait(&g_ready);
    ssize_t n = read(g_pipe[0], &c, 1);
    say("reader: read returned %zd (not expected)\n", n);
    return NULL;
}

static void *waiter(void *arg)
{
    pthread_mutex_lock(&g_lock);
    pthread_barrier_wait(&g_ready);
    pthread_cond_wait(&g_cond, &g_lock);
    say("waiter: woke up (not expected)\n");
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

static void *leaver(void *arg)
{
    pthread_barrier_wait(&g_ready);
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    for (int i = 0; i < 10; i++)
        syscall(SYS_getppid);
    say("leaver: calling exit_group(7) from a non-main thread\n");
    syscall(SYS_exit_group, 7);
    return NULL;
}

int main(void)
{
    pthread_t t[5];
    if (pipe(g_pipe))
        die("pipe");
    pthread_barrier_init(&g_ready, NULL, 6);
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, reader, NULL);
    pthread_create(&t[3], NULL, waiter, NULL);
    pthread_create(&t[4], NULL, leaver, NULL);
    pthread_barrier_wait(&g_ready);
    say("main: all threads started, joining the first reader\n");
    pthread_join(t[0], NULL);
    say("main: join returned (not expected)\n");
    return 0;
}
