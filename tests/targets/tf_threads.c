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

static long g_calls;
static long g_ppid;

static long body(long i)
{
    long bad = 0;
    (void)i;
    for (long n = 0; n < g_calls; n++)
        bad += site_getppid(0, 0, 0) != g_ppid;
    return bad;
}

int main(int argc, char **argv)
{
    g_calls = argc > 1 ? atol(argv[1]) : 100000;
    g_ppid = getppid();
    long bad = tf_team_run(NTHREADS, body, "threads");
    check(bad == 0, "%d threads x %ld getppid at one site: every call returned the parent's pid (%ld did not)",
          NTHREADS, g_calls, bad);
    note("expect threads getppid=%ld", NTHREADS * g_calls);
    note("fast threads");
    return tf_finish();
}
