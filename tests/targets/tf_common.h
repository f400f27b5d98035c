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
#include <sys/syscall.h>

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

__attribute__((unused)) static int tf_finish(void)
{
    say("%s\n", g_tf_wrong ? "FAILED" : "all checks held");
    return g_tf_wrong ? 1 : 0;
}

#endif
