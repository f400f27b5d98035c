/* A small deterministic program for t950, built static three ways (gcc
 * -static, gcc -static-pie, musl-gcc -static): threads, fork + exec of
 * itself through /proc/self/exe, a signal handler, a little file I/O.
 * Its output and its system calls (names and counts) are the same on every
 * run, so that two runs, native and under exitscope, can be compared.
 *   st_prog          the whole program
 *   st_prog child N  the exec'd child: prints N and its argv[0]
 *   st_prog wait F   idles (a few calls every 20 ms) until the file F exists
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define CALLS 1000

static volatile sig_atomic_t g_got;
static int g_worked;		/* threads done with their calls */
static int g_ending[THREADS];	/* thread i let go: it is ending */
static int g_go[THREADS][2];	/* pipe: main lets thread i end */

static void on_usr2(int sig)
{
	g_got += sig;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void *worker(void *arg)
{
	long i = (long)arg, n = 0;
	char c;
	for (int k = 0; k < CALLS; k++)
		n += syscall(SYS_getppid) > 0;
	__atomic_add_fetch(&g_worked, 1, __ATOMIC_RELEASE);
	if (read(g_go[i][0], &c, 1) != 1)
		n = -1;
	__atomic_store_n(&g_ending[i], 1, __ATOMIC_RELEASE);
	return (void *)n;
}

static int idle_until(const char *path)
{
	/* getppid: calls a window can count; access: the stop file */
	long n = 0;
	while (access(path, F_OK) != 0) {
		n += syscall(SYS_getppid) > 0;
		pause_ms(20);
	}
	printf("waited: %s\n", n > 0 ? "yes" : "no");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "child") == 0) {
		/* comm: the kernel names an image after the file exec'd, here
		 * "exe" (of /proc/self/exe), whatever argv[0] says */
		char comm[32] = "";
		FILE *f = fopen("/proc/self/comm", "r");
		if (f) {
			if (!fgets(comm, sizeof comm, f))
				comm[0] = 0;
			fclose(f);
		}
		comm[strcspn(comm, "\n")] = 0;
		printf("child %s of %s, comm %s\n", argv[2], argv[0], comm);
		return 7;
	}
	if (argc == 3 && strcmp(argv[1], "wait") == 0)
		return idle_until(argv[2]);

	/* threads: a fixed number of calls each, and the same calls to end
	 * whatever the timing. The main thread lets them end one at a time and
	 * joins each once it has ended: musl takes a lock to create and to end
	 * a thread, and pthread_join waits on a futex for a thread still
	 * running, each a call or not depending on timing. It waits without a
	 * system call (spinning) for the threads' flags, and 50 ms for a thread
	 * that raised its flag to be gone. */
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pipe(g_go[i]) != 0)
			return 1;
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(long)i) != 0)
			return 1;
	while (__atomic_load_n(&g_worked, __ATOMIC_ACQUIRE) < THREADS)
		;
	pause_ms(50);
	long total = 0;
	for (int i = 0; i < THREADS; i++) {
		void *r;
		if (write(g_go[i][1], "x", 1) != 1)
			return 1;
		while (!__atomic_load_n(&g_ending[i], __ATOMIC_ACQUIRE))
			;
		pause_ms(50);
		pthread_join(t[i], &r);
		close(g_go[i][0]);
		close(g_go[i][1]);
		total += (long)r;
	}
	printf("threads: %d x %d getppid, %ld answered\n", THREADS, CALLS, total);

	/* a signal to itself, handled */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	kill(getpid(), SIGUSR2);
	printf("signal: handler saw %d\n", (int)g_got);

	/* file I/O */
	const char *name = "st_prog.tmp";
	int fd = open(name, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0)
		return 2;
	char buf[4096];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (char)('a' + i % 26);
	for (int i = 0; i < 16; i++)
		if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			return 3;
	struct stat st;
	fstat(fd, &st);
	lseek(fd, 4096 * 3 + 5, SEEK_SET);
	char got[8] = { 0 };
	read(fd, got, 5);
	close(fd);
	unlink(name);
	printf("file: %lld bytes, at 12293: %s\n", (long long)st.st_size, got);

	/* fork, and the child execs this program again through /proc/self/exe */
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 4;
	if (pid == 0) {
		char *args[] = { "st_prog-child", "child", "42", NULL };
		execv("/proc/self/exe", args);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("fork: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
