/*
 * Pitfall 10: `mov $NR,%eax; syscall` sites that cross a page boundary,
 * laid out on purpose: in straddle_mov the 5-byte mov starts 3 bytes before
 * the end of a page (getppid); in straddle_sys the mov ends the page and the
 * 2-byte syscall crosses it (getpid). A rewrite must make both pages
 * writable, and restore both. Four threads hammer both sites from the
 * start, spinning (no system call) before and after, so the window
 * "straddle" holds exactly 4 x N of each. The program checks the layout
 * itself from the functions' addresses.
 */
#include "tf_common.h"
#include <pthread.h>
#include <stdint.h>

#define NTHREADS 4
#define LOOPS 20000

long straddle_mov(long a, long b, long c);
long straddle_sys(long a, long b, long c);
__asm__(".section .text.tf_straddle,\"ax\",@progbits\n\t"
        ".balign 4096\n"
        "tf_straddle_page:\n\t"
        ".org tf_straddle_page + 4096 - 3, 0xcc\n\t"
        ".globl straddle_mov\n\t.type straddle_mov,@function\n"
        "straddle_mov:\n\t"
        "movl $110, %eax\n\tsyscall\n\tret\n\t.size straddle_mov, .-straddle_mov\n\t"
        ".org tf_straddle_page + 2 * 4096 - 6, 0xcc\n\t"
        ".globl straddle_sys\n\t.type straddle_sys,@function\n"
        "straddle_sys:\n\t"
        "movl $39, %eax\n\tsyscall\n\tret\n\t.size straddle_sys, .-straddle_sys\n\t"
        ".balign 4096, 0xcc\n\t"
        ".text\n");

static long g_ppid, g_pid;

static long body(long i)
{
    long bad = 0;
    (void)i;
    for (int n = 0; n < LOOPS; n++) {
        bad += straddle_mov(0, 0, 0) != g_ppid;
        bad += straddle_sys(0, 0, 0) != g_pid;
    }
    return bad;
}

int main(void)
{
    uintptr_t m = (uintptr_t)straddle_mov, s = (uintptr_t)straddle_sys;
    /* The compiler assumes a function's address is aligned: hide these. */
    __asm__("" : "+r"(m), "+r"(s));
    check(m % 4096 == 4093 && s % 4096 == 4090,
          "layout: the mov of straddle_mov and the syscall of straddle_sys cross page boundaries");
    check(memcmp((void *)m, "\xb8\x6e\0\0\0\x0f\x05", 7) == 0 && memcmp((void *)s, "\xb8\x27\0\0\0\x0f\x05", 7) == 0,
          "layout: both sites are b8 imm32 0f 05");
    g_ppid = getppid();
    g_pid = getpid();
    long bad = tf_team_run(NTHREADS, body, "straddle");
    check(bad == 0, "%d threads x %d calls at each straddling site: all returned the right value (%ld did not)",
          NTHREADS, LOOPS, bad);
    /* The bytes after the run: the same instructions, or a rewrite whose
     * syscall bytes stayed (the contract: only the mov is replaced). */
    check(memcmp((void *)(m + 5), "\x0f\x05", 2) == 0 && memcmp((void *)(s + 5), "\x0f\x05", 2) == 0,
          "the syscall bytes of both sites are still in place after the run");
    note("expect straddle getppid=%d getpid=%d", NTHREADS * LOOPS, NTHREADS * LOOPS);
    note("fast straddle");
    return tf_finish();
}
