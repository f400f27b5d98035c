/*
 * Exact signal counts: five SIGUSR2 sent to itself with kill(2) and handled
 * (each handler return is one rt_sigreturn, each delivery one asynchronous
 * signal), and three SIGSEGV faults recovered with siglongjmp (synchronous
 * signals, no rt_sigreturn).
 */
#include "tt_common.h"
#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>

static volatile int g_usr2, g_segv;
static sigjmp_buf g_env;

static void on_usr2(int sig)
{
    g_usr2++;
}

static void on_segv(int sig)
{
    g_segv++;
    siglongjmp(g_env, 1);
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    for (int i = 0; i < 5; i++)
        syscall(SYS_kill, syscall(SYS_getpid), SIGUSR2);
    for (volatile int i = 0; i < 3; i++)
        if (sigsetjmp(g_env, 1) == 0)
            *(volatile int *)(long)(argc * 8) = 1;
    say("usr2 handled %d, segv handled %d\n", g_usr2, g_segv);
    say("expect kill=5/0 getpid=5/0 rt_sigreturn=5/0 .async_signals=5 .sync_signals=3\n");
    return 0;
}
