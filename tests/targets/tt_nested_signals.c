/*
 * Nested signals: a handler interrupted by another signal it raises; the same
 * with that signal in sa_mask (delivery deferred to the handler's return);
 * SA_NODEFER recursion three deep; and the mask seen inside a handler.
 */
#include "tt_common.h"
#include <signal.h>

static char g_log[256];
static int g_len;
static volatile int g_depth;

static void note(const char *s)
{
    while (*s && g_len < (int)sizeof g_log - 2)
        g_log[g_len++] = *s++;
    g_log[g_len++] = ' ';
}

static void flush(const char *title)
{
    say("%s: %.*s\n", title, g_len ? g_len - 1 : 0, g_log);
    g_len = 0;
}

static int is_blocked(int sig)
{
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, sig);
}

static void on_usr2(int sig)
{
    note("U+");
    note(is_blocked(SIGUSR2) ? "(U-blocked)" : "(U-open)");
    note("U-");
}

static void on_alarm(int sig)
{
    note("A+");
    note(is_blocked(SIGALRM) ? "(A-blocked)" : "(A-open)");
    note(is_blocked(SIGUSR2) ? "(U-blocked)" : "(U-open)");
    raise(SIGUSR2);
    note("A-");
}

static void on_int(int sig)
{
    char s[16];
    int d = ++g_depth;
    snprintf(s, sizeof s, "I%d+", d);
    note(s);
    if (d < 3)
        raise(SIGINT);
    snprintf(s, sizeof s, "I%d-", d);
    note(s);
}

static void install(int sig, void (*fn)(int), int flags, int masked)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (masked)
        sigaddset(&sa.sa_mask, masked);
    sigaction(sig, &sa, NULL);
}

int main(void)
{
    install(SIGUSR2, on_usr2, 0, 0);
    install(SIGALRM, on_alarm, 0, 0);
    raise(SIGALRM);
    flush("nested");

    install(SIGALRM, on_alarm, 0, SIGUSR2);
    raise(SIGALRM);
    flush("deferred");

    install(SIGINT, on_int, SA_NODEFER, 0);
    raise(SIGINT);
    flush("SA_NODEFER");

    install(SIGINT, on_int, 0, 0);
    g_depth = 0;
    raise(SIGINT);
    flush("default defer");
    say("mask after all handlers: SIGALRM %s, SIGUSR2 %s, SIGINT %s\n", is_blocked(SIGALRM) ? "blocked" : "open",
        is_blocked(SIGUSR2) ? "blocked" : "open", is_blocked(SIGINT) ? "blocked" : "open");
    return 0;
}
