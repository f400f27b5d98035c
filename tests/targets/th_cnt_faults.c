/*
 * Faults and preemptions at every level (t630). Threads touch fresh pages
 * (minor faults) and spin (preemptions on a busy machine) while the main
 * thread closes windows through /dev/exitscope, so that the records hold
 * live threads, threads that exited between two windows and, after a burst
 * of more short threads than the runtime keeps dead slots for, threads
 * whose slots were reclaimed before a window listed them.
 *
 *   th_cnt_faults          the phases below, then exit
 *   th_cnt_faults fork     ... and a fork child runs them too
 *   th_cnt_faults exec     ... then exec itself once ("exec" becomes "again")
 *
 * Phases (window labels): "spawn" (four workers start and fault), "work"
 * (they fault more; two of them exit), "burst" (1100 threads that each
 * touch a page and exit), "end" (the last two workers exit). Prints
 * "main PID" first.
 */
#include "tt_common.h"
#include <exitscope.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define NWORKERS 4
#define BURST 1100

static volatile int g_phase;

static void touch_pages(int n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	for (int i = 0; i < n; i++)
		p[(long)i * page] = (char)i;
	munmap(p, (size_t)n * page);
}

static void spin(void)
{
	for (volatile int i = 0; i < 2000000; i++)
		;
}

static void wait_phase(int p)
{
	while (__atomic_load_n(&g_phase, __ATOMIC_ACQUIRE) < p)
		usleep(1000);
}

static void *worker(void *arg)
{
	long i = (long)arg;
	touch_pages(50 + (int)i * 10);
	spin();
	wait_phase(1);
	touch_pages(100);
	spin();
	if (i < 2)
		return NULL;	/* exits inside "work" */
	wait_phase(2);
	touch_pages(30);
	return NULL;
}

static void *short_thread(void *arg)
{
	touch_pages(1);
	return arg;
}

static void phases(void)
{
	pthread_t th[NWORKERS];
	for (long i = 0; i < NWORKERS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	usleep(20000);
	exitscope_dump("spawn");
	__atomic_store_n(&g_phase, 1, __ATOMIC_RELEASE);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	exitscope_dump("work");
	for (int i = 0; i < BURST; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_thread, NULL) == 0)
			pthread_join(t, NULL);
	}
	exitscope_dump("burst");
	__atomic_store_n(&g_phase, 2, __ATOMIC_RELEASE);
	pthread_join(th[2], NULL);
	pthread_join(th[3], NULL);
	exitscope_dump("end");
	touch_pages(20);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	say("main %d\n", (int)getpid());
	if (strcmp(mode, "fork") == 0) {
		pid_t child = fork();
		if (child == 0) {
			say("child %d\n", (int)getpid());
			phases();
			_exit(0);
		}
		phases();
		waitpid(child, NULL, 0);
		return 0;
	}
	phases();
	if (strcmp(mode, "exec") == 0) {
		execl("/proc/self/exe", argv[0], "again", (char *)NULL);
		return 1;
	}
	return 0;
}
