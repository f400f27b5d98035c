/*
 * Pitfall 8: a library unloaded and another loaded at the same address.
 * tf_dl_a.so and tf_dl_b.so (next to this program) have the same size and
 * layout; their tf_dl_site is `mov $NR,%eax; syscall; ret` at the same
 * offset, getppid in a, getpid in b. Load a, make its site hot, dlclose it,
 * load b: the kernel gives b the hole a left (the program checks that b's
 * base and site address are a's; if not, the pitfall was not exercised and
 * that is reported WRONG). Calls at b's site must count as getpid and
 * return the pid: a rewrite remembered from a would run getppid.
 */
#include "tf_common.h"
#include <dlfcn.h>
#include <limits.h>

#define LOOPS 10000

static void *load(const char *dir, const char *name, long (**site)(void), void **base)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        say("setup failed: dlopen %s: %s\n", name, dlerror());
        _exit(99);
    }
    *site = (long (*)(void))dlsym(h, "tf_dl_site");
    Dl_info info;
    if (!*site || !dladdr((void *)*site, &info))
        die("dlsym/dladdr");
    *base = info.dli_fbase;
    return h;
}

int main(void)
{
    char dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0)
        die("readlink /proc/self/exe");
    dir[n] = 0;
    *strrchr(dir, '/') = 0;
    long ppid = getppid(), pid = getpid();
    long (*site_a)(void), (*site_b)(void);
    void *base_a, *base_b;
    mark("begin");

    void *ha = load(dir, "tf_dl_a.so", &site_a, &base_a);
    mark("load-a");
    long bad = 0;
    for (int i = 0; i < LOOPS; i++)
        bad += site_a() != ppid;
    mark("run-a");
    check(bad == 0, "library a: %d calls at its site returned the parent's pid (%ld did not)", LOOPS, bad);

    dlclose(ha);
    void *hb = load(dir, "tf_dl_b.so", &site_b, &base_b);
    mark("swap");
    check(base_a == base_b && (void *)site_a == (void *)site_b,
          "library b is mapped at library a's old base, its site at a's old site address");
    bad = 0;
    for (int i = 0; i < LOOPS; i++)
        bad += site_b() != pid;
    mark("run-b");
    check(bad == 0, "library b: %d calls at the reused address returned the pid, not the parent's (%ld did not)",
          LOOPS, bad);
    dlclose(hb);
    note("expect run-a getppid=%d getpid=0", LOOPS);
    note("expect run-b getpid=%d getppid=0", LOOPS);
    note("fast run-a");
    note("fast run-b");
    return tf_finish();
}
