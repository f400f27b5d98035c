/*
 * posix_spawn (plain, and with file actions redirecting the child's stdout
 * into a pipe the parent reads) and system().
 */
#include "tt_common.h"
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

static int wait_status(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "spawned") == 0) {
        say("spawned child: signals blocked at start: %d\n", blocked_count());
        say("spawned child: args ok = %s\n", argc == 3 && strcmp(argv[2], "x y") == 0 ? "yes" : "no");
        return 11;
    }

    pid_t pid;
    char *args[] = {argv[0], "spawned", "x y", NULL};
    int e = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ);
    if (e)
        die("posix_spawn");
    int st = wait_status(pid);
    say("posix_spawn: child exited with %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -st);

    int p[2];
    if (pipe(p))
        die("pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    e = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ);
    if (e)
        die("posix_spawn with file actions");
    close(p[1]);
    char buf[256];
    size_t len = 0;
    ssize_t n;
    while (len < sizeof buf - 1 && (n = read(p[0], buf + len, sizeof buf - 1 - len)) > 0)
        len += n;
    buf[len] = 0;
    st = wait_status(pid);
    say("posix_spawn into a pipe: read \"%.*s\", child exited with %d\n", (int)(len ? len - 1 : 0), buf,
        WIFEXITED(st) ? WEXITSTATUS(st) : -st);
    posix_spawn_file_actions_destroy(&fa);

    st = system("echo system: shell ran; exit 3");
    say("system: exited with %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -st);
    st = system("kill -TERM $$");
    say("system: shell killed by signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
    return 0;
}
