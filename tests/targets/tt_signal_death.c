/*
 * Dying of an unhandled signal. Usage: tt_signal_death MODE where MODE is
 * term (raise(SIGTERM)), abort, segv (write through a null pointer), kill
 * (another thread sends SIGKILL), pending (SIGTERM sent while blocked, then
 * unblocked), or usr2 (SIGUSR2 from another process, default action); or
 * waited: run each of those as a forked child and print how it died, as a
 * parent sees it through waitpid (signal number, core dump flag).
 * Each mode issues 20 getppid calls first.
 */
#include "tt_common.h"
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void *killer(void *arg)
{
    kill(getpid(), SIGKILL);
    return NULL;
}

static int waited(void)
{
    static const char *modes[] = {"term", "abort", "segv", "kill", "pending", "usr2"};
    for (unsigned i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        pid_t pid = fork();
        if (pid < 0)
            die("fork");
        if (pid == 0) {
            int devnull = open("/dev/null", O_WRONLY);
            dup2(devnull, 1);
            execl("/proc/self/exe", "tt_signal_death", modes[i], (char *)NULL);
            _exit(126);
        }
        int status;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status))
            say("child %s: killed by signal %d, core dump flag %d\n", modes[i], WTERMSIG(status),
                WCOREDUMP(status) ? 1 : 0);
        else
            say("child %s: exited with %d\n", modes[i], WEXITSTATUS(status));
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "term";
    if (strcmp(mode, "waited") == 0)
        return waited();
    for (int i = 0; i < 20; i++)
        syscall(SYS_getppid);
    say("about to die: %s\n", mode);
    if (strcmp(mode, "term") == 0) {
        raise(SIGTERM);
    } else if (strcmp(mode, "abort") == 0) {
        abort();
    } else if (strcmp(mode, "segv") == 0) {
        *(volatile int *)(long)argc = 0; /* argc is small: an unmapped page */
    } else if (strcmp(mode, "kill") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, killer, NULL);
        pthread_join(t, NULL);
    } else if (strcmp(mode, "pending") == 0) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGTERM);
        sigprocmask(SIG_BLOCK, &s, NULL);
        kill(getpid(), SIGTERM);
        say("SIGTERM pending while blocked\n");
        sigprocmask(SIG_UNBLOCK, &s, NULL);
    } else if (strcmp(mode, "usr2") == 0) {
        pid_t parent = getpid();
        if (fork() == 0) {
            kill(parent, SIGUSR2);
            _exit(0);
        }
        for (;;)
            pause();
    }
    say("still alive (not expected)\n");
    return 0;
}
