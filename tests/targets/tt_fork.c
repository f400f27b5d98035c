/*
 * fork: a child that writes and exits with a status the parent checks, a
 * child that leaves through exit() so its atexit handler runs, a fork taken
 * while another thread is busy issuing system calls, and a grandchild.
 */
#include "tt_common.h"
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static atomic_int g_stop;

static void child_atexit(void)
{
    say("child atexit handler ran\n");
}

static void *spinner(void *arg)
{
    while (!atomic_load(&g_stop))
        syscall(SYS_getppid);
    return NULL;
}

static void report(const char *what, pid_t pid)
{
    int status;
    pid_t w;
    while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (w != pid)
        say("%s: waitpid failed: %s\n", what, errname(errno));
    else if (WIFEXITED(status))
        say("%s: exited with %d\n", what, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        say("%s: killed by signal %d\n", what, WTERMSIG(status));
}

int main(void)
{
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        say("child 1: hello from the child\n");
        _exit(42);
    }
    report("child 1", pid);

    pid = fork();
    if (pid == 0) {
        atexit(child_atexit);
        say("child 2: leaving through exit()\n");
        exit(43);
    }
    report("child 2", pid);

    pthread_t t;
    if (pthread_create(&t, NULL, spinner, NULL))
        die("pthread_create");
    for (int i = 0; i < 20; i++) {
        pid = fork();
        if (pid == 0) {
            /* Only the forking thread exists in the child. */
            for (int j = 0; j < 100; j++)
                syscall(SYS_getppid);
            _exit(i);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != i)
            say("fork %d while threaded: bad status %#x\n", i, status);
    }
    atomic_store(&g_stop, 1);
    pthread_join(t, NULL);
    say("20 forks while another thread ran: done\n");

    pid = fork();
    if (pid == 0) {
        pid_t g = fork();
        if (g == 0) {
            say("grandchild: running\n");
            _exit(5);
        }
        report("grandchild", g);
        _exit(6);
    }
    report("child 3", pid);

    say("wait with no children: %s\n", waitpid(-1, NULL, WNOHANG) < 0 ? errname(errno) : "?");
    return 0;
}
