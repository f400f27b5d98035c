/*
 * System calls issued by this program's own `syscall` instructions (inline
 * asm, no libc): getppid, getpid, write (good and bad fd), an unknown number,
 * and a six-argument call, compared with what libc reports.
 */
#include "tt_common.h"
#include <sys/mman.h>
#include <sys/syscall.h>

#define LOOPS 100

static long raw_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

int main(void)
{
    long ppid = raw_syscall3(SYS_getppid, 0, 0, 0);
    say("asm getppid matches libc: %s\n", ppid == getppid() ? "yes" : "no");
    say("asm getpid matches libc: %s\n", raw_syscall3(SYS_getpid, 0, 0, 0) == getpid() ? "yes" : "no");

    int same = 0;
    for (int i = 0; i < LOOPS; i++)
        same += raw_syscall3(SYS_getppid, 0, 0, 0) == ppid;
    say("%d of %d asm getppid calls agree\n", same, LOOPS);

    static const char msg[] = "hello from an asm write\n";
    long w = raw_syscall3(SYS_write, 1, (long)msg, sizeof msg - 1);
    say("asm write returned %ld\n", w);
    say("asm write to fd -1 returned %ld\n", raw_syscall3(SYS_write, -1, (long)msg, 1));
    say("asm syscall 1000 returned %ld\n", raw_syscall3(1000, 0, 0, 0));

    long p = raw_syscall6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int ok = p > 0 && (p & 4095) == 0;
    if (ok) {
        *(volatile int *)p = 7;
        ok = raw_syscall3(SYS_munmap, p, 4096, 0) == 0;
    }
    say("asm six-argument mmap and munmap: %s\n", ok ? "ok" : "failed");

    /* Registers other than rax, rcx and r11 survive the instruction. */
    long rdi_after, rsi_after, rdx_after;
    __asm__ volatile("mov $0x1111, %%rdi\n\t"
                     "mov $0x2222, %%rsi\n\t"
                     "mov $0x3333, %%rdx\n\t"
                     "mov %[nr], %%eax\n\t"
                     "syscall\n\t"
                     "mov %%rdi, %[a]\n\t"
                     "mov %%rsi, %[b]\n\t"
                     "mov %%rdx, %[c]\n\t"
                     : [a] "=r"(rdi_after), [b] "=r"(rsi_after), [c] "=r"(rdx_after)
                     : [nr] "i"(SYS_getppid)
                     : "rax", "rdi", "rsi", "rdx", "rcx", "r11", "memory");
    say("argument registers preserved: %s\n",
        rdi_after == 0x1111 && rsi_after == 0x2222 && rdx_after == 0x3333 ? "yes" : "no");
    say("expect getppid=%d\n", LOOPS + 3);
    return 0;
}
