/*
 * Pitfall 5: a restartable read blocked at a site while another thread
 * makes that site hot. Thread B blocks at an inline read site
 * (`mov $0,%eax; syscall`) on an empty pipe. Then:
 *  - window "hot": the main thread reads /dev/zero through the same site
 *    ZREADS times (the site is rewritten while B sleeps inside it);
 *  - window "signal": the main thread sends B SIGUSR2, whose SA_RESTART
 *    handler calls getpid at an inline site; the kernel restarts B's read
 *    (it rewinds B onto the `syscall` it was in). The main thread waits,
 *    polling /proc (not compared), until B sleeps in read again;
 *  - window "data": the main thread writes to the pipe; B's restarted read
 *    completes with that data.
 * Counts as strace -f -c counts them: B's read is two calls, one of them an
 * error (ERESTARTSYS). A record counts a call when it enters and its error
 * when it returns: B's first read enters before "begin" and fails in
 * "signal", where the restarted read enters; that one returns in "data".
 */
#include "tf_common.h"
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#define ZREADS 1000

TF_SITE(site_getpid, 39);
TF_SITE(site_read, 0);

static volatile int g_handled, g_done, g_release;
static long g_pid, g_b_tid, g_b_ret;
static int g_pipe[2];
static char g_b_buf[32];

static void on_usr2(int sig)
{
    if (site_getpid(0, 0, 0) == g_pid)
        g_handled++;
}

static void *thread_b(void *arg)
{
    g_b_tid = syscall(SYS_gettid);
    g_b_ret = site_read(g_pipe[0], (long)g_b_buf, 16);
    __atomic_store_n(&g_done, 1, __ATOMIC_RELEASE);
    spin_until(&g_release, 1);
    return NULL;
}
static void wait_asleep(int stat_fd, int sys_fd)
{
    struct timespec ms = { 0, 1000000 };
    while (!tf_asleep_in_read(stat_fd, sys_fd))
        nanosleep(&ms, NULL);
}

int main(void)
{
    g_pid = getpid();
    int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    if (zero < 0 || pipe(g_pipe))
        die("open/pipe");
    struct sigaction sa = { .sa_handler = on_usr2, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR2, &sa, NULL))
        die("sigaction");
    pthread_t th;
    if (pthread_create(&th, NULL, thread_b, NULL))
        die("pthread_create");
    while (!__atomic_load_n(&g_b_tid, __ATOMIC_ACQUIRE))
        __builtin_ia32_pause();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/stat", g_b_tid);
    int stat_fd = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", g_b_tid);
    int sys_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (stat_fd < 0 || sys_fd < 0)
        die("open /proc/self/task");
    wait_asleep(stat_fd, sys_fd);
    mark("begin");

    char buf[8];
    long bad = 0;
    for (int i = 0; i < ZREADS; i++) {
        memset(buf, 1, sizeof buf);
        bad += site_read(zero, (long)buf, 8) != 8 || memcmp(buf, "\0\0\0\0\0\0\0\0", 8);
    }
    mark("hot");

    syscall(SYS_tgkill, g_pid, g_b_tid, SIGUSR2);
    spin_until(&g_handled, 1);
    wait_asleep(stat_fd, sys_fd);
    mark("signal");

    if (write(g_pipe[1], "written later 16", 16) != 16)
        die("write");
    spin_until(&g_done, 1);
    mark("data");
    __atomic_store_n(&g_release, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);

    check(bad == 0, "%d reads of /dev/zero at the site while thread B sleeps in it", ZREADS);
    check(g_handled == 1, "B's SA_RESTART handler ran once (getpid at an inline site)");
    check(g_b_ret == 16 && memcmp(g_b_buf, "written later 16", 16) == 0,
          "B's read restarted after the handler and returned the 16 bytes written later");
    note("expect hot read=%d", ZREADS);
    note("vary signal pread64 clock_nanosleep nanosleep");
    note("expect signal read=1/1 tgkill=1 getpid=1 rt_sigreturn=1");
    note("expect data read=0/0 write=1");
    note("fast hot");
    return tf_finish();
}
