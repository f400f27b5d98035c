/*
 * Pitfall 1: data live in the red zone. A leaf function (no frame, no
 * push) writes a pattern that changes every iteration into the 128 bytes
 * below %rsp, runs an inline `mov $110,%eax; syscall` (getppid), then
 * checks all 16 quadwords. Anything that pushes or calls below the
 * program's %rsp on the way to the kernel (a trampoline's `call`, a saved
 * register) overwrites them.
 */
#include "tf_common.h"

#define LOOPS 20000

/*
 * long redzone_loop(long n, long *ret): n iterations; returns the number of
 * quadwords found changed; *ret = the last getppid value.
 * Pattern for slot k (1..16) at -8k(%rsp) in iteration i: (k * C) ^ i.
 */
long redzone_loop(long n, long *ret);
__asm__(".text\n\t.globl redzone_loop\n\t.type redzone_loop,@function\n"
        "redzone_loop:\n\t"
        "xor %r8d, %r8d\n\t"             /* mismatches */
        "mov %rdi, %r9\n\t"              /* i: iterations left */
        "movabs $0x9e3779b97f4a7c15, %r10\n"
        "1:\n\t"
        "mov $1, %ecx\n"
        "2:\n\t"                         /* fill slot rcx */
        "mov %rcx, %rax\n\t"
        "imul %r10, %rax\n\t"
        "xor %r9, %rax\n\t"
        "mov %rcx, %rdx\n\t"
        "neg %rdx\n\t"
        "mov %rax, (%rsp,%rdx,8)\n\t"
        "inc %ecx\n\t"
        "cmp $16, %ecx\n\t"
        "jbe 2b\n\t"
        "movl $110, %eax\n\t"            /* the site: getppid */
        "syscall\n\t"
        "mov %rax, (%rsi)\n\t"
        "mov $1, %ecx\n"
        "3:\n\t"                         /* check slot rcx */
        "mov %rcx, %rax\n\t"
        "imul %r10, %rax\n\t"
        "xor %r9, %rax\n\t"
        "mov %rcx, %rdx\n\t"
        "neg %rdx\n\t"
        "cmp %rax, (%rsp,%rdx,8)\n\t"
        "je 4f\n\t"
        "inc %r8\n"
        "4:\n\t"
        "inc %ecx\n\t"
        "cmp $16, %ecx\n\t"
        "jbe 3b\n\t"
        "dec %r9\n\t"
        "jnz 1b\n\t"
        "mov %r8, %rax\n\t"
        "ret\n\t"
        ".size redzone_loop, .-redzone_loop\n");

int main(void)
{
    long ppid = getppid(), last = 0;
    mark("begin");
    long bad = redzone_loop(LOOPS, &last);
    mark("redzone");
    check(bad == 0, "red zone: %d iterations, 16 quadwords below %%rsp intact after each call (%ld changed)",
          LOOPS, bad);
    check(last == ppid, "red zone: the site's getppid returns the parent's pid");
    note("expect redzone getppid=%d", LOOPS);
    note("fast redzone");
    return tf_finish();
}
