/*
 * Exact counts of reads and writes on a pipe, with known error counts:
 * reads and writes on negative fds (EBADF), lseek and pwrite64 on a pipe
 * (ESPIPE), close(-1) (EBADF). The result goes out with one write(2).
 */
#include "tt_common.h"
#include <sys/syscall.h>

#define ROUNDS 100

int main(void)
{
    int p[2];
    char buf[16];
    int bad = 0;
    if (pipe2(p, 0))
        return 2;
    for (int i = 0; i < ROUNDS; i++) {
        bad += write(p[1], "12345678", 8) != 8;
        bad += read(p[0], buf, 8) != 8;
    }
    for (int i = 0; i < 7; i++)
        bad += !(read(-1 - i, buf, 1) < 0 && errno == EBADF);
    for (int i = 0; i < 3; i++)
        bad += !(write(-1 - i, buf, 1) < 0 && errno == EBADF);
    for (int i = 0; i < 2; i++)
        bad += !(lseek(p[0], 0, SEEK_SET) < 0 && errno == ESPIPE);
    for (int i = 0; i < 4; i++)
        bad += !(pwrite(p[1], buf, 1, 0) < 0 && errno == ESPIPE);
    bad += !(close(-1) < 0 && errno == EBADF);
    bad += !(close(-1) < 0 && errno == EBADF);
    close(p[0]);
    close(p[1]);
    char line[200];
    int len = snprintf(line, sizeof line,
                       "unexpected results %d\nexpect read=%d/7 write=%d/3 lseek=2/2 pwrite64=4/4 close=4/2 pipe2=1/0 "
                       "exit_group=1\n",
                       bad, ROUNDS + 7, ROUNDS + 3 + 1);
    return write(1, line, len) == len ? 0 : 1;
}
