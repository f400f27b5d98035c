/*
 * sud_floor MODE N: the floor under exitscope's per-call cost, measured with
 * the same kernel mechanism (Syscall User Dispatch) and nothing else.
 *   native  N getppid calls, no dispatch.
 *   empty   dispatch on; the SIGSYS handler only sets the return value: what
 *           the kernel's SIGSYS delivery and rt_sigreturn cost (a trapped
 *           entry, a signal frame with the FPU state saved, the sigreturn
 *           system call that restores it).
 *   pass    dispatch on; the handler makes the real call from the allowed
 *           region (one raw syscall instruction) and returns its result: the
 *           smallest possible interposer, without any counting.
 * Prints "ns_per_call <float>" (the loop timed with CLOCK_MONOTONIC, vDSO)
 * and, on stderr, the signal frame size the kernel asks for
 * (AT_MINSIGSTKSZ). Compared with exitscope's ns per call on the same loop,
 * exitscope - pass is what exitscope's handler adds; pass - native is the
 * kernel's dispatch.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "floor.h"
#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif

/* The allowed region: raw_syscall6(nr, a0..a5) and the signal restorer,
 * whose syscall instructions the kernel lets through. */
long raw_syscall6(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
extern const char raw_region_start[], raw_region_end[];
__asm__(".text\n"
	".globl raw_syscall6\n"
	".type raw_syscall6, @function\n"
	"raw_syscall6:\n"
	"raw_region_start:\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	mov %r8, %r10\n"
	"	mov %r9, %r8\n"
	"	mov 8(%rsp), %r9\n"
	"	syscall\n"
	"	ret\n"
	".size raw_syscall6, .-raw_syscall6\n"
	".globl raw_restorer\n"
	".type raw_restorer, @function\n"
	"raw_restorer:\n"
	"	mov $15, %eax\n"
	"	syscall\n"
	"	ud2\n" /* the kernel checks the address after the syscall instruction */
	"raw_region_end:\n"
	".size raw_restorer, .-raw_restorer\n");
void raw_restorer(void);

/* The kernel's struct sigaction: our own restorer, inside the region
 * (glibc's would trap: rt_sigreturn outside the region is dispatched too). */
struct kernel_sigaction {
	void (*handler)(int, siginfo_t *, void *);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};
#define KSA_RESTORER 0x04000000UL

static int pass_through;

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	(void)sig;
	if (pass_through)
		g[REG_RAX] = raw_syscall6(si->si_syscall, g[REG_RDI], g[REG_RSI], g[REG_RDX],
					  g[REG_R10], g[REG_R8], g[REG_R9]);
	else
		g[REG_RAX] = 0;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct kernel_sigaction sa;
	long i, count;
	int sud;

	if (argc != 3 || (count = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: sud_floor native|empty|pass N\n");
		return 2;
	}
	sud = strcmp(argv[1], "native") != 0;
	pass_through = strcmp(argv[1], "pass") == 0;
	if (sud && !pass_through && strcmp(argv[1], "empty") != 0) {
		fprintf(stderr, "sud_floor: unknown mode '%s'\n", argv[1]);
		return 2;
	}
	if (sud) {
		memset(&sa, 0, sizeof(sa));
		sa.handler = on_sigsys;
		sa.flags = SA_SIGINFO | SA_NODEFER | KSA_RESTORER;
		sa.restorer = raw_restorer;
		if (syscall(SYS_rt_sigaction, SIGSYS, &sa, NULL, sizeof(sa.mask)) != 0 ||
		    prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
			  (unsigned long)raw_region_start,
			  (unsigned long)(raw_region_end - raw_region_start), 0) != 0) {
			perror("sud_floor: Syscall User Dispatch");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < count; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (sud && raw_syscall6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0, 0) != 0)
		return 1;
	fprintf(stderr, "sigframe_min_bytes %lu\n", getauxval(AT_MINSIGSTKSZ));
	return print_ns_per_call(&t0, &t1, count);
}
