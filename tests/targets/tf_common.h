/*
 * Helpers for the fast-path torture targets (tests/targets/tf_*.c, t850).
 *
 * Each target runs the same way natively and under exitscope, with or
 * without the fast path, and prints the same stdout in all three: one
 * "ok WHAT" or "WRONG WHAT" line per check, and the counts it made when
 * they are deterministic. It exits 0 when every check held, 1 otherwise.
 *
 * The measured parts are windows closed by marks written to /dev/exitscope
 * (exitscope_dump: without exitscope it does nothing). Start-up happens
 * before the mark "begin" and is not compared. For t850, a target prints on
 * stderr (never compared, since some values depend on timing):
 *   expect LABEL NAME=CALLS[/ERRORS]...  exact counts of the window closed by
 *                                        the mark LABEL (in this process's record)
 *   expect child:NAME NAME=CALLS...      exact totals in the record of child NAME
 *   child NAME PID                       the pid of a child process with a record
 *   vary LABEL NAME...                   calls whose count in window LABEL may differ
 *                                        between runs (polling, a timer's expiries): not
 *                                        compared between runs (an expect line may still
 *                                        give this run's exact count)
 *   fast LABEL                           the window's hot site can take the fast path:
 *                                        exits_fast > 0 with it, 0 without (LABEL
 *                                        child:NAME: the total of that child's record)
 *   nofast LABEL                         the window's site must never be rewritten:
 *                                        exits_fast == 0 with and without the fast path
 */
#ifndef TF_COMMON_H
#define TF_COMMON_H

#include "tt_common.h"
#include <exitscope.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TF_STR2(x) #x
#define TF_STR(x) TF_STR2(x)

/*
 * TF_SITE(name, nr): a leaf function whose only system call site is the
 * 7 bytes `mov $nr,%eax` (b8 imm32) `syscall` (0f 05), the pattern the fast
 * path rewrites. Arguments pass through in rdi, rsi, rdx; it returns the
 * kernel's value (a negative errno on failure).
 */
#define TF_SITE(name, nr)                                                                  \
    long name(long a, long b, long c);                                                     \
    __asm__(".text\n\t.globl " #name "\n\t.type " #name ",@function\n" #name ":\n\t"       \
            "movl $" TF_STR(nr) ", %eax\n\tsyscall\n\tret\n\t.size " #name ", .-" #name "\n")

static int g_tf_wrong;

/* check(cond, fmt, ...): one "ok ..." or "WRONG ..." line on stdout. */
__attribute__((format(printf, 2, 3), unused)) static void check(int cond, const char *fmt, ...)
{
    char buf[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!cond)
        g_tf_wrong++;
    say("%s %s\n", cond ? "ok" : "WRONG", buf);
}

/* note(fmt, ...): one line on stderr, for t850 (expect/vary/fast lines). */
__attribute__((format(printf, 1, 2), unused)) static void note(const char *fmt, ...)
{
    char buf[400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof buf) {
        buf[n++] = '\n';
        int saved = errno;
        if (write(2, buf, n) < 0)
            (void)0;
        errno = saved;
    }
}

/* mark(label): close the window LABEL; nothing without exitscope. */
__attribute__((unused)) static void mark(const char *label)
{
    exitscope_dump(label);
}

/* spin_until(p, v): wait for *p == v with no system call. */
__attribute__((unused)) static void spin_until(volatile int *p, int v)
{
    while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v)
        __builtin_ia32_pause();
}

/* A team of n threads (at most TF_TEAM_MAX) that make their calls together:
 * each spins until all are started and the window "begin" is closed, runs
 * body(its index), which returns how many of its results were wrong, then
 * spins until the window label is closed, so that window holds the body's
 * calls only. Returns the sum of wrong results. */
#define TF_TEAM_MAX 64
typedef long (*tf_body)(long i);
static struct {
    volatile int ready, go, done, release;
    tf_body body;
    long bad[TF_TEAM_MAX];
} g_team;

__attribute__((unused)) static void *tf_team_worker(void *arg)
{
    long i = (long)arg;
    __atomic_add_fetch(&g_team.ready, 1, __ATOMIC_ACQ_REL);
    spin_until(&g_team.go, 1);
    g_team.bad[i] = g_team.body(i);
    __atomic_add_fetch(&g_team.done, 1, __ATOMIC_ACQ_REL);
    spin_until(&g_team.release, 1);
    return NULL;
}

__attribute__((unused)) static long tf_team_run(int n, tf_body body, const char *label)
{
    pthread_t th[TF_TEAM_MAX];
    g_team.body = body;
    for (long i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, tf_team_worker, (void *)i))
            die("pthread_create");
    spin_until(&g_team.ready, n);
    mark("begin");
    __atomic_store_n(&g_team.go, 1, __ATOMIC_RELEASE);
    spin_until(&g_team.done, n);
    mark(label);
    __atomic_store_n(&g_team.release, 1, __ATOMIC_RELEASE);
    long bad = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        bad += g_team.bad[i];
    }
    return bad;
}

/* Is the thread whose /proc stat and syscall files are open asleep in
 * read(2)? (state S, system call 0) */
__attribute__((unused)) static int tf_asleep_in_read(int stat_fd, int sys_fd)
{
    char st[512], sc[64];
    ssize_t n = pread(stat_fd, st, sizeof st - 1, 0);
    ssize_t m = pread(sys_fd, sc, sizeof sc - 1, 0);
    if (n <= 0 || m <= 0)
        return 0;
    st[n] = sc[m] = 0;
    char *p = strrchr(st, ')');
    return p && p[1] == ' ' && p[2] == 'S' && sc[0] == '0' && sc[1] == ' ';
}

__attribute__((unused)) static int tf_finish(void)
{
    say("%s\n", g_tf_wrong ? "FAILED" : "all checks held");
    return g_tf_wrong ? 1 : 0;
}

#endif
