/*
 * Exact per-thread counts: 8 threads, thread i (named "w<i>") issues
 * (i+1)*100 getppid calls; the main thread issues 7. Usage:
 *   tt_count_threads OUTFILE live   threads spin (no system call in flight)
 *                                   until exit_group ends them
 *   tt_count_threads OUTFILE join   threads return and are joined first
 * OUTFILE gets one line "TID GETPPID_CALLS NAME" per thread (main first), so
 * stdout stays the same from run to run.
 */
#include "tt_common.h"
#include <pthread.h>
#include <semaphore.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define NTHREADS 8
#define MAIN_CALLS 7

static long g_tid[NTHREADS];
static sem_t g_done;
static volatile int g_never;
static volatile int g_back[NTHREADS];
static int g_live;

static void *worker(void *arg)
{
    long i = (long)arg;
    char name[16];
    snprintf(name, sizeof name, "w%ld", i);
    prctl(PR_SET_NAME, name);
    g_tid[i] = syscall(SYS_gettid);
    for (long k = 0; k < (i + 1) * 100; k++)
        syscall(SYS_getppid);
    sem_post(&g_done);
    g_back[i] = 1; /* sem_post's system call, if any, has returned */
    while (g_live && !g_never)
        __builtin_ia32_pause();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        say("usage: tt_count_threads OUTFILE live|join\n");
        return 2;
    }
    g_live = strcmp(argv[2], "live") == 0;
    if (sem_init(&g_done, 0, 0))
        die("setup");
    pthread_t t[NTHREADS];
    for (long i = 0; i < NTHREADS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i))
            die("pthread_create");
    for (int i = 0; i < NTHREADS; i++)
        while (sem_wait(&g_done) != 0)
            ;
    for (int i = 0; i < NTHREADS; i++)
        while (!g_back[i])
            __builtin_ia32_pause();
    if (!g_live)
        for (int i = 0; i < NTHREADS; i++)
            pthread_join(t[i], NULL);
    for (int i = 0; i < MAIN_CALLS; i++)
        syscall(SYS_getppid);
    FILE *f = fopen(argv[1], "w");
    if (!f)
        die("fopen");
    fprintf(f, "%d %d main\n", getpid(), MAIN_CALLS);
    for (int i = 0; i < NTHREADS; i++)
        fprintf(f, "%ld %d w%d\n", g_tid[i], (i + 1) * 100, i);
    fclose(f);
    int total = MAIN_CALLS;
    for (int i = 0; i < NTHREADS; i++)
        total += (i + 1) * 100;
    say("%d threads %s\nexpect getppid=%d/0 prctl=%d\n", NTHREADS, g_live ? "still running at exit" : "joined",
        total, NTHREADS);
    return 0;
}
