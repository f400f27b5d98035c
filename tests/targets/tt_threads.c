/*
 * Threads that exit while others run: three workers leave early through
 * pthread_exit while three others keep issuing system calls; one of the busy
 * workers starts and joins a sub-thread, and one detached thread exits on its
 * own. Everything is joined and the return values printed.
 */
#include "tt_common.h"
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/syscall.h>

#define NWORKERS 6
#define BUSY_ROUNDS 3000

static pthread_barrier_t g_start;
static sem_t g_detached_done;
static int g_devnull;
static long g_calls[NWORKERS];

static void *sub_thread(void *arg)
{
    for (int i = 0; i < 200; i++)
        syscall(SYS_getppid);
    return (void *)(long)arg + 1;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    pthread_barrier_wait(&g_start);
    if (id < 3) {
        for (int i = 0; i < 50; i++)
            g_calls[id] += syscall(SYS_getppid) > 0;
        pthread_exit((void *)(id * 10));
    }
    if (id == 3) {
        pthread_t t;
        void *r;
        if (pthread_create(&t, NULL, sub_thread, (void *)100L))
            die("pthread_create sub");
        pthread_join(t, &r);
        if ((long)r != 101)
            say("sub-thread returned %ld\n", (long)r);
    }
    for (int i = 0; i < BUSY_ROUNDS; i++) {
        g_calls[id] += syscall(SYS_getppid) > 0;
        if (write(g_devnull, "x", 1) != 1)
            say("write to /dev/null failed\n");
    }
    return (void *)(id * 10);
}

static void *detached(void *arg)
{
    syscall(SYS_getppid);
    sem_post(&g_detached_done);
    return NULL;
}

int main(void)
{
    pthread_t t[NWORKERS], d;
    g_devnull = open("/dev/null", O_WRONLY);
    if (g_devnull < 0)
        die("open /dev/null");
    pthread_barrier_init(&g_start, NULL, NWORKERS);
    sem_init(&g_detached_done, 0, 0);
    for (long i = 0; i < NWORKERS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i))
            die("pthread_create");
    if (pthread_create(&d, NULL, detached, NULL))
        die("pthread_create detached");
    pthread_detach(d);
    while (sem_wait(&g_detached_done) != 0)
        ;
    say("detached thread finished\n");
    for (int i = 0; i < NWORKERS; i++) {
        void *r;
        int e = pthread_join(t[i], &r);
        say("worker %d joined: %d, returned %ld, %ld calls ok\n", i, e, (long)r, g_calls[i]);
    }
    say("all threads joined\n");
    return 0;
}
