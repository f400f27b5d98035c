/*
 * threads_rss T: start T threads that each make a few system calls and then
 * wait, all alive at once, at a barrier; then join them. Run under GNU time
 * (%M) natively and under exitscope with T = 1 and T = a larger number: the
 * difference of the differences, divided by the extra threads, is what
 * exitscope costs per thread in resident memory; at T = 1, per process.
 * Prints "threads T" on stdout.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_barrier_t all_up;

static void *worker(void *arg)
{
	int i;
	(void)arg;
	for (i = 0; i < 100; i++)
		syscall(SYS_getppid);
	pthread_barrier_wait(&all_up);
	return NULL;
}

int main(int argc, char **argv)
{
	long i, n;
	pthread_t *tids;
	pthread_attr_t attr;

	if (argc != 2 || (n = strtol(argv[1], NULL, 10)) <= 0 || n > 4096) {
		fprintf(stderr, "usage: threads_rss T (1..4096)\n");
		return 2;
	}
	tids = calloc(n, sizeof(*tids));
	if (!tids || pthread_barrier_init(&all_up, NULL, n) != 0 || pthread_attr_init(&attr) != 0)
		return 1;
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 1; i < n; i++)
		if (pthread_create(&tids[i], &attr, worker, NULL) != 0) {
			fprintf(stderr, "threads_rss: pthread_create failed\n");
			return 1;
		}
	worker(NULL);
	for (i = 1; i < n; i++)
		pthread_join(tids[i], NULL);
	printf("threads %ld\n", n);
	return fflush(stdout) != 0;
}
