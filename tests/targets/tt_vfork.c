/*
 * vfork: a child that only calls _exit, a child that execs this program
 * again (the new image prints and exits with a known status), and a child
 * whose execve fails. The parent resumes on the shared stack each time.
 */
#include "tt_common.h"
#include <sys/wait.h>

extern char **environ;

static void report(const char *what, pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid)
        say("%s: waitpid failed: %s\n", what, errname(errno));
    else if (WIFEXITED(status))
        say("%s: exited with %d\n", what, WEXITSTATUS(status));
    else
        say("%s: status %#x\n", what, status);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exec-child") == 0) {
        say("exec'd child: signals blocked at start: %d\n", blocked_count());
        say("exec'd child: running with %d args, arg 2 = %s\n", argc, argc > 2 ? argv[2] : "-");
        return 9;
    }

    volatile int touched = 0;
    pid_t pid = vfork();
    if (pid < 0)
        die("vfork");
    if (pid == 0) {
        touched = 1;
        _exit(7);
    }
    say("vfork + _exit: parent resumed, child wrote shared memory: %d\n", touched);
    report("vfork + _exit", pid);

    pid = vfork();
    if (pid == 0) {
        char *args[] = {argv[0], "exec-child", "hello", NULL};
        execve("/proc/self/exe", args, environ);
        _exit(126);
    }
    report("vfork + execve", pid);

    pid = vfork();
    if (pid == 0) {
        char *args[] = {"/nonexistent/program", NULL};
        execve(args[0], args, environ);
        _exit(errno == ENOENT ? 127 : 126);
    }
    report("vfork + failed execve", pid);

    for (volatile int i = 0; i < 50; i++) {
        pid = vfork();
        if (pid == 0)
            _exit(i & 0x7f);
        int status;
        if (waitpid(pid, &status, 0) != pid || WEXITSTATUS(status) != (i & 0x7f))
            say("vfork loop %d: bad status\n", i);
    }
    say("50 vforks in a row: done\n");
    return 0;
}
