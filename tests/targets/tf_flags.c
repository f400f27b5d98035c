/*
 * Pitfall 3: RFLAGS across an inline `mov $110,%eax; syscall` (getppid).
 * `syscall` saves RFLAGS in r11 and `sysret` puts them back, so the
 * arithmetic flags and the direction flag that a program sets before the
 * instruction are still set after it (only RF and TF have special rules).
 * Each iteration sets a known value with popf, calls, reads it back with
 * pushf and compares the bits CF PF AF ZF SF DF OF. The direction flag is
 * set (std) during the call in two of the three patterns: a fast path that
 * runs string instructions or libc code with DF=1 copies backwards.
 */
#include "tf_common.h"

#define LOOPS 10000
#define WATCHED 0xcd5UL	/* CF PF AF ZF SF DF OF */

/* long flags_loop(long n, unsigned long set): iterations whose flags
 * (WATCHED bits) differ after the call from those set before it. */
long flags_loop(long n, unsigned long set);
__asm__(".text\n\t.globl flags_loop\n\t.type flags_loop,@function\n"
        "flags_loop:\n\t"
        "xor %r8d, %r8d\n\t"                 /* mismatches */
        "pushf\n\tpop %r9\n\t"
        "and $~0xcd5, %r9\n\t"
        "or %rsi, %r9\n"                     /* r9: the flags to set */
        "1:\n\t"
        "push %r9\n\tpopf\n\t"
        "movl $110, %eax\n\t"                /* the site (mov leaves the flags alone) */
        "syscall\n\t"
        "pushf\n\tpop %rdx\n\t"
        "cld\n\t"
        "xor %r9, %rdx\n\t"
        "and $0xcd5, %rdx\n\t"
        "jz 2f\n\t"
        "inc %r8\n"
        "2:\n\t"
        "dec %rdi\n\t"
        "jnz 1b\n\t"
        "mov %r8, %rax\n\t"
        "ret\n\t.size flags_loop, .-flags_loop\n");

int main(void)
{
    static const struct { unsigned long set; const char *what; } pat[] = {
        { 0xcd5, "all arithmetic flags and DF set" },
        { 0x400, "DF set, arithmetic flags clear" },
        { 0x8c1 & ~0x400UL, "CF ZF SF OF set, DF clear" },
    };
    long bad[3];
    mark("begin");
    for (int i = 0; i < 3; i++)
        bad[i] = flags_loop(LOOPS, pat[i].set);
    mark("flags");
    for (int i = 0; i < 3; i++)
        check(bad[i] == 0, "flags %#lx (%s) kept across %d calls (%ld iterations differed)", pat[i].set,
              pat[i].what, LOOPS, bad[i]);
    note("expect flags getppid=%d", 3 * LOOPS);
    note("fast flags");
    return tf_finish();
}
