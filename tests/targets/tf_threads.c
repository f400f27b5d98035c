/*
 * Pitfall 4: 16 threads hammer one inline site (`mov $110,%eax; syscall`,
 * getppid) from the start, so the site is rewritten while the others are
 * trapping at it, stopped between its instructions, or already running the
 * new bytes. Every call must be counted exactly once: 16 x N in the window.
 * Threads start, report ready and wait by spinning (no system call) until
 * the window "begin" is closed; when done they spin again until the
 * window "threads" is closed, so that window holds the loop's calls only.
 * Usage: tf_threads [N]   (calls per thread, default 100000)
 */
#include "tf_common.h"
#include <pthread.h>

#define NTHREADS 16

TF_SITE(site_getppid, 110);

static volatile int g_ready, g_go, g_done, g_release;
static long g_calls;
static long g_ppid;
static long g_bad[NTHREADS];

static void *worker(void *arg)
{
    long i = (long)arg, bad = 0;
    __atomic_add_fetch(&g_ready, 1, __ATOMIC_ACQ_REL);
    spin_until(&g_go, 1);
    for (long n = 0; n < g_calls; n++)
        bad += site_getppid(0, 0, 0) != g_ppid;
    g_bad[i] = bad;
    __atomic_add_fetch(&g_done, 1, __ATOMIC_ACQ_REL);
    spin_until(&g_release, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    g_calls = argc > 1 ? atol(argv[1]) : 100000;
    g_ppid = getppid();
    pthread_t th[NTHREADS];
    for (long i = 0; i < NTHREADS; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)i))
            die("pthread_create");
    spin_until(&g_ready, NTHREADS);
    mark("begin");
    __atomic_store_n(&g_go, 1, __ATOMIC_RELEASE);
    spin_until(&g_done, NTHREADS);
    mark("threads");
    __atomic_store_n(&g_release, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    long bad = 0;
    for (int i = 0; i < NTHREADS; i++)
        bad += g_bad[i];
    check(bad == 0, "%d threads x %ld getppid at one site: every call returned the parent's pid (%ld did not)",
          NTHREADS, g_calls, bad);
    note("expect threads getppid=%ld", NTHREADS * g_calls);
    note("fast threads");
    return tf_finish();
}
