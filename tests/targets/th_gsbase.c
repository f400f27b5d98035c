/*
 * A program that owns %gs: it points its %gs base at a block of its own,
 * with WRGSBASE where the CPU lets user code use it (AT_HWCAP2 FSGSBASE)
 * and with arch_prctl(ARCH_SET_GS), and reads through %gs while it makes
 * system calls, takes signals, starts threads (which inherit the base),
 * forks and vforks. Prints what it read; natively every line says "ok".
 */
#include "tt_common.h"
#include <asm/prctl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

struct mine {
    unsigned long magic;
};
static struct mine g_a = {0x6173657267736d31UL}, g_b = {0x6173657267736d32UL};
static volatile unsigned long g_seen_in_handler;

static unsigned long through_gs(void)
{
    unsigned long v;
    __asm__ __volatile__("movq %%gs:0, %0" : "=r"(v));
    return v;
}

static void on_usr1(int sig)
{
    (void)sig;
    g_seen_in_handler = through_gs();
}

static void *thread_main(void *arg)
{
    (void)arg;
    syscall(SYS_getppid);
    return (void *)through_gs();
}

static void check(const char *what, unsigned long want)
{
    unsigned long got = through_gs();
    say("%s: %s\n", what, got == want ? "ok" : "WRONG");
}

static void round_trip(const char *how, unsigned long want)
{
    for (int i = 0; i < 100; i++)
        syscall(SYS_getppid);
    check(how, want);
    raise(SIGUSR1);
    say("%s, in a signal handler: %s\n", how, g_seen_in_handler == want ? "ok" : "WRONG");
    check(how, want);
    pthread_t th;
    void *res;
    if (pthread_create(&th, NULL, thread_main, NULL) || pthread_join(th, &res))
        die("pthread");
    say("%s, a new thread inherits it: %s\n", how, (unsigned long)res == want ? "ok" : "WRONG");
    pid_t p = fork();
    if (p == 0)
        _exit(through_gs() == want ? 0 : 1);
    int st;
    waitpid(p, &st, 0);
    say("%s, a fork child inherits it: %s\n", how, WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "WRONG");
    p = vfork();
    if (p == 0)
        _exit(through_gs() == want ? 0 : 1);
    waitpid(p, &st, 0);
    say("%s, a vfork child inherits it: %s\n", how, WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "WRONG");
    check(how, want);
}

int main(void)
{
    signal(SIGUSR1, on_usr1);
    if (syscall(SYS_arch_prctl, ARCH_SET_GS, &g_a))
        die("arch_prctl");
    unsigned long base = 0;
    syscall(SYS_arch_prctl, ARCH_GET_GS, &base);
    say("ARCH_GET_GS gives what ARCH_SET_GS set: %s\n", base == (unsigned long)&g_a ? "ok" : "WRONG");
    round_trip("arch_prctl", g_a.magic);
    if (getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE) {
        __asm__ __volatile__("wrgsbase %0" ::"r"(&g_b));
        round_trip("wrgsbase", g_b.magic);
    } else {
        say("no FSGSBASE on this CPU: WRGSBASE not tried\n");
    }
    return 0;
}
