/*
 * sigaltstack with a deliberate stack overflow: infinite recursion faults,
 * the SIGSEGV handler runs on the alternate stack and siglongjmps back; the
 * second overflow's handler leaves with _exit(3).
 */
#include "tt_common.h"
#include <setjmp.h>
#include <signal.h>

#define ALT_SIZE (64 * 1024)

static sigjmp_buf g_env;
static char *g_alt;
static volatile int g_stop;
static volatile int g_on_alt;
static volatile int g_mode;

static int recurse(int n)
{
    volatile char pad[512];
    pad[0] = (char)n;
    if (g_stop)
        return 0;
    return recurse(n + 1) + pad[0];
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    char here;
    g_on_alt = &here >= g_alt && &here < g_alt + ALT_SIZE;
    stack_t cur;
    sigaltstack(NULL, &cur);
    if (g_mode == 1) {
        say("handler: SIGSEGV code %s, on the alternate stack: %s, SS_ONSTACK reported: %s\n",
            si->si_code == SEGV_MAPERR || si->si_code == SEGV_ACCERR ? "fault" : "other",
            g_on_alt ? "yes" : "no", (cur.ss_flags & SS_ONSTACK) ? "yes" : "no");
        siglongjmp(g_env, 1);
    }
    say("handler: second overflow, on the alternate stack: %s, leaving with _exit(3)\n", g_on_alt ? "yes" : "no");
    _exit(3);
}

int main(void)
{
    g_alt = malloc(ALT_SIZE);
    stack_t ss = {.ss_sp = g_alt, .ss_size = ALT_SIZE, .ss_flags = 0};
    if (sigaltstack(&ss, NULL))
        die("sigaltstack");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);

    stack_t back;
    sigaltstack(NULL, &back);
    say("alternate stack installed: size matches %s, sp matches %s, flags %d\n",
        back.ss_size == ALT_SIZE ? "yes" : "no", back.ss_sp == g_alt ? "yes" : "no", back.ss_flags);

    g_mode = 1;
    if (sigsetjmp(g_env, 1) == 0) {
        recurse(0);
        say("recursion returned: not expected\n");
    }
    sigaltstack(NULL, &back);
    say("recovered from the overflow, altstack flags now %d\n", back.ss_flags);

    g_mode = 2;
    recurse(0);
    say("not reached\n");
    return 1;
}
