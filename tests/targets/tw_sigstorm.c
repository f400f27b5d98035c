/*
 * A control-signal storm (t130), run natively: sends RATE signals a second
 * to PID for SECONDS, paced in 1 ms ticks (RATE/1000 kill() calls per tick,
 * against an absolute clock, so a slow tick is caught up). Usage:
 *   tw_sigstorm PID RATE SECONDS [SIGNAL]      (SIGNAL: default SIGUSR1)
 * Prints "sent N in MS ms"; status 1 if a kill() failed (the target died).
 */
#include "tt_common.h"
#include <signal.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc < 4) {
		say("usage: tw_sigstorm PID RATE SECONDS [SIGNAL]\n");
		return 2;
	}
	pid_t pid = (pid_t)atol(argv[1]);
	long rate = atol(argv[2]), secs = atol(argv[3]), sent = 0;
	int sig = argc > 4 ? atoi(argv[4]) : SIGUSR1;
	struct timespec t0, next;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	next = t0;
	for (long tick = 0; tick < secs * 1000; tick++) {
		long due = rate * (tick + 1) / 1000;
		while (sent < due) {
			if (kill(pid, sig) < 0) {
				say("kill failed after %ld: %s\n", sent, strerror(errno));
				return 1;
			}
			sent++;
		}
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	say("sent %ld in %ld ms\n", sent, (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	return 0;
}
