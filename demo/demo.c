/*
 * The bundled demo: a small program with a start-up phase and a busy phase,
 * the shape of a server exitscope is made for. Four worker threads copy a
 * file in 4 KiB blocks (read/write/lseek), a child process is forked to
 * compress nothing in particular, and the main thread waits. Run it with
 * `make demo`.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKERS 4
#define BLOCKS 256

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
	while (read(fd, block, sizeof(block)) > 0)
		sum += block[0];
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
	for (long i = 0; i < WORKERS; i++)
		pthread_create(&threads[i], NULL, worker, (void *)i);
	int failed = 0;
	for (int i = 0; i < WORKERS; i++) {
		void *r;
		pthread_join(threads[i], &r);
		failed |= r != NULL;
	}
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
