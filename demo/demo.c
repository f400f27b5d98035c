/*
 * The bundled demo: a small program with a start-up phase and a busy phase,
 * the shape of a server exitscope is made for. Four worker threads write a
 * file in 4 KiB blocks, then read it back and checksum every block a few
 * times over (read/write/lseek and some CPU, for the profiler); a child
 * process makes a hundred getppid calls; the main thread waits. The
 * program marks its phases itself through /dev/exitscope (exitscope.h:
 * harmless no-ops without exitscope), so each phase is a window of its own.
 * Run it with `make demo`.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <exitscope.h>

#define WORKERS 4
#define BLOCKS 256
#define PASSES 120	/* checksum passes over each block read back */

/* A checksum that costs some CPU, so the profile has something to show. */
static __attribute__((noinline)) unsigned long checksum(const unsigned char *p, size_t n)
{
	unsigned long h = 1469598103934665603ul;
	for (int pass = 0; pass < PASSES; pass++)
		for (size_t i = 0; i < n; i++)
			h = (h ^ p[i]) * 1099511628211ul;
	return h;
}

static char g_dir[] = "/tmp/exitscope-demo.XXXXXX";

static void *worker(void *arg)
{
	long id = (long)arg;
	char path[64], block[4096];
	snprintf(path, sizeof(path), "%s/worker-%ld", g_dir, id);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return (void *)1;
	memset(block, (int)('a' + id), sizeof(block));
	for (int i = 0; i < BLOCKS; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			return (void *)1;
	lseek(fd, 0, SEEK_SET);
	long sum = 0;
	unsigned long h = 0;
	while (read(fd, block, sizeof(block)) > 0) {
		sum += block[0];
		h ^= checksum((const unsigned char *)block, sizeof(block));
	}
	if (h == 42)	/* keep the checksums from being optimised away */
		sum++;
	close(fd);
	unlink(path);
	return sum == BLOCKS * ('a' + id) ? NULL : (void *)1;
}

int main(void)
{
	pthread_t threads[WORKERS];
	if (!mkdtemp(g_dir)) {
		perror("mkdtemp");
		return 1;
	}
	exitscope_dump("start-up");	/* what start-up cost, on its own */
	for (long i = 0; i < WORKERS; i++)
		pthread_create(&threads[i], NULL, worker, (void *)i);
	int failed = 0;
	for (int i = 0; i < WORKERS; i++) {
		void *r;
		pthread_join(threads[i], &r);
		failed |= r != NULL;
	}
	exitscope_dump("busy");		/* the workers' phase */
	pid_t child = fork();
	if (child == 0) {
		for (int i = 0; i < 100; i++)
			getppid();
		_exit(0);
	}
	int status;
	waitpid(child, &status, 0);
	rmdir(g_dir);
	printf("demo: %d workers copied %d KiB each%s\n", WORKERS, BLOCKS * 4, failed ? " (with errors)" : "");
	return failed;
}
