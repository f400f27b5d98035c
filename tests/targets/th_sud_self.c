/*
 * A program that uses Syscall User Dispatch itself (as Wine does): with
 * its selector set to block, getppid goes to its SIGSYS handler, which
 * answers 4242; with the selector set to allow, the call is real. Then it
 * switches dispatch off and marks a window through /dev/exitscope.
 */
#include "tt_common.h"
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <exitscope.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif
#define SEL_ALLOW 0
#define SEL_BLOCK 1

static volatile char g_selector = SEL_ALLOW;
static volatile int g_hits, g_nr, g_code;

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
    ucontext_t *uc = ctx;
    g_selector = SEL_ALLOW;	/* the handler's own calls, and its return, are real */
    g_hits++;
    g_nr = si->si_syscall;
    g_code = si->si_code;
    uc->uc_mcontext.gregs[REG_RAX] = 4242;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    if (sigaction(SIGSYS, &sa, NULL))
        die("sigaction");
    if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &g_selector))
        die("prctl on");
    g_selector = SEL_BLOCK;
    long emulated = syscall(SYS_getppid);
    long real = syscall(SYS_getppid);	/* the handler left the selector on allow */
    if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0))
        die("prctl off");
    g_selector = SEL_BLOCK;	/* ignored now */
    long after = syscall(SYS_getppid);
    exitscope_dump("after-dispatch-off");
    say("emulated=%ld real=%s after-off=%s hits=%d syscall=%d code=%d\n", emulated,
        real == getppid() ? "ok" : "wrong", after == getppid() ? "ok" : "wrong", g_hits, g_nr, g_code);
    return 0;
}
