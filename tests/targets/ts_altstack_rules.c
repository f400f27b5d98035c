/*
 * The alternate signal stack's rules, as the program sees them: a handler
 * on it sees SS_ONSTACK and gets EPERM when it changes it; a signal raised
 * inside such a handler nests on the same stack, below; SS_AUTODISARM
 * disarms it while the handler runs (a nested signal then runs on the
 * interrupted stack) and rt_sigreturn re-arms it; sizes below MINSIGSTKSZ
 * and unknown flags are refused.
 */
#include "tt_common.h"
#include <signal.h>
#include <sys/mman.h>

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
#define ALT_SIZE 65536

static char *g_alt;
static volatile int g_depth;
static char g_log[512];
static int g_len;

static void note(const char *s)
{
    while (*s && g_len < (int)sizeof g_log - 2)
        g_log[g_len++] = *s++;
    g_log[g_len++] = ' ';
}

static int on_alt(void)
{
    char here;
    return &here >= g_alt && &here < g_alt + ALT_SIZE;
}

static const char *flags_name(int f)
{
    static char s[64];
    snprintf(s, sizeof s, "%s%s%s", (f & SS_ONSTACK) ? "ONSTACK" : (f & SS_DISABLE) ? "DISABLE" : "0",
             (f & (int)SS_AUTODISARM) ? "|AUTODISARM" : "", "");
    return s;
}

static void on_usr1(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    char s[160];
    int d = ++g_depth;
    stack_t cur;
    sigaltstack(NULL, &cur);
    snprintf(s, sizeof s, "[%d on-alt=%d flags=%s size=%zu uc_stack=%s/%zu", d, on_alt(), flags_name(cur.ss_flags),
             cur.ss_size, flags_name(uc->uc_stack.ss_flags), uc->uc_stack.ss_size);
    note(s);
    stack_t other = {.ss_sp = g_alt, .ss_size = ALT_SIZE / 2, .ss_flags = 0};
    errno = 0;
    int r = sigaltstack(&other, NULL);
    snprintf(s, sizeof s, "change=%d/%s", r, r ? errname(errno) : "-");
    note(s);
    stack_t off = {.ss_flags = SS_DISABLE};
    r = sigaltstack(&off, NULL);
    snprintf(s, sizeof s, "disable=%d/%s", r, r ? errname(errno) : "-");
    note(s);
    if (d < 3)
        raise(SIGUSR1);
    snprintf(s, sizeof s, "%d]", d);
    note(s);
    g_depth--;
}

static void flush(const char *title)
{
    say("%s: %.*s\n", title, g_len ? g_len - 1 : 0, g_log);
    g_len = 0;
}

static void set_alt(int flags)
{
    stack_t ss = {.ss_sp = g_alt, .ss_size = ALT_SIZE, .ss_flags = flags};
    if (sigaltstack(&ss, NULL))
        die("sigaltstack");
}

int main(void)
{
    g_alt = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g_alt == MAP_FAILED)
        die("mmap");
    stack_t cur;
    sigaltstack(NULL, &cur);
    say("at start: flags=%s size=%zu\n", flags_name(cur.ss_flags), cur.ss_size);

    stack_t bad = {.ss_sp = g_alt, .ss_size = 1024, .ss_flags = 0};
    errno = 0;
    int r = sigaltstack(&bad, NULL);
    say("size 1024: %d %s\n", r, r ? errname(errno) : "-");
    bad.ss_size = ALT_SIZE;
    bad.ss_flags = 4;
    errno = 0;
    r = sigaltstack(&bad, NULL);
    say("flags 4: %d %s\n", r, r ? errname(errno) : "-");

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_ONSTACK | SA_SIGINFO | SA_NODEFER;
    sigaction(SIGUSR1, &sa, NULL);

    set_alt(0);
    raise(SIGUSR1);
    flush("nested on the alternate stack");

    set_alt(SS_AUTODISARM);
    raise(SIGUSR1);
    flush("SS_AUTODISARM");
    sigaltstack(NULL, &cur);
    say("after the handlers: flags=%s size=%zu\n", flags_name(cur.ss_flags), cur.ss_size);

    set_alt(SS_DISABLE);
    sigaltstack(NULL, &cur);
    say("disabled: flags=%s size=%zu\n", flags_name(cur.ss_flags), cur.ss_size);
    raise(SIGUSR1);
    flush("no alternate stack");
    return 0;
}
