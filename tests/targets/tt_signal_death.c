/*
 * Dying of an unhandled signal. Usage: tt_signal_death MODE where MODE is
 * term (raise(SIGTERM)), abort, segv (write through a null pointer), kill
 * (another thread sends SIGKILL), pending (SIGTERM sent while blocked, then
 * unblocked), or usr2 (SIGUSR2 from another process, default action).
 * Each mode issues 20 getppid calls first.
 */
#include "tt_common.h"
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>

static void *killer(void *arg)
{
    kill(getpid(), SIGKILL);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "term";
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
