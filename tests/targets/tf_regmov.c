/*
 * Pitfall 11: sites whose instruction before `syscall` is a mov between
 * two registers, the number already in rax, as Go's Syscall6
 * (`mov %rbx,%rdi; syscall`) and musl's and glibc's `mov %r9,%rax`.
 * The rewriter turns the mov's first two bytes into a jump to the int3
 * padding after the function's `ret`; the stub runs the mov. Sites:
 *   rm3     `48 89 df` mov %rbx,%rdi (3 bytes): 4 threads x N getppid, the
 *           site rewritten while the others trap at it; exact counts, fast;
 *   rm2     `89 df` mov %ebx,%edi (2 bytes): N getppid, fast;
 *   decoy   `b9 00 48 89 df` mov $0xdf894800,%ecx: its last 3 bytes read
 *           as rm3's mov, but the registers at the trap show no such mov
 *           ran (rdi != rbx): never rewritten, its bytes unchanged;
 *   from_rcx `48 89 cf` mov %rcx,%rdi: the stub uses rcx before it runs
 *           the mov, so such a site is never rewritten; dup(fd) through it
 *           must return a copy of fd every time;
 *   prefixed `66 89 df` mov %bx,%di, rdi == rbx: its last 2 bytes read as
 *           rm2's mov and the registers agree, but the 66 prefix would
 *           belong to the jump put there (on AMD, 66 eb truncates the
 *           target): never rewritten.
 * Usage: tf_regmov [N]   (calls per thread, default 50000)
 */
#include "tf_common.h"
#include <fcntl.h>
#include <pthread.h>

#define NTHREADS 4

/* rm3(nr, a): rax = nr, rbx = a, then the site. (rbx is callee-saved.) */
long rm3(long nr, long a);
long rm2(long nr, long a);
long decoy(long nr, long a);
long from_rcx(long nr, long a);
long prefixed(long nr, long a);
__asm__(".text\n\t.p2align 5, 0xcc\n"
        ".globl rm3\n\t.type rm3,@function\nrm3:\n\t"
        "push %rbx\n\tmov %rsi,%rbx\n\tmov %rdi,%rax\n\t"
        ".byte 0x48, 0x89, 0xdf\n\t"		/* mov %rbx,%rdi */
        "syscall\n\tpop %rbx\n\tret\n\t.byte 0xcc, 0xcc, 0xcc, 0xcc, 0xcc\n\t.p2align 4, 0xcc\n\t"
        ".size rm3, .-rm3\n\t.p2align 5, 0xcc\n"
        ".globl rm2\n\t.type rm2,@function\nrm2:\n\t"
        "push %rbx\n\tmov %rsi,%rbx\n\tmov %rdi,%rax\n\t"
        ".byte 0x89, 0xdf\n\t"			/* mov %ebx,%edi */
        "syscall\n\tpop %rbx\n\tret\n\t.byte 0xcc, 0xcc, 0xcc, 0xcc, 0xcc\n\t.p2align 4, 0xcc\n\t"
        ".size rm2, .-rm2\n\t.p2align 5, 0xcc\n"
        ".globl decoy\n\t.type decoy,@function\ndecoy:\n\t"
        "push %rbx\n\tmov %rsi,%rbx\n\tmov %rdi,%rax\n\t"
        "decoy_insn: .byte 0xb9, 0x00, 0x48, 0x89, 0xdf\n\t"	/* mov $0xdf894800,%ecx */
        "syscall\n\tpop %rbx\n\tret\n\t.byte 0xcc, 0xcc, 0xcc, 0xcc, 0xcc\n\t.p2align 4, 0xcc\n\t"
        ".size decoy, .-decoy\n\t.p2align 5, 0xcc\n"
        ".globl from_rcx\n\t.type from_rcx,@function\nfrom_rcx:\n\t"
        "mov %rdi,%rax\n\tmov %rsi,%rcx\n\t"
        ".byte 0x48, 0x89, 0xcf\n\t"		/* mov %rcx,%rdi */
        "syscall\n\tret\n\t.byte 0xcc, 0xcc, 0xcc, 0xcc, 0xcc\n\t.p2align 4, 0xcc\n\t"
        ".size from_rcx, .-from_rcx\n\t.p2align 5, 0xcc\n"
        ".globl prefixed\n\t.type prefixed,@function\nprefixed:\n\t"
        "push %rbx\n\tmov %rdi,%rax\n\tmov %rsi,%rbx\n\tmov %rsi,%rdi\n\t"
        ".byte 0x66, 0x89, 0xdf\n\t"		/* mov %bx,%di */
        "syscall\n\tpop %rbx\n\tret\n\t.byte 0xcc, 0xcc, 0xcc, 0xcc, 0xcc\n\t.p2align 4, 0xcc\n\t"
        ".size prefixed, .-prefixed\n");
extern const unsigned char decoy_insn[];

static long g_calls, g_ppid;

static long body(long i)
{
    long bad = 0;
    (void)i;
    for (long n = 0; n < g_calls; n++)
        bad += rm3(SYS_getppid, 0) != g_ppid;
    return bad;
}

int main(int argc, char **argv)
{
    g_calls = argc > 1 ? atol(argv[1]) : 50000;
    g_ppid = getppid();

    /* the windows first, the checks (which write) after the last one */
    long bad3 = tf_team_run(NTHREADS, body, "rm3");
    mark("joined");	/* the team's ends, apart from rm2's calls */

    long bad2 = 0;
    for (long n = 0; n < g_calls; n++)
        bad2 += rm2(SYS_getppid, 0) != g_ppid;
    mark("rm2");

    unsigned char before[5];
    memcpy(before, decoy_insn, 5);
    long bad_decoy = 0;
    for (long n = 0; n < 1000; n++)
        bad_decoy += decoy(SYS_getppid, 7) != g_ppid;
    mark("decoy");

    int fd = open("/dev/null", O_RDONLY);
    long bad_rcx = 0;
    for (long n = 0; n < 1000; n++) {
        long copy = from_rcx(SYS_dup, fd);
        bad_rcx += copy < 0 || from_rcx(SYS_close, copy) != 0;
    }
    mark("from_rcx");

    long bad_prefixed = 0;
    for (long n = 0; n < 1000; n++)
        bad_prefixed += prefixed(SYS_getppid, 7) != g_ppid;
    mark("prefixed");

    check(bad3 == 0, "%d threads x %ld getppid through mov %%rbx,%%rdi; syscall (%ld wrong)", NTHREADS, g_calls, bad3);
    note("expect rm3 getppid=%ld", NTHREADS * g_calls);
    note("fast rm3");
    note("vary joined futex");
    check(bad2 == 0, "%ld getppid through mov %%ebx,%%edi; syscall (%ld wrong)", g_calls, bad2);
    note("expect rm2 getppid=%ld", g_calls);
    note("fast rm2");
    check(bad_decoy == 0 && !memcmp(before, decoy_insn, 5),
          "1000 getppid after mov $0xdf894800,%%ecx: right results, the instruction's bytes unchanged");
    note("expect decoy getppid=1000");
    note("nofast decoy");
    check(bad_rcx == 0, "1000 dup and close through mov %%rcx,%%rdi; syscall: every dup a copy (%ld wrong)", bad_rcx);
    note("expect from_rcx dup=1000 close=1000");
    note("nofast from_rcx");
    check(bad_prefixed == 0, "1000 getppid after mov %%bx,%%di: right results (%ld wrong)", bad_prefixed);
    note("expect prefixed getppid=1000");
    note("nofast prefixed");
    return tf_finish();
}
