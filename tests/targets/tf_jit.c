/*
 * Pitfall 9: code that appears at run time.
 *  - window "jitrx": a W^X JIT page: mmap RW, write `mov $110,%eax;
 *    syscall; ret` (getppid), mprotect RX, call it LOOPS times;
 *  - window "jitre": the JIT rewrites that page (mprotect RW, write the
 *    whole stub again with getpid, mprotect RX) and calls it LOOPS times:
 *    whatever was learnt about the old code must not count getppid now;
 *  - window "jitrwx": a page mapped writable and executable at once,
 *    `mov $39,%eax; syscall; ret` (getpid), called LOOPS times. The runtime
 *    must never rewrite such a page: its bytes must still be the stub after
 *    the run, and no call there may take the fast path.
 * The runtime rewrites only code mapped from a file, so every call from
 * these pages traps (docs/DESIGN.md §4.7); the counts must be exact.
 */
#include "tf_common.h"
#include <sys/mman.h>

#define LOOPS 10000

typedef long (*stub_fn)(void);

static void put_stub(unsigned char *p, int nr)
{
    unsigned char code[8] = { 0xb8, (unsigned char)nr, 0, 0, 0, 0x0f, 0x05, 0xc3 };
    memcpy(p, code, sizeof code);
}

static long run(stub_fn f, long want)
{
    long bad = 0;
    for (int i = 0; i < LOOPS; i++)
        bad += f() != want;
    return bad;
}

int main(void)
{
    long ppid = getppid(), pid = getpid();
    unsigned char *rx = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *rwx = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (rx == MAP_FAILED || rwx == MAP_FAILED)
        die("mmap");
    put_stub(rx + 64, 110);
    if (mprotect(rx, 4096, PROT_READ | PROT_EXEC))
        die("mprotect");
    put_stub(rwx + 64, 39);
    stub_fn frx = (stub_fn)(void *)(rx + 64), frwx = (stub_fn)(void *)(rwx + 64);
    mark("begin");

    long bad = run(frx, ppid);
    mark("jitrx");
    check(bad == 0, "W^X page (RX), getppid stub: %d calls returned the parent's pid (%ld did not)", LOOPS, bad);

    if (mprotect(rx, 4096, PROT_READ | PROT_WRITE))
        die("mprotect");
    put_stub(rx + 64, 39);
    if (mprotect(rx, 4096, PROT_READ | PROT_EXEC))
        die("mprotect");
    mark("jitre-setup");
    bad = run(frx, pid);
    mark("jitre");
    check(bad == 0, "the same page rewritten with a getpid stub: %d calls returned the pid (%ld did not)", LOOPS,
          bad);

    bad = run(frwx, pid);
    mark("jitrwx");
    check(bad == 0, "RWX page, getpid stub: %d calls returned the pid (%ld did not)", LOOPS, bad);
    check(memcmp(rwx + 64, "\xb8\x27\0\0\0\x0f\x05\xc3", 8) == 0,
          "RWX page: the stub's bytes are unchanged after the run (b8 27 00 00 00 0f 05 c3)");

    note("expect jitrx getppid=%d", LOOPS);
    note("expect jitre-setup mprotect=2");
    note("expect jitre getpid=%d getppid=0", LOOPS);
    note("expect jitrwx getpid=%d getppid=0", LOOPS);
    /* anonymous code is never rewritten (a JIT may read, move or rewrite
     * its own code): every call from these pages traps */
    note("trapped jitrx getppid");
    note("trapped jitre getpid");
    note("trapped jitrwx getpid");
    return tf_finish();
}
