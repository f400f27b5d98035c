/*
 * A server that starts as root, forks workers, and lets each worker drop
 * root the usual way (setgroups, setgid, setuid: glibc applies them to
 * every thread it knows) while two threads of its own are busy. After the
 * drop each worker looks at every task of its process in /proc and reports
 * any that kept uid 0, gid 0, a supplementary group or a capability, then
 * works (pipe traffic between its threads) and marks windows through
 * /dev/exitscope before and after the drop.
 * Usage: th_priv_server UID GID WORKERS ROUNDS
 */
#include "tt_common.h"
#include <dirent.h>
#include <grp.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <exitscope.h>

static int g_pipe[2];
static int g_rounds;

static void *busy(void *arg)
{
    char c = 'x';
    for (int i = 0; i < g_rounds; i++) {
        syscall(SYS_getppid);
        if (arg ? write(g_pipe[1], &c, 1) != 1 : read(g_pipe[0], &c, 1) != 1)
            die("pipe");
    }
    return NULL;
}

/* Every task of this process: any credential left from root? */
static int check_tasks(int worker)
{
    int bad = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    if (!d)
        die("opendir");
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;	/* a thread that just ended */
        while (fgets(line, sizeof line, f)) {
            unsigned a, b, c, d4;
            unsigned long long cap;
            if ((sscanf(line, "Uid: %u %u %u %u", &a, &b, &c, &d4) == 4 ||
                 sscanf(line, "Gid: %u %u %u %u", &a, &b, &c, &d4) == 4) &&
                (!a || !b || !c || !d4)) {
                say("worker %d: a task kept root: %s", worker, line);
                bad = 1;
            }
            if (!strncmp(line, "Groups:", 7) && strspn(line + 7, " \t\n") != strlen(line + 7)) {
                say("worker %d: a task kept groups: %s", worker, line);
                bad = 1;
            }
            if ((sscanf(line, "CapEff: %llx", &cap) == 1 || sscanf(line, "CapPrm: %llx", &cap) == 1) && cap) {
                say("worker %d: a task kept capabilities: %s", worker, line);
                bad = 1;
            }
        }
        fclose(f);
    }
    closedir(d);
    return bad;
}

static int worker(int n, uid_t uid, gid_t gid)
{
    pthread_t r, w;
    if (pipe(g_pipe))
        die("pipe");
    if (pthread_create(&r, NULL, busy, NULL) || pthread_create(&w, NULL, busy, (void *)1))
        die("pthread_create");
    exitscope_dump("before-drop");
    if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
        die("drop");
    exitscope_dump("after-drop");
    int bad = check_tasks(n);
    pthread_join(r, NULL);
    pthread_join(w, NULL);
    say("worker %d: uid %d, %s\n", n, (int)getuid(), bad ? "a task kept privileges" : "no task kept privileges");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 5)
        die("usage: th_priv_server UID GID WORKERS ROUNDS");
    uid_t uid = (uid_t)atoi(argv[1]);
    gid_t gid = (gid_t)atoi(argv[2]);
    int workers = atoi(argv[3]);
    g_rounds = atoi(argv[4]);
    for (int i = 0; i < workers; i++) {
        pid_t p = fork();
        if (p < 0)
            die("fork");
        if (p == 0)
            _exit(worker(i, uid, gid));
    }
    int failed = 0, st;
    for (int i = 0; i < workers; i++)
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
            failed++;
    say("server: %d of %d workers kept no privileges\n", workers - failed, workers);
    return failed ? 1 : 0;
}
