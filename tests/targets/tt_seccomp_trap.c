/*
 * The program installs its own seccomp filter (no_new_privs + SECCOMP_SET_MODE_
 * FILTER): getpriority traps with SECCOMP_RET_TRAP (data 42), getpgid fails
 * with SECCOMP_RET_ERRNO(EACCES), everything else is allowed. The SIGSYS
 * handler prints what the kernel reported and emulates getpriority by
 * setting RAX in the ucontext; the program prints the emulated values.
 */
#include "tt_common.h"
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <ucontext.h>

static volatile int g_traps;
static long g_emulated = 1000;

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    g_traps++;
    say("SIGSYS: code %s, syscall %s, arch x86_64: %s, data %d, arg0 %lld\n",
        si->si_code == 1 /* SYS_SECCOMP */ ? "SYS_SECCOMP" : "other",
        si->si_syscall == SYS_getpriority ? "getpriority" : "other", si->si_arch == AUDIT_ARCH_X86_64 ? "yes" : "no",
        si->si_errno, (long long)uc->uc_mcontext.gregs[REG_RDI]);
    uc->uc_mcontext.gregs[REG_RAX] = g_emulated++;
}

int main(void)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpriority, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | 42),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpgid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof filter / sizeof filter[0], .filter = filter};

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &sa, NULL);

    errno = 0;
    long before = syscall(SYS_getpriority, PRIO_PROCESS, 0);
    say("getpriority before the filter: ok %s\n", before >= 1 && before <= 40 ? "yes" : "no");

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        die("PR_SET_NO_NEW_PRIVS");
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
        die("seccomp");
    say("filter installed, no_new_privs %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));

    for (int i = 0; i < 3; i++) {
        long v = syscall(SYS_getpriority, PRIO_PROCESS, i);
        say("getpriority call %d returned %ld\n", i, v);
    }
    errno = 0;
    long g = syscall(SYS_getpgid, 0);
    say("getpgid returned %ld %s\n", g, errname(errno));
    struct utsname u;
    say("uname still allowed: %s\n", uname(&u) == 0 && strcmp(u.sysname, "Linux") == 0 ? "yes" : "no");
    say("SIGSYS handler ran %d times\n", g_traps);
    return 0;
}
