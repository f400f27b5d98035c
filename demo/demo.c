/*
 * The bundled demo: a small program with a start-up phase and a busy phase,
 * the shape of a server exitscope is made for. In the busy phase two named
 * threads work side by side: "writer" generates blocks, encodes them and
 * writes them to a file in 4 KiB blocks; "checker" writes its own file,
 * reads it back, and checksums, histograms and sorts every block (read,
 * write, lseek, and CPU in a few functions, so the profile has something to
 * show). Then a child process makes a hundred getppid calls while the main
 * thread waits. The program marks its phases itself through /dev/exitscope
 * (exitscope.h: harmless no-ops without exitscope), so each phase is a
 * window of its own. Run it with `make demo`.
 */
#define _GNU_SOURCE	/* pthread_setname_np */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <exitscope.h>

#define BLOCK 4096
#define BLOCKS 512
#define PASSES 64	/* checksum passes over each block read back */

static char g_dir[] = "/tmp/exitscope-demo.XXXXXX";

/* writer: pseudo-random bytes (xorshift), then a delta encoding of them */
static __attribute__((noinline)) void fill_block(unsigned char *p, uint64_t *state)
{
	for (size_t i = 0; i < BLOCK; i++) {
		uint64_t x = *state;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		*state = x;
		p[i] = (unsigned char)(x % 16);	/* few distinct bytes: something to encode */
	}
}

static __attribute__((noinline)) size_t encode_block(unsigned char *p)
{
	size_t runs = 1;
	for (int pass = 0; pass < 160; pass++)
		for (size_t i = BLOCK - 1; i > 0; i--) {
			p[i] = (unsigned char)(p[i] - p[i - 1]);
			runs += p[i] != p[i - 1];
		}
	return runs;
}

/* checker: FNV-1a over the block, a byte histogram, and a sort of its words */
static __attribute__((noinline)) uint64_t checksum(const unsigned char *p)
{
	uint64_t h = 1469598103934665603ull;
	for (int pass = 0; pass < PASSES; pass++)
		for (size_t i = 0; i < BLOCK; i++)
			h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static __attribute__((noinline)) unsigned histogram(const unsigned char *p)
{
	unsigned counts[256] = { 0 }, most = 0;
	for (int pass = 0; pass < 48; pass++)
		for (size_t i = 0; i < BLOCK; i++)
			counts[p[i]]++;
	for (int i = 0; i < 256; i++)
		if (counts[i] > most)
			most = counts[i];
	return most;
}

static __attribute__((noinline)) uint32_t sort_words(const unsigned char *p)
{
	uint32_t words[BLOCK / 4];
	memcpy(words, p, sizeof(words));
	uint32_t mid = 0;
	for (int pass = 0; pass < 4; pass++) {
		for (size_t i = 0; i < BLOCK / 4; i++)
			words[i] = words[i] * 2654435761u + (uint32_t)i;
		/* a shell sort: a flat frame in the profile, unlike qsort's recursion */
		for (size_t gap = BLOCK / 8; gap > 0; gap /= 2)
			for (size_t i = gap; i < BLOCK / 4; i++) {
				uint32_t w = words[i];
				size_t j = i;
				for (; j >= gap && words[j - gap] > w; j -= gap)
					words[j] = words[j - gap];
				words[j] = w;
			}
		mid += words[BLOCK / 8];
	}
	return mid;
}

static int open_file(const char *name)
{
	char path[64];
	snprintf(path, sizeof(path), "%s/%s", g_dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0)
		unlink(path);	/* gone when closed */
	return fd;
}

static void *writer(void *arg)
{
	unsigned char block[BLOCK];
	uint64_t state = 88172645463325252ull;
	size_t runs = 0;
	(void)arg;
	pthread_setname_np(pthread_self(), "writer");
	int fd = open_file("writer");
	if (fd < 0)
		return (void *)1;
	for (int i = 0; i < BLOCKS; i++) {
		fill_block(block, &state);
		runs += encode_block(block);
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			return (void *)1;
	}
	close(fd);
	return runs ? NULL : (void *)1;
}

static void *checker(void *arg)
{
	/* not on the stack: a small stack lets the profiler's 8 KiB stack copy
	 * reach the thread's first frame from sort_words */
	static unsigned char block[BLOCK];
	uint64_t h = 0;
	(void)arg;
	pthread_setname_np(pthread_self(), "checker");
	int fd = open_file("checker");
	if (fd < 0)
		return (void *)1;
	for (int i = 0; i < BLOCKS; i++) {
		memset(block, 'a' + i % 26, sizeof(block));
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			return (void *)1;
	}
	lseek(fd, 0, SEEK_SET);
	int blocks = 0;
	while (read(fd, block, sizeof(block)) == (ssize_t)sizeof(block)) {
		h ^= checksum(block);
		h += histogram(block);
		h += sort_words(block);
		blocks++;
	}
	close(fd);
	if (h == 42)	/* keep the work from being optimised away */
		blocks++;
	return blocks == BLOCKS ? NULL : (void *)1;
}

int main(void)
{
	pthread_t threads[2];
	if (!mkdtemp(g_dir)) {
		perror("mkdtemp");
		return 1;
	}
	exitscope_dump("start-up");	/* what start-up cost, on its own */
	pthread_create(&threads[0], NULL, writer, NULL);
	pthread_create(&threads[1], NULL, checker, NULL);
	int failed = 0;
	for (int i = 0; i < 2; i++) {
		void *r;
		pthread_join(threads[i], &r);
		failed |= r != NULL;
	}
	exitscope_dump("busy");		/* the two threads' phase */
	pid_t child = fork();
	if (child == 0) {
		for (int i = 0; i < 100; i++)
			getppid();
		_exit(0);
	}
	int status;
	waitpid(child, &status, 0);
	rmdir(g_dir);
	printf("demo: writer and checker each wrote %d KiB%s\n", BLOCKS * 4, failed ? " (with errors)" : "");
	return failed;
}
