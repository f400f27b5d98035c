/*
 * pipe_rw N [SIZE]: N rounds of write(SIZE bytes) then read(SIZE bytes)
 * through one pipe, in one thread (the pipe never fills, nothing blocks, no
 * context switch: the cost is the two system calls and the pipe's copy).
 * Prints "ns_per_call <float>" (2N calls) on stdout, the loop timed inside
 * the program with CLOCK_MONOTONIC (vDSO: no system call), so start-up and
 * exit are left out. SIZE defaults to 64 bytes.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	char buf[4096];
	long i, count, size = 64;
	int fd[2];
	double ns;

	if (argc < 2 || argc > 3 || (count = strtol(argv[1], NULL, 10)) <= 0 ||
	    (argc == 3 && ((size = strtol(argv[2], NULL, 10)) <= 0 || size > (long)sizeof(buf)))) {
		fprintf(stderr, "usage: pipe_rw N [SIZE<=4096]\n");
		return 2;
	}
	if (pipe(fd) != 0) {
		perror("pipe");
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < count; i++) {
		if (write(fd[1], buf, size) != size || read(fd[0], buf, size) != size) {
			perror("pipe_rw");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	if (printf("ns_per_call %.1f\n", ns / (2.0 * count)) < 0 || fflush(stdout) != 0)
		return 1;
	return 0;
}
