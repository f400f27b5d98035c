/*
 * Exact counts across fork: the parent issues 10 getppid calls, forks, and
 * issues 5 more; the child issues 25 and leaves with _exit(0). Usage:
 *   tt_count_fork OUTFILE     OUTFILE gets "PARENT_PID CHILD_PID"
 */
#include "tt_common.h"
#include <sys/syscall.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        say("usage: tt_count_fork OUTFILE\n");
        return 2;
    }
    for (int i = 0; i < 10; i++)
        syscall(SYS_getppid);
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        for (int i = 0; i < 25; i++)
            syscall(SYS_getppid);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    for (int i = 0; i < 5; i++)
        syscall(SYS_getppid);
    FILE *f = fopen(argv[1], "w");
    if (!f)
        die("fopen");
    fprintf(f, "%d %d\n", getpid(), pid);
    fclose(f);
    say("child exited with %d\nexpect getppid=15/0 wait4=1/0\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
