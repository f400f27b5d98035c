/*
 * seccomp's strict mode. Usage: th_seccomp_strict kill|exit|thread
 *   kill    the only thread enters strict mode, writes a line, then makes a
 *           disallowed call: the kernel kills it (the process: SIGKILL);
 *   exit    the same, but it leaves with exit(3), which strict mode allows
 *           (the process: status 3);
 *   thread  a second thread enters strict mode and is killed; the main
 *           thread carries on and exits 0.
 */
#include "tt_common.h"
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static void strict_then(int how)
{
    static const char line[] = "in strict mode\n";
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL))
        die("seccomp");
    syscall(SYS_write, 1, line, sizeof line - 1);
    if (how == 'e')
        syscall(SYS_exit, 3);
    syscall(SYS_getpid);	/* not allowed: SIGKILL */
    syscall(SYS_write, 1, "still alive\n", 12);
}

static void *worker(void *arg)
{
    (void)arg;
    strict_then('k');
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "kill";
    if (!strcmp(mode, "thread")) {
        pthread_t th;
        if (pthread_create(&th, NULL, worker, NULL))
            die("pthread_create");
        sleep(1);	/* the worker is gone by then; pthread_join would wait forever */
        say("main thread carries on\n");
        return 0;
    }
    prctl(PR_SET_NAME, "strict-main");
    strict_then(mode[0]);
    return 0;
}
