/*
 * tp_eintr: blocking calls made while threads burn CPU, for the profiler's
 * "the program's behaviour does not change" check (t410). The program
 * installs no signal handler, so no call of it may ever fail with EINTR; a
 * sampling signal that interrupts a call must stay invisible.
 *
 * Usage: tp_eintr SECONDS
 * NBUSY threads each loop for SECONDS of wall time over:
 *   burn ~1 ms of CPU; nanosleep 200 us; epoll_wait (empty set, 1 ms
 *   timeout: must return 0); read 8 bytes from its own pipe, which the
 *   thread's partner writes after a short nanosleep of its own (must
 *   return 8 with the partner's sequence number); poll (no fd, 1 ms: 0).
 * The main thread meanwhile does blocking reads of a pipe fed by a writer
 * thread every 2 ms, and nanosleeps checking the time actually slept.
 * Prints per kind "KIND calls N eintr N bad N" and a last line
 * "result OK" or "result FAILED".
 */
#include "tt_common.h"
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>

#define NBUSY 3

enum { K_NANOSLEEP, K_EPOLL, K_READ, K_POLL, K_MAIN_READ, K_MAIN_SLEEP, K_WRITE, NKINDS };
static const char *const kind_name[NKINDS] = {
	"nanosleep", "epoll_wait", "read", "poll", "main_read", "main_nanosleep", "write"
};
static atomic_long g_calls[NKINDS], g_eintr[NKINDS], g_bad[NKINDS];
static atomic_int g_stop;
static volatile uint64_t g_sink;

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void note(int kind, long r, long want)
{
	atomic_fetch_add(&g_calls[kind], 1);
	if (r < 0 && errno == EINTR)
		atomic_fetch_add(&g_eintr[kind], 1);
	else if (r != want)
		atomic_fetch_add(&g_bad[kind], 1);
}

__attribute__((noinline)) static void burn_ms(long ms)
{
	uint64_t x = 1, end = now_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)ms * 1000000u;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 20000; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			__asm__ volatile("" : "+r"(x));
		}
	g_sink += x;
}

struct busy {
	int in[2];		/* this thread reads in[0] */
	int *partner_out;	/* and writes its partner's pipe */
	int ep;
};

static void *busy_main(void *arg)
{
	struct busy *b = arg;
	uint64_t seq = 0, want = 0;
	while (!atomic_load(&g_stop)) {
		burn_ms(1);
		struct timespec ts = { 0, 200000 };
		note(K_NANOSLEEP, nanosleep(&ts, NULL), 0);
		struct epoll_event ev;
		note(K_EPOLL, epoll_wait(b->ep, &ev, 1, 1), 0);
		/* tell the partner, then wait for the partner's word */
		seq++;
		note(K_WRITE, write(*b->partner_out, &seq, sizeof(seq)), sizeof(seq));
		uint64_t got = 0;
		want++;
		long r = read(b->in[0], &got, sizeof(got));
		note(K_READ, r == (long)sizeof(got) && got != want ? -2 : r, sizeof(got));
		note(K_POLL, poll(NULL, 0, 1), 0);
	}
	/* unblock the partner's last read */
	seq++;
	if (write(*b->partner_out, &seq, sizeof(seq)) < 0)
		atomic_fetch_add(&g_bad[K_WRITE], 1);
	return NULL;
}

static int g_main_pipe[2];

static void *feeder_main(void *arg)
{
	(void)arg;
	uint64_t seq = 0;
	while (!atomic_load(&g_stop)) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
		seq++;
		note(K_WRITE, write(g_main_pipe[1], &seq, sizeof(seq)), sizeof(seq));
	}
	close(g_main_pipe[1]);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		say("usage: tp_eintr SECONDS\n");
		return 2;
	}
	double secs = atof(argv[1]);
	struct busy b[NBUSY];
	pthread_t th[NBUSY], feeder;
	for (int i = 0; i < NBUSY; i++) {
		if (pipe(b[i].in) != 0 || (b[i].ep = epoll_create1(0)) < 0) {
			say("setup failed\n");
			return 1;
		}
	}
	for (int i = 0; i < NBUSY; i++)
		b[i].partner_out = &b[(i + 1) % NBUSY].in[1];
	if (pipe(g_main_pipe) != 0)
		return 1;
	for (int i = 0; i < NBUSY; i++)
		pthread_create(&th[i], NULL, busy_main, &b[i]);
	pthread_create(&feeder, NULL, feeder_main, NULL);

	uint64_t end = now_ns(CLOCK_MONOTONIC) + (uint64_t)(secs * 1e9), want = 0;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		uint64_t got = 0;
		want++;
		long r = read(g_main_pipe[0], &got, sizeof(got));
		note(K_MAIN_READ, r == (long)sizeof(got) && got != want ? -2 : r, sizeof(got));
		struct timespec ts = { 0, 500000 };
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);
		long s = nanosleep(&ts, NULL);
		/* a nanosleep that returns early without EINTR is wrong too */
		note(K_MAIN_SLEEP, s == 0 && now_ns(CLOCK_MONOTONIC) - t0 < 500000 ? -2 : s, 0);
	}
	atomic_store(&g_stop, 1);
	for (int i = 0; i < NBUSY; i++)
		pthread_join(th[i], NULL);
	pthread_join(feeder, NULL);

	int ok = 1;
	for (int k = 0; k < NKINDS; k++) {
		say("%s calls %ld eintr %ld bad %ld\n", kind_name[k], atomic_load(&g_calls[k]),
		    atomic_load(&g_eintr[k]), atomic_load(&g_bad[k]));
		if (atomic_load(&g_eintr[k]) || atomic_load(&g_bad[k]))
			ok = 0;
	}
	say("result %s\n", ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
