/*
 * Hostile bytes in labels and thread names (t630). The main thread renames
 * itself to bytes that are not UTF-8, a worker names itself with a control
 * character and an overlong NUL, and windows close through /dev/exitscope
 * with labels of raw bytes: 0xff 0xfe, 0x01, 0xc0 0x80 (overlong NUL), a
 * surrogate, a sequence cut short, quotes and backslashes, and a long label
 * of three-byte characters that the runtime's label limit cuts. Prints
 * "main PID" and "marks=0" (each dump returned 0).
 */
#include "tt_common.h"
#include <exitscope.h>
#include <pthread.h>
#include <sys/prctl.h>

static volatile int g_named, g_go;

static void *worker(void *arg)
{
	prctl(PR_SET_NAME, "w\x01\xc0\x80\xff", 0, 0, 0);
	__atomic_store_n(&g_named, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&g_go, __ATOMIC_ACQUIRE))
		usleep(1000);
	return arg;
}

int main(void)
{
	static const char *const labels[] = {
		"\xff\xfe",
		"a\x01" "b",
		"\xc0\x80",
		"sur\xed\xa0\x80rogate",
		"cut\xe2\x82",
		"q\"uo\\te",
	};
	int bad = 0;
	say("main %d\n", (int)getpid());
	prctl(PR_SET_NAME, "\xff\xff main \xfe", 0, 0, 0);
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	while (!__atomic_load_n(&g_named, __ATOMIC_ACQUIRE))
		usleep(1000);
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (exitscope_dump(labels[i]) != 0)
			bad = 1;
	char euros[151];	/* 50 euro signs: 150 bytes, past the label limit */
	for (int i = 0; i < 50; i++)
		memcpy(euros + 3 * i, "\xe2\x82\xac", 3);
	euros[150] = 0;
	if (exitscope_dump(euros) != 0)
		bad = 1;
	__atomic_store_n(&g_go, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	say("marks=%d\n", bad ? -1 : 0);
	return 0;
}
