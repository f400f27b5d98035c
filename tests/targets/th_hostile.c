/*
 * th_hostile: a program that names its own functions, threads and windows
 * to attack whoever draws its profile (t620). Its hot functions carry
 * assembler names with markup, quotes, '&', comment and CDATA ends,
 * control bytes, a C1 CSI, broken UTF-8 and U+2028; its worker threads
 * are named with markup and an ESC (prctl PR_SET_NAME); its windows are
 * closed through /dev/exitscope with hostile labels. Injected script
 * would set window.xsPwned or the document's title to PWNED.
 *
 * Usage: th_hostile MS   each of the phases burns MS ms of CPU in the main
 * thread (while two named workers burn in their own hostile functions),
 * then closes a window with the phase's label. Prints "hostile N phases".
 */
#include "tt_common.h"
#include <exitscope.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t g_sink;
static volatile int g_stop;

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Burn ms of this thread's CPU time (0: until g_stop). Inlined into each
 * hostile function, so that its samples land in that function itself and
 * show its name without depending on perf's unwinding (which now and then
 * fails and left a window with only an [unknown] leaf). */
static inline __attribute__((always_inline)) void burn(uint64_t ms)
{
	uint64_t end = cpu_ns() + ms * 1000000u;
	while (ms ? cpu_ns() < end : !g_stop)
		for (int i = 0; i < 20000; i++)
			g_sink = g_sink * 31 + (uint64_t)i;
}

/*
 * fn burns ms; its address also carries a global name given as a quoted
 * assembler name (GAS takes any byte but NUL and newline there), which
 * perf prefers to the local fn. The alias, not a direct name: GAS cannot
 * read a quoted name with \" where an instruction refers to it.
 */
#define HOSTILE(fn, name)                                                     \
	static NOINLINE __attribute__((used)) void fn(uint64_t ms) { burn(ms); g_sink++; } \
	void fn##_named(uint64_t ms) __asm__("\"" name "\"") __attribute__((alias(#fn)))

HOSTILE(h_title, "</title><script>window.xsPwned=1;document.title='PWNED'</script>");
HOSTILE(h_attr, "<img src=x onerror=\\\"window.xsPwned=2\\\"> '&amp;' \\\"q\\\"");
HOSTILE(h_comment, "<!--]]><![CDATA[x]]>-->std::vector<int>::operator<<");
HOSTILE(h_control, "esc\033[31mred\033]0;t\007\001\302\233c1");
HOSTILE(h_bytes, "bad\377\376utf8\342\200\250ls\357\277\277");
HOSTILE(h_worker1, "<svg onload=window.xsPwned=3>");
HOSTILE(h_worker2, "</text></g></svg><script>window.xsPwned=4</script>");

static void *worker(void *arg)
{
	int which = (int)(intptr_t)arg;
	/* 15 bytes at most, the kernel's limit */
	prctl(PR_SET_NAME, which == 1 ? "<i class=xsP>" : "</text>\"&'\033[1m");
	if (which == 1)
		h_worker1(0);
	else
		h_worker2(0);
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t ms = argc > 1 ? strtoull(argv[1], NULL, 10) : 100;
	static const char *const labels[] = {
		"<!--<script>",
		"</script><script>window.xsPwned=5;document.title='PWNED'</script>",
		"esc\033[2J\033]0;pwned\007 c1\302\233 bad\377",
		"u2028\342\200\250 u2029\342\200\251 \"q\" &amp; '",
		"<img src=x onerror=window.xsPwned=6>",
	};
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)(i + 1)))
			die("pthread_create");
	int n = 0;
	for (int k = 0; k < 5; k++) {
		switch (k) {
		case 0: h_title(ms); break;
		case 1: h_attr(ms); break;
		case 2: h_comment(ms); break;
		case 3: h_control(ms); break;
		default: h_bytes(ms); break;
		}
		n += exitscope_dump(labels[k]) == 0;
	}
	g_stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	say("hostile %d phases\n", n);
	return 0;
}
