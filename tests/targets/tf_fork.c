/*
 * Pitfall 7: fork and vfork from code whose sites are hot. The parent makes
 * an inline site (`mov $110,%eax; syscall`, getppid) and libc's getppid hot,
 * then forks: the child inherits the rewritten text and its trampolines
 * and calls both sites CHILD_CALLS times each; its own record must hold
 * exactly those calls. Then the same with vfork (the child runs on the
 * parent's stack and memory until _exit). The children check the values
 * (their parent is this process) and report through a status or shared
 * memory; the parent prints. The fork child's calls must take the
 * inherited fast path (t850: exits_fast > 0 in its record); the vfork
 * child's need not (it runs in its parent's memory, with its parent's
 * thread pointer, until _exit), only be counted exactly, in its own record.
 */
#include "tf_common.h"
#include <sys/wait.h>

#define HOT_CALLS 2000
#define CHILD_CALLS 300

TF_SITE(site_getppid, 110);

static long calls_at_both(long n, long want)
{
    long bad = 0;
    for (long i = 0; i < n; i++) {
        bad += site_getppid(0, 0, 0) != want;
        bad += getppid() != want;
    }
    return bad;
}

static int wait_status(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
    long ppid = getppid(), self = getpid();
    mark("begin");
    long bad = calls_at_both(HOT_CALLS, ppid);
    mark("hot");
    check(bad == 0, "parent: %d calls at each site before fork returned the parent's pid", HOT_CALLS);

    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0)
        _exit(calls_at_both(CHILD_CALLS, self) == 0 ? 0 : 1);
    note("child fork %d", (int)pid);
    check(wait_status(pid) == 0, "fork child: %d calls at each inherited hot site returned its parent's pid",
          CHILD_CALLS);
    bad = calls_at_both(HOT_CALLS, ppid);
    check(bad == 0, "parent after fork: the sites still return the parent's pid");
    mark("fork");

    static volatile long vbad = -1;
    pid = vfork();
    if (pid < 0)
        die("vfork");
    if (pid == 0) {
        vbad = calls_at_both(CHILD_CALLS, self);
        _exit(0);
    }
    note("child vfork %d", (int)pid);
    check(wait_status(pid) == 0 && vbad == 0,
          "vfork child: %d calls at each hot site returned its parent's pid (status and shared memory)",
          CHILD_CALLS);
    bad = calls_at_both(HOT_CALLS, ppid);
    check(bad == 0, "parent after vfork: the sites still return the parent's pid");
    mark("vfork");

    note("expect hot getppid=%d", 2 * HOT_CALLS);
    note("expect fork getppid=%d clone=1 wait4=1", 2 * HOT_CALLS);
    note("expect vfork getppid=%d vfork=1 wait4=1", 2 * HOT_CALLS);
    note("expect child:fork getppid=%d exit_group=1", 2 * CHILD_CALLS);
    note("expect child:vfork getppid=%d exit_group=1", 2 * CHILD_CALLS);
    note("fast hot");
    note("fast fork");
    note("fast vfork");
    note("fast child:fork");
    return tf_finish();
}
