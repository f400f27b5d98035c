/*
 * Pitfall 6: signal handlers that make system calls while the interrupted
 * thread is in a hot loop of calls, and a handler that leaves with
 * siglongjmp while the thread was blocked in a read.
 *  - window "itimer": ITIMER_REAL every 200 us; the main thread calls libc's
 *    getppid in a loop (at least LOOPS times, and until the handler ran at
 *    least 5 times); the handler calls getpid at an inline site. Counts:
 *    getppid = the loop's calls, getpid = rt_sigreturn = the handler's runs.
 *  - window "tgkill": a second thread queues TGKILLS real-time signals to
 *    the main thread with tgkill while it calls an inline getppid site;
 *    every signal is delivered (queued, not merged), so getpid =
 *    rt_sigreturn = TGKILLS exactly.
 *  - window "longjmp": the main thread makes an inline read site hot on
 *    /dev/zero, then blocks at that site on an empty pipe; a helper thread
 *    waits (polling /proc, not compared) until it is asleep in read and
 *    sends SIGUSR2, whose handler calls getpid and siglongjmps out. The
 *    site must still work: a write to the pipe is read back through it,
 *    and the /dev/zero reads go on.
 * Counts that depend on timing go to stderr only (stdout stays the same
 * in every run).
 */
#include "tf_common.h"
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#define LOOPS 20000
#define TGKILLS 200
#define ZREADS 1000

TF_SITE(site_getpid, 39);
TF_SITE(site_getppid, 110);
TF_SITE(site_read, 0);

static volatile int g_handled;
static volatile int g_ready, g_go, g_sent, g_release, g_reading, g_poke_done;
static long g_main_tid, g_pid, g_handler_bad;
static sigjmp_buf g_env;

static void on_signal(int sig)
{
    if (site_getpid(0, 0, 0) != g_pid)
        g_handler_bad++;
    g_handled++;
}

static void on_usr2(int sig)
{
    if (site_getpid(0, 0, 0) != g_pid)
        g_handler_bad++;
    siglongjmp(g_env, 1);
}
static int g_stat_fd, g_sys_fd;

static void *helper(void *arg)
{
    __atomic_store_n(&g_ready, 1, __ATOMIC_RELEASE);	/* its start-up calls are over */
    spin_until(&g_go, 1);
    for (int i = 0; i < TGKILLS; i++) {
        syscall(SYS_tgkill, g_pid, g_main_tid, SIGRTMIN + 1);
        for (volatile int d = 0; d < 3000; d++)
            __builtin_ia32_pause();
    }
    __atomic_store_n(&g_sent, 1, __ATOMIC_RELEASE);
    spin_until(&g_reading, 1);
    struct timespec ms = { 0, 1000000 };
    while (!tf_asleep_in_read(g_stat_fd, g_sys_fd))
        nanosleep(&ms, NULL);
    syscall(SYS_tgkill, g_pid, g_main_tid, SIGUSR2);
    __atomic_store_n(&g_poke_done, 1, __ATOMIC_RELEASE);
    spin_until(&g_release, 1);
    return NULL;
}

int main(void)
{
    long ppid = getppid();
    g_pid = getpid();
    g_main_tid = syscall(SYS_gettid);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/stat", g_main_tid);
    g_stat_fd = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", g_main_tid);
    g_sys_fd = open(path, O_RDONLY | O_CLOEXEC);
    int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    int pfd[2];
    if (g_stat_fd < 0 || g_sys_fd < 0 || zero < 0 || pipe(pfd))
        die("open/pipe");
    struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) || sigaction(SIGRTMIN + 1, &sa, NULL))
        die("sigaction");
    sa.sa_handler = on_usr2;
    sa.sa_flags = 0;
    if (sigaction(SIGUSR2, &sa, NULL))
        die("sigaction");
    /* The helper starts with SIGALRM blocked: the timer's signal is the
     * process's, and must interrupt the main thread's loop only. */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL);
    pthread_t th;
    if (pthread_create(&th, NULL, helper, NULL))
        die("pthread_create");
    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
    spin_until(&g_ready, 1);
    mark("begin");

    /* itimer */
    struct itimerval it = { { 0, 200 }, { 0, 200 } }, off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &it, NULL);
    long loops = 0, bad = 0;
    while (loops < LOOPS || g_handled < 5) {
        bad += getppid() != ppid;
        loops++;
    }
    setitimer(ITIMER_REAL, &off, NULL);
    sigprocmask(SIG_BLOCK, &alrm, NULL);	/* a last expiry stays pending, uncounted */
    int handled = g_handled;
    mark("itimer");
    check(bad == 0 && g_handler_bad == 0,
          "itimer: libc getppid in a loop with a handler calling getpid at an inline site: right values");
    note("vary itimer getpid rt_sigreturn");
    note("expect itimer getppid=%ld getpid=%d rt_sigreturn=%d setitimer=2 rt_sigprocmask=1", loops, handled,
         handled);

    /* tgkill */
    g_handled = 0;
    loops = 0;
    __atomic_store_n(&g_go, 1, __ATOMIC_RELEASE);
    while (loops < LOOPS || g_handled < TGKILLS || !g_sent) {
        bad += site_getppid(0, 0, 0) != ppid;
        loops++;
    }
    mark("tgkill");
    check(bad == 0 && g_handler_bad == 0 && g_handled == TGKILLS,
          "tgkill: %d queued signals each ran the handler once during the inline getppid loop, right values",
          TGKILLS);
    note("fast itimer");
    note("vary tgkill getppid");
    note("expect tgkill getppid=%ld getpid=%d rt_sigreturn=%d tgkill=%d", loops, TGKILLS, TGKILLS, TGKILLS);
    note("fast tgkill");

    /* longjmp */
    char buf[16];
    long zbad = 0;
    for (int i = 0; i < ZREADS; i++) {
        memset(buf, 1, 8);
        zbad += site_read(zero, (long)buf, 8) != 8 || memcmp(buf, "\0\0\0\0\0\0\0\0", 8);
    }
    int jumped = 0;
    long r = 0;
    if (sigsetjmp(g_env, 1) == 0) {
        __atomic_store_n(&g_reading, 1, __ATOMIC_RELEASE);
        r = site_read(pfd[0], (long)buf, 8);	/* blocks: the pipe is empty */
    } else {
        jumped = 1;
    }
    spin_until(&g_poke_done, 1);
    check(jumped && r == 0, "longjmp: the handler left the blocked read with siglongjmp");
    if (write(pfd[1], "late7890", 8) != 8)
        die("write");
    memset(buf, 0, sizeof buf);
    r = site_read(pfd[0], (long)buf, 8);
    check(r == 8 && memcmp(buf, "late7890", 8) == 0, "longjmp: the read site then reads what was written later");
    for (int i = 0; i < ZREADS; i++) {
        memset(buf, 1, 8);
        zbad += site_read(zero, (long)buf, 8) != 8 || memcmp(buf, "\0\0\0\0\0\0\0\0", 8);
    }
    mark("longjmp");
    check(zbad == 0 && g_handler_bad == 0, "longjmp: %d reads of /dev/zero at the site before and after", 2 * ZREADS);
    note("vary longjmp pread64 clock_nanosleep nanosleep");
    note("expect longjmp read=%d/1 getpid=1 rt_sigreturn=0 tgkill=1", 2 * ZREADS + 2);
    note("fast longjmp");

    __atomic_store_n(&g_release, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    return tf_finish();
}
