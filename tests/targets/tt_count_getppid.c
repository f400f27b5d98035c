/*
 * Exact counts, single thread: N getppid calls (argv[1], default 1000), no
 * getpid, then the result line written with one write(2) and exit_group.
 * The last line names every count it guarantees: NAME=CALLS[/ERRORS].
 */
#include "tt_common.h"
#include <sys/syscall.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    long ppid = 0;
    for (int i = 0; i < n; i++)
        ppid |= syscall(SYS_getppid) <= 0;
    char line[160];
    int len = snprintf(line, sizeof line, "getppid failures %ld\nexpect getppid=%d/0 getpid=0 write=1/0 exit_group=1\n",
                       ppid, n);
    return write(1, line, len) == len ? 0 : 1;
}
