/*
 * Pitfall 2: registers live across an inline `mov $39,%eax; syscall`
 * (getpid). The kernel preserves every register but rax, rcx and r11, so a
 * program may keep anything there: the general registers, xmm0-15, the
 * upper halves of ymm and zmm, zmm16-31 and the mask registers k0-7 (this
 * libc itself uses ymm16-31). The loop loads a pattern into all of them,
 * calls the site many times, stores them and compares.
 * Without AVX-512 (cpuid, XCR0) only the general and xmm registers are
 * checked and a "skipped: no AVX-512" line says so (t850 counts it as a
 * failure on a machine that should have it).
 */
#include "tf_common.h"
#include <cpuid.h>
#include <stdint.h>

#define LOOPS 20000

struct regs {
    uint8_t z[32][64];	/* offset 0 */
    uint64_t k[8];	/* offset 2048 */
    uint64_t g[12];	/* offset 2112: rbx rbp rdx rsi rdi r8 r9 r10 r12 r13 r14 r15 */
} __attribute__((aligned(64)));

#define GPR_LOAD                                                                              \
    "mov 2112(%rsi), %rbx\n\tmov 2120(%rsi), %rbp\n\tmov 2128(%rsi), %rdx\n\t"                \
    "mov 2144(%rsi), %rdi\n\tmov 2152(%rsi), %r8\n\tmov 2160(%rsi), %r9\n\t"                  \
    "mov 2168(%rsi), %r10\n\tmov 2176(%rsi), %r12\n\tmov 2184(%rsi), %r13\n\t"                \
    "mov 2192(%rsi), %r14\n\tmov 2200(%rsi), %r15\n\tmov 2136(%rsi), %rsi\n\t"
#define GPR_STORE                                                                             \
    "mov 16(%rsp), %rax\n\t"                                                                  \
    "mov %rbx, 2112(%rax)\n\tmov %rbp, 2120(%rax)\n\tmov %rdx, 2128(%rax)\n\t"                \
    "mov %rsi, 2136(%rax)\n\tmov %rdi, 2144(%rax)\n\tmov %r8, 2152(%rax)\n\t"                 \
    "mov %r9, 2160(%rax)\n\tmov %r10, 2168(%rax)\n\tmov %r12, 2176(%rax)\n\t"                 \
    "mov %r13, 2184(%rax)\n\tmov %r14, 2192(%rax)\n\tmov %r15, 2200(%rax)\n\t"
#define PROLOGUE                                                                              \
    "push %rbx\n\tpush %rbp\n\tpush %r12\n\tpush %r13\n\tpush %r14\n\tpush %r15\n\t"          \
    "sub $32, %rsp\n\tmov %rdi, 0(%rsp)\n\tmov %rsi, 8(%rsp)\n\tmov %rdx, 16(%rsp)\n\t"
#define LOOP                                                                                  \
    "1:\n\tmovl $39, %eax\n\tsyscall\n\tdecq 0(%rsp)\n\tjnz 1b\n\t"
#define EPILOGUE                                                                              \
    "add $32, %rsp\n\tpop %r15\n\tpop %r14\n\tpop %r13\n\tpop %r12\n\tpop %rbp\n\tpop %rbx\n\t"

/* void regs_loop_avx512(long n, const struct regs *in, struct regs *out) */
void regs_loop_avx512(long n, const struct regs *in, struct regs *out);
__asm__(".text\n\t.globl regs_loop_avx512\n\t.type regs_loop_avx512,@function\n"
        "regs_loop_avx512:\n\t" PROLOGUE
        ".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n\t"
        "vmovdqu64 \\i*64(%rsi), %zmm\\i\n\t.endr\n\t"
        ".irp i,0,1,2,3,4,5,6,7\n\tkmovq 2048+\\i*8(%rsi), %k\\i\n\t.endr\n\t"
        GPR_LOAD LOOP GPR_STORE
        ".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n\t"
        "vmovdqu64 %zmm\\i, \\i*64(%rax)\n\t.endr\n\t"
        ".irp i,0,1,2,3,4,5,6,7\n\tkmovq %k\\i, 2048+\\i*8(%rax)\n\t.endr\n\t"
        "vzeroupper\n\t" EPILOGUE "ret\n\t.size regs_loop_avx512, .-regs_loop_avx512\n");

/* The same with xmm0-15 only (SSE2, every x86-64). */
void regs_loop_sse(long n, const struct regs *in, struct regs *out);
__asm__(".text\n\t.globl regs_loop_sse\n\t.type regs_loop_sse,@function\n"
        "regs_loop_sse:\n\t" PROLOGUE
        ".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\tmovdqu \\i*64(%rsi), %xmm\\i\n\t.endr\n\t"
        GPR_LOAD LOOP GPR_STORE
        ".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\tmovdqu %xmm\\i, \\i*64(%rax)\n\t.endr\n\t"
        EPILOGUE "ret\n\t.size regs_loop_sse, .-regs_loop_sse\n");

static int have_avx512(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_AVX512F) || !(b & bit_AVX512BW))
        return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 0xe6) == 0xe6;	/* SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM enabled by the OS */
}

/* Changed bytes of registers first..last in bytes from..to of each. */
static int diff_z(const struct regs *a, const struct regs *b, int first, int last, int from, int to)
{
    int n = 0;
    for (int r = first; r <= last; r++)
        n += memcmp(a->z[r] + from, b->z[r] + from, to - from) != 0;
    return n;
}

int main(void)
{
    static struct regs in, out;
    for (int r = 0; r < 32; r++)
        for (int j = 0; j < 64; j++)
            in.z[r][j] = (uint8_t)((r * 64 + j) * 37 + 11) ^ 0x5a;
    for (int i = 0; i < 8; i++)
        in.k[i] = 0x0f1e2d3c4b5a6978ULL * (i + 1) ^ (0x8000000000000001ULL >> i);
    for (int i = 0; i < 12; i++)
        in.g[i] = 0x1111111111111111ULL * (i + 1) ^ 0xa5a5a5a5a5a5a5a5ULL;

    int avx512 = have_avx512();
    mark("begin");
    if (avx512)
        regs_loop_avx512(LOOPS, &in, &out);
    else
        regs_loop_sse(LOOPS, &in, &out);
    mark("regs");

    int g = 0;
    for (int i = 0; i < 12; i++)
        g += in.g[i] != out.g[i];
    check(g == 0, "general registers (all but rax, rcx, r11) preserved across %d calls (%d changed)", LOOPS, g);
    int x = diff_z(&in, &out, 0, 15, 0, 16);
    check(x == 0, "xmm0-15 preserved (%d changed)", x);
    if (avx512) {
        int y = diff_z(&in, &out, 0, 15, 16, 32);
        check(y == 0, "upper halves of ymm0-15 preserved (%d changed)", y);
        int z = diff_z(&in, &out, 0, 15, 32, 64);
        check(z == 0, "upper halves of zmm0-15 preserved (%d changed)", z);
        int h = diff_z(&in, &out, 16, 31, 0, 64);
        check(h == 0, "zmm16-31 preserved (%d changed)", h);
        int k = 0;
        for (int i = 0; i < 8; i++)
            k += in.k[i] != out.k[i];
        check(k == 0, "k0-7 preserved (%d changed)", k);
    } else {
        say("skipped: no AVX-512 (cpuid/XCR0): ymm, zmm and k0-7 not checked\n");
    }
    note("expect regs getpid=%d", LOOPS);
    note("fast regs");
    return tf_finish();
}
