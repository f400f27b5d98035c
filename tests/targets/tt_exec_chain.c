/*
 * An exec chain three images deep: image 0 re-execs itself with depth 1,
 * image 1 re-execs with an empty environment (envp = {NULL}), image 2 proves
 * it ran. Image d issues 3 + 2*d getppid calls, so a profiler can check that
 * each image's window holds exactly its own calls.
 * Usage: tt_exec_chain [DEPTH]
 */
#include "tt_common.h"
#include <sys/syscall.h>

extern char **environ;

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 0;
    int calls = 3 + 2 * depth;
    for (int i = 0; i < calls; i++)
        syscall(SYS_getppid);
    say("image %d: signals blocked at start: %d\n", depth, blocked_count());
    int nenv = 0;
    for (char **e = environ; *e; e++)
        nenv++;
    if (depth == 1)
        say("image 1: argv[0] kept: %s, environment kept: %s\n",
            strcmp(argv[0], "tt-exec-1") == 0 ? "yes" : "no", getenv("TT_EXEC_MARK") ? "yes" : "no");
    if (depth == 2) {
        say("image 2: reached the end of the chain, %d environment entries, argc %d\n", nenv, argc);
        say("expect getppid=%d\n", calls);
        return 0;
    }
    char num[24];
    char name[32];
    snprintf(num, sizeof num, "%d", depth + 1);
    snprintf(name, sizeof name, "tt-exec-%d", depth + 1);
    char *args[] = {name, num, NULL};
    char *empty_env[] = {NULL};
    if (depth == 0)
        setenv("TT_EXEC_MARK", "1", 1);
    say("image %d: exec image %d%s\n", depth, depth + 1, depth == 1 ? " with an empty environment" : "");
    execve("/proc/self/exe", args, depth == 1 ? empty_env : environ);
    say("image %d: execve failed: %s\n", depth, errname(errno));
    return 1;
}
