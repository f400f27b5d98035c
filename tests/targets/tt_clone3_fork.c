/*
 * clone3 through syscall(SYS_clone3) without CLONE_VM: a fork-like child
 * with SIGCHLD as its exit signal, plus one with CLONE_CLEAR_SIGHAND and one
 * with CLONE_PARENT_SETTID. Each child writes and exits with a known status.
 */
#include "tt_common.h"
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void on_usr2(int sig)
{
}

static int run(const char *what, unsigned long long flags, int code)
{
    pid_t ptid = 0;
    struct clone_args ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = flags;
    ca.exit_signal = SIGCHLD;
    ca.parent_tid = (unsigned long)&ptid;
    long pid = syscall(SYS_clone3, &ca, sizeof ca);
    if (pid < 0)
        die("clone3");
    if (pid == 0) {
        struct sigaction sa;
        sigaction(SIGUSR2, NULL, &sa);
        say("%s child: running, SIGUSR2 handler %s\n", what,
            sa.sa_handler == SIG_DFL ? "default" : "inherited");
        for (int i = 0; i < 100; i++)
            syscall(SYS_getppid);
        _exit(code);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        die("waitpid");
    if (WIFSIGNALED(status))
        say("%s child: killed by signal %d\n", what, WTERMSIG(status));
    else
        say("%s child: exited with %d%s\n", what, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
            (flags & CLONE_PARENT_SETTID) ? (ptid == pid ? ", parent_tid set" : ", parent_tid wrong") : "");
    return 0;
}

int main(void)
{
    signal(SIGUSR2, on_usr2);
    run("clone3", 0, 21);
    run("clone3 CLONE_CLEAR_SIGHAND", CLONE_CLEAR_SIGHAND, 22);
    run("clone3 CLONE_PARENT_SETTID", CLONE_PARENT_SETTID, 23);
    return 0;
}
