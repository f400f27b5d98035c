/*
 * fp_floor MODE N: what each step of a fast path costs per call, measured
 * with the same kernel mechanism (Syscall User Dispatch) and a stand-in for
 * each step, on a getppid call site shaped like glibc's (`mov $110,%eax;
 * syscall; ret`). N calls in a loop timed with CLOCK_MONOTONIC (vDSO);
 * prints "ns_per_call <float>".
 *   raw        the site as it is, dispatch off: one raw system call.
 *   region     dispatch on (no selector), the call made from inside the
 *              allowed region: the kernel's check on every call.
 *   tramp      dispatch on; the site rewritten as the fast path does it: its
 *              5-byte `mov` replaced by a `jmp rel32` to a trampoline that sets
 *              the number, makes the call from the allowed region and jumps
 *              back past the site's (never reached) `syscall`. Nothing else.
 *   count      tramp, plus counting: the trampoline steps over the red zone,
 *              saves the argument registers and calls C code (general
 *              registers only) before the call (exits, calls per number) and
 *              after it (enters, errors), the counters in thread-local storage.
 *   count_tsc  count, plus a TSC read before and after the call, the
 *              difference added to the call's time (what a per-call time
 *              costs without converting it).
 *   libc       dispatch off, glibc's own getppid() (a rewritable site): run
 *              under `exitscope run` this is the whole fast path, with
 *              --no-fast-path the whole dispatch path.
 * The stand-ins run the C code on the program's stack below the red zone; a
 * fast path inside someone else's process must switch to a stack of its own,
 * which this does not price (a few instructions).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "floor.h"

long fp_site_raw(void), fp_in_region(void), fp_site_tramp(void), fp_site_count(void);
long fp_raw6(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
extern const char fp_region_start[], fp_region_end[];

/* The sites sit outside the allowed region: if a rewritten site's `syscall`
 * were ever reached, dispatch would trap it and, with no SIGSYS handler,
 * kill the program, and the script would stop. `.byte 0xe9; .long` forces
 * the 5-byte jmp rel32 the rewrite writes (the assembler would pick rel8). */
__asm__(".text\n"
	".globl fp_site_raw\n"
	"fp_site_raw:\n"
	"	mov $110, %eax\n"
	"	syscall\n"
	"	ret\n"
	".globl fp_site_tramp\n"
	"fp_site_tramp:\n"
	"	.byte 0xe9\n"
	"	.long fp_tramp_empty - (. + 4)\n"
	"	syscall\n"
	"fp_site_tramp_ret:\n"
	"	ret\n"
	".globl fp_site_count\n"
	"fp_site_count:\n"
	"	.byte 0xe9\n"
	"	.long fp_tramp_count - (. + 4)\n"
	"	syscall\n"
	"fp_site_count_ret:\n"
	"	ret\n"
	/* the allowed region: the trampolines and two raw calls */
	".globl fp_region_start\n"
	"fp_region_start:\n"
	".globl fp_in_region\n"
	"fp_in_region:\n"
	"	mov $110, %eax\n"
	"	syscall\n"
	"	ret\n"
	"fp_tramp_empty:\n"
	"	mov $110, %eax\n"
	"	syscall\n"
	"	jmp fp_site_tramp_ret\n"
	/* At the site rsp = 8 mod 16 (the caller's call); 128 bytes of red
	 * zone and 7 pushes leave it 0 mod 16 at each call, as the ABI wants. */
	"fp_tramp_count:\n"
	"	lea -128(%rsp), %rsp\n"
	"	push %rdi\n push %rsi\n push %rdx\n push %r10\n push %r8\n push %r9\n push %rax\n"
	"	mov $110, %edi\n"
	"	call fp_count_exit\n"
	"	pop %rax\n pop %r9\n pop %r8\n pop %r10\n pop %rdx\n pop %rsi\n pop %rdi\n"
	"	mov $110, %eax\n"
	"	syscall\n"
	"	push %rdi\n push %rsi\n push %rdx\n push %r10\n push %r8\n push %r9\n push %rax\n"
	"	mov $110, %edi\n"
	"	mov %rax, %rsi\n"
	"	call fp_count_enter\n"
	"	pop %rax\n pop %r9\n pop %r8\n pop %r10\n pop %rdx\n pop %rsi\n pop %rdi\n"
	"	lea 128(%rsp), %rsp\n"
	"	jmp fp_site_count_ret\n"
	".globl fp_raw6\n"
	"fp_raw6:\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	mov %r8, %r10\n"
	"	mov %r9, %r8\n"
	"	mov 8(%rsp), %r9\n"
	"	syscall\n"
	"	ret\n"
	".globl fp_region_end\n"
	"fp_region_end:\n");

struct fp_counters {
	unsigned long exits, enters, tsc_start;
	unsigned long calls[512], errors[512], tsc[512];
};
static __thread struct fp_counters g_ctr;
static int g_tsc;

/* Called from the trampoline between the program's instructions: no vector
 * register may change, so general registers only. */
__attribute__((used, target("general-regs-only"))) void fp_count_exit(unsigned long nr);
__attribute__((used, target("general-regs-only"))) void fp_count_enter(unsigned long nr, long ret);

void fp_count_exit(unsigned long nr)
{
	g_ctr.exits++;
	g_ctr.calls[nr & 511]++;
	if (g_tsc)
		g_ctr.tsc_start = __builtin_ia32_rdtsc();
}

void fp_count_enter(unsigned long nr, long ret)
{
	g_ctr.enters++;
	if ((unsigned long)ret > -4096UL)
		g_ctr.errors[nr & 511]++;
	if (g_tsc)
		g_ctr.tsc[nr & 511] += __builtin_ia32_rdtsc() - g_ctr.tsc_start;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "raw", "region", "tramp", "count", "count_tsc", "libc" };
	struct timespec t0, t1;
	long i, count, (*site)(void) = NULL;
	int m = -1, sud;

	for (size_t k = 0; argc == 3 && k < sizeof(modes) / sizeof(modes[0]); k++)
		if (!strcmp(argv[1], modes[k]))
			m = (int)k;
	if (m < 0 || (count = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: fp_floor raw|region|tramp|count|count_tsc|libc N\n");
		return 2;
	}
	site = m == 0 ? fp_site_raw : m == 1 ? fp_in_region : m == 2 ? fp_site_tramp : fp_site_count;
	g_tsc = m == 4;
	sud = m >= 1 && m <= 4;
	if (sud && prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, (unsigned long)fp_region_start,
			 (unsigned long)(fp_region_end - fp_region_start), 0) != 0) {
		perror("fp_floor: Syscall User Dispatch");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (m == 5) {
		for (i = 0; i < count; i++)
			getppid();
	} else {
		for (i = 0; i < count; i++)
			site();
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (sud && fp_raw6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0, 0) != 0)
		return 1;
	/* the counting modes must have counted every call, or they measured
	 * something else */
	if (m >= 3 && m <= 4 && (g_ctr.calls[110] != (unsigned long)count || g_ctr.enters != (unsigned long)count)) {
		fprintf(stderr, "fp_floor: counted %lu calls, %lu returns, expected %ld\n", g_ctr.calls[110],
			g_ctr.enters, count);
		return 1;
	}
	return print_ns_per_call(&t0, &t1, count);
}
