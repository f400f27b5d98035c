/*
 * What bench/sud_floor.c and bench/fp_floor.c share: Syscall User
 * Dispatch's constants where the headers lack them, and the loop's one
 * output line.
 */
#ifndef XS_BENCH_FLOOR_H
#define XS_BENCH_FLOOR_H

#include <stdio.h>
#include <time.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif

/* Print "ns_per_call <float>" for count calls between t0 and t1; 0, or 1
 * if stdout failed. */
static inline int print_ns_per_call(const struct timespec *t0, const struct timespec *t1, long count)
{
	double ns = (t1->tv_sec - t0->tv_sec) * 1e9 + (t1->tv_nsec - t0->tv_nsec);
	return printf("ns_per_call %.1f\n", ns / count) < 0 || fflush(stdout) != 0;
}

#endif
