/*
 * tp_rotate: how long a window boundary (with the profile's rotation) takes
 * in a process with many threads and mappings, timed from inside
 * (bench/profile.sh).
 *
 * Usage: tp_rotate DIR NTHREADS NMAPS ROUNDS
 * Creates NTHREADS threads that block in read() on a pipe, and NMAPS small
 * files DIR/map-I (4 KiB each) mapped PROT_READ|PROT_EXEC (distinct files,
 * so distinct mappings: each needs its own MMAP2 record). Burns a little CPU,
 * then times ROUNDS calls of exitscope_dump() with CLOCK_MONOTONIC, with a
 * few ms of CPU between them so each window has samples. Prints
 *   rotate_ms median M min A max B rounds N maps K threads T
 * (maps: the program's mappings in /proc/self/maps). Exits 1 when a dump
 * fails (not under exitscope).
 */
#include "tt_common.h"
#include <exitscope.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

static int g_block[2];
static volatile uint64_t g_sink;

static void *idle_main(void *arg)
{
	char c;
	(void)arg;
	while (read(g_block[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void burn_ms(long ms)
{
	struct timespec ts;
	uint64_t x = 1, end;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec + (uint64_t)ms * 1000000u;
	for (;;) {
		for (int i = 0; i < 20000; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			__asm__ volatile("" : "+r"(x));
		}
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		if ((uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec >= end)
			break;
	}
	g_sink += x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		say("usage: tp_rotate DIR NTHREADS NMAPS ROUNDS\n");
		return 2;
	}
	const char *dir = argv[1];
	int nthreads = atoi(argv[2]), nmaps = atoi(argv[3]), rounds = atoi(argv[4]);
	if (nthreads < 0 || nmaps < 0 || rounds < 1 || rounds > 1000)
		return 2;
	if (pipe(g_block) != 0)
		return 1;
	pthread_t *th = calloc((size_t)nthreads + 1, sizeof(*th));
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, idle_main, NULL) != 0) {
			say("pthread_create %d failed\n", i);
			return 1;
		}
	char page[4096];
	memset(page, 0xc3, sizeof(page));	/* ret */
	for (int i = 0; i < nmaps; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/map-%d", dir, i);
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, page, sizeof(page)) != (ssize_t)sizeof(page)) {
			say("cannot create %s: %s\n", path, strerror(errno));
			return 1;
		}
		if (mmap(NULL, sizeof(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
			say("mmap %s: %s\n", path, strerror(errno));
			return 1;
		}
		close(fd);
	}
	int maps = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	if (f) {
		int c;
		while ((c = fgetc(f)) != EOF)
			maps += c == '\n';
		fclose(f);
	}
	burn_ms(20);
	double *ms = calloc((size_t)rounds, sizeof(double));
	for (int r = 0; r < rounds; r++) {
		burn_ms(5);
		double t0 = now_ms();
		if (exitscope_dump("rot") != 0) {
			say("exitscope_dump failed (not under exitscope?)\n");
			return 1;
		}
		ms[r] = now_ms() - t0;
	}
	qsort(ms, (size_t)rounds, sizeof(double), cmp_double);
	double median = rounds % 2 ? ms[rounds / 2] : (ms[rounds / 2 - 1] + ms[rounds / 2]) / 2;
	say("rotate_ms median %.3f min %.3f max %.3f rounds %d maps %d threads %d\n", median, ms[0],
	    ms[rounds - 1], rounds, maps, nthreads + 1);
	close(g_block[1]);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
