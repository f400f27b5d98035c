/*
 * Helpers shared by the torture targets (tests/targets/tt_*.c). Output goes
 * straight to fd 1 with one write per line, never through a stdio buffer, so
 * lines appear in program order even across fork and signal handlers, and a
 * fork child never repeats its parent's buffered output.
 */
#ifndef TT_COMMON_H
#define TT_COMMON_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* say(fmt, ...): format into a stack buffer and write it to fd 1 in one call. */
__attribute__((format(printf, 1, 2), unused)) static void say(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    int saved = errno;
    for (int off = 0; off < n;) {
        ssize_t w = write(1, buf + off, n - off);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            break;
        }
        off += w;
    }
    errno = saved;
}

/* errname(e): a stable symbolic name for the errno values the targets expect. */
__attribute__((unused)) static const char *errname(int e)
{
    switch (e) {
    case 0: return "0";
    case EINTR: return "EINTR";
    case EBADF: return "EBADF";
    case EAGAIN: return "EAGAIN";
    case ENOENT: return "ENOENT";
    case ESPIPE: return "ESPIPE";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOSYS: return "ENOSYS";
    case EINVAL: return "EINVAL";
    case ECHILD: return "ECHILD";
    default: return "E?";
    }
}

/* blocked_count(): how many of signals 1..31 the program's mask blocks. */
#include <signal.h>
__attribute__((unused)) static int blocked_count(void)
{
    sigset_t cur;
    int n = 0;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    for (int s = 1; s < 32; s++)
        n += sigismember(&cur, s) == 1;
    return n;
}

/* die(what): report an unexpected failure of the target's own set-up. */
__attribute__((noreturn, unused)) static void die(const char *what)
{
    say("setup failed: %s: %s\n", what, errname(errno));
    _exit(99);
}

/*
 * raw_syscall3(nr, a, b, c): issue the `syscall` instruction from this
 * program's own code, bypassing libc and errno. Returns the kernel's value
 * (a negative errno on failure). Safe on threads that have no TLS of their own.
 */
static inline long raw_syscall3(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

#endif
