/*
 * getppid_loop N: make N getppid system calls and print the loop's cost as
 * "ns_per_call <float>" on stdout. The loop is timed inside the program with
 * CLOCK_MONOTONIC (a vDSO call: no system call, nothing counted), so start-up
 * and exit are left out. Each call goes through syscall(2) so the compiler and
 * libc cannot cache or fold it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	long i, count;
	double ns;

	if (argc != 2 || (count = strtol(argv[1], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: getppid_loop N\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < count; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	if (printf("ns_per_call %.1f\n", ns / count) < 0 || fflush(stdout) != 0)
		return 1;
	return 0;
}
