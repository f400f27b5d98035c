/*
 * The service thread: it owns every window boundary on demand. It waits in
 * ppoll for
 *   - the control signal (SIGUSR1 unless --signal says otherwise): it is
 *     kept blocked in every program thread and unblocked only in this
 *     thread's ppoll, so the kernel always hands it here, whatever the
 *     program's masks. (Not a signalfd: the kernel wakes every signalfd
 *     reader of a process at every signal, and each trapped call is one.)
 *   - the control socket, the abstract unix socket "@exitscope-PID", for
 *     `exitscope dump PID [LABEL]` and `exitscope reset PID` (peers of
 *     another user are refused);
 *   - the interval timer (--interval MS);
 *   - an eventfd the program's threads poke when dead threads pile up.
 * It is a raw clone without TLS of its own, with every signal blocked and
 * without dispatch: invisible to the program, its calls are never counted.
 * It uses only the runtime's raw calls. Fork children start their own.
 *
 * If the program takes the control signal for itself (installs a handler,
 * waits for it with sigwait or signalfd), the program wins: the runtime
 * stops reading it, unblocks it in each thread as the program wanted, and
 * says so once on the log.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/resource.h>
#include <time.h>
#include <asm/prctl.h>
#include "runtime/runtime.h"

#define SERVICE_STACK_SIZE (256 * 1024)
#define REQUEST_MAX 256

int g_ctl_sig;			/* the control signal; 0: none or the program's */
volatile uint32_t g_ctl_epoch;	/* bumped when the program takes it */
static int g_sockfd = -1, g_timerfd = -1, g_eventfd = -1;
volatile int g_ctl_pending;	/* the control signal arrived */
static struct { void *self; } g_no_thread;	/* %gs of the service thread */

const char *xs_control_signal_name(void)
{
	static char name[16];
	static const char *const names[32] = {
		[SIGHUP] = "SIGHUP", [SIGINT] = "SIGINT", [SIGQUIT] = "SIGQUIT", [SIGUSR1] = "SIGUSR1",
		[SIGUSR2] = "SIGUSR2", [SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",
		[SIGCHLD] = "SIGCHLD", [SIGCONT] = "SIGCONT", [SIGTSTP] = "SIGTSTP", [SIGURG] = "SIGURG",
		[SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ", [SIGVTALRM] = "SIGVTALRM",
		[SIGPROF] = "SIGPROF", [SIGWINCH] = "SIGWINCH", [SIGIO] = "SIGIO", [SIGPWR] = "SIGPWR",
	};
	int sig = g_config.signal;
	if (sig > 0 && sig < 32 && names[sig])
		return names[sig];
	struct xs_buf b = { name, 0, sizeof(name), false, NULL };
	xs_buf_add(&b, "SIGRTMIN+");
	xs_buf_u64(&b, (uint64_t)(sig - SIGRTMIN), 0);
	xs_buf_addc(&b, 0);
	return name;
}

/* The program took the control signal for itself. */
void xs_control_give_up_signal(void)
{
	static int warned;
	if (!g_ctl_sig)
		return;
	g_ctl_sig = 0;
	__atomic_add_fetch(&g_ctl_epoch, 1, __ATOMIC_SEQ_CST);
	xs_control_poke();	/* its next wait keeps the signal blocked */
	char msg[256];
	struct xs_buf b = { msg, 0, sizeof(msg), false, NULL };
	xs_buf_add(&b, "exitscope: the program uses ");
	xs_buf_add(&b, xs_control_signal_name());
	xs_buf_add(&b, " itself, so it is the program's now; close windows with 'exitscope dump PID', "
		       "/dev/exitscope, --interval, or another --signal\n");
	xs_buf_addc(&b, 0);
	xs_warn_once(&warned, msg);
}

/* One request on the control socket: "dump [LABEL]\n" or "reset\n". */
static void serve_connection(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char req[REQUEST_MAX + 1];
	size_t n = 0;

	if (xs_sys5(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != (uid_t)xs_sys0(SYS_geteuid) && cred.uid != 0)) {
		static const char no[] = "error: permission denied: not the same user\n";
		xs_write_all(fd, no, sizeof(no) - 1);
		return;
	}
	/* read one line, giving the client a second */
	while (n < REQUEST_MAX) {
		struct pollfd p = { fd, POLLIN, 0 };
		struct timespec ts = { 1, 0 };
		if (xs_sys5(SYS_ppoll, &p, 1, &ts, NULL, 8) <= 0)
			break;
		long got = xs_sys3(SYS_read, fd, req + n, REQUEST_MAX - n);
		if (got <= 0)
			break;
		n += (size_t)got;
		if (memchr(req, '\n', n))
			break;
	}
	req[n] = 0;
	char *nl = memchr(req, '\n', n);
	if (nl)
		*nl = 0;
	struct xs_buf out = { .grow = xs_buf_mmap_grow };
	int r = xs_control_command(req, "command", &out);
	if (r == -EINVAL) {
		xs_buf_add(&out, "error: unknown command '");
		xs_buf_add(&out, req);
		xs_buf_add(&out, "' (dump [LABEL] or reset)\n");
	} else if (r < 0) {
		xs_buf_add(&out, "error: the record could not be written (kept in memory, retried at the next window)\n");
	} else {
		xs_buf_add(&out, "ok window ");
		xs_buf_u64(&out, (uint64_t)r, 0);
		xs_buf_addc(&out, '\n');
	}
	xs_write_all(fd, out.data, out.len);
	xs_buf_mmap_free(&out);
}

int xs_control_command(const char *line, const char *reason, struct xs_buf *out)
{
	const char *label = NULL;
	bool silent;
	if (!strncmp(line, "dump", 4) && (line[4] == 0 || line[4] == ' ')) {
		silent = false;
		label = line[4] ? line + 5 : NULL;
		if (label && !*label)
			label = NULL;
	} else if (!strcmp(line, "reset")) {
		silent = true;
	} else {
		return -EINVAL;
	}
	uint32_t seq = g_proc->seq;
	int r = xs_window_close(reason, label, NULL, out, silent);
	return r < 0 ? r : (int)seq;
}

static int service_main(void *arg)
{
	(void)arg;
	struct pollfd fds[4];
	int n = 0;
	int ifd[4];
	if (g_sockfd >= 0) { ifd[n] = 1; fds[n++] = (struct pollfd){ g_sockfd, POLLIN, 0 }; }
	if (g_timerfd >= 0) { ifd[n] = 2; fds[n++] = (struct pollfd){ g_timerfd, POLLIN, 0 }; }
	if (g_eventfd >= 0) { ifd[n] = 3; fds[n++] = (struct pollfd){ g_eventfd, POLLIN, 0 }; }
	for (;;) {
		/* with the profiler on, the sample rings are drained every 50 ms
		 * (ppoll writes the time left back: set it each time) */
		struct timespec drain = { 0, 50 * 1000 * 1000 };
		/* the control signal is unblocked here only, so the kernel
		 * hands it to this thread: its handler sets g_ctl_pending and
		 * ppoll returns EINTR (a storm of signals closes one window) */
		uint64_t wait_mask = g_ctl_sig ? ~XS_SIGBIT(g_ctl_sig) : ~0ULL;
		long ready = xs_sys5(SYS_ppoll, fds, n, xs_profiling() ? &drain : NULL, &wait_mask, 8);
		if (__atomic_exchange_n(&g_ctl_pending, 0, __ATOMIC_ACQ_REL) && g_ctl_sig)
			xs_window_close("signal", NULL, NULL, NULL, false);
		if (ready == 0) {
			xs_window_lock();
			xs_profile_drain();
			xs_window_unlock();
			continue;
		}
		if (ready < 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (!(fds[i].revents & POLLIN))
				continue;
			switch (ifd[i]) {
			case 1: {
				long c = xs_sys4(SYS_accept4, g_sockfd, NULL, NULL, SOCK_CLOEXEC);
				if (c >= 0) {
					serve_connection((int)c);
					xs_sys1(SYS_close, c);
				}
				break;
			}
			case 2: {
				uint64_t ticks;
				if (xs_sys3(SYS_read, g_timerfd, &ticks, 8) == 8)
					xs_window_close("interval", NULL, NULL, NULL, false);
				break;
			}
			case 3: {
				uint64_t v;
				xs_sys3(SYS_read, g_eventfd, &v, 8);
				xs_creds_follow();
				xs_reap_fated();
				xs_window_lock();
				xs_reclaim_dead();
				xs_window_unlock();
				break;
			}
			}
		}
	}
	return 0;
}

/* Ask the service thread to reclaim dead threads' slots. */
void xs_control_poke(void)
{
	uint64_t one = 1;
	if (g_eventfd >= 0)
		xs_sys3(SYS_write, g_eventfd, &one, 8);
}

static long service_clone(void *stack_top);

/* Start the service thread of this process (at start-up, in fork children). */
int xs_control_start(void)
{
	g_sockfd = g_timerfd = g_eventfd = -1;
	xs_usage_init();
	g_ctl_sig = g_ctl_epoch ? 0 : g_config.signal;	/* 0 once the program took it */
	long s = xs_sys3(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s >= 0) {
		struct sockaddr_un addr = { .sun_family = AF_UNIX };
		struct xs_buf b = { addr.sun_path + 1, 0, sizeof(addr.sun_path) - 1, false, NULL };
		xs_buf_add(&b, "exitscope-");
		xs_buf_u64(&b, (uint64_t)g_proc->pid, 0);
		socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + b.len);
		if (xs_sys3(SYS_bind, s, &addr, len) == 0 && xs_sys2(SYS_listen, s, 16) == 0) {
			g_sockfd = xs_runtime_fd_adopt(s);
		} else {
			static int warned;
			xs_sys1(SYS_close, s);
			xs_warn_once(&warned, "exitscope: cannot open the control socket; 'exitscope dump' will "
					      "not reach this process\n");
		}
	}
	if (g_config.interval_ms) {
		long t = xs_sys2(SYS_timerfd_create, CLOCK_MONOTONIC, TFD_CLOEXEC);
		struct itimerspec its;
		its.it_interval.tv_sec = (time_t)(g_config.interval_ms / 1000);
		its.it_interval.tv_nsec = (long)(g_config.interval_ms % 1000) * 1000000;
		its.it_value = its.it_interval;
		if (t >= 0 && xs_sys4(SYS_timerfd_settime, t, 0, &its, NULL) == 0)
			g_timerfd = xs_runtime_fd_adopt(t);
	}
	g_eventfd = xs_runtime_fd_adopt(xs_sys2(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK));

	/* the first window's profile, before any program code can exit */
	xs_window_lock();
	xs_profile_open_window(g_proc->seq);
	xs_window_unlock();

	long stack = xs_syscall6(SYS_mmap, 0, SERVICE_STACK_SIZE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if ((unsigned long)stack > -4096UL)
		return (int)stack;
	/* every signal blocked in the new thread: it inherits this mask */
	uint64_t all = ~0ULL, old;
	xs_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);
	long r = service_clone((char *)stack + SERVICE_STACK_SIZE);
	xs_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
	return r < 0 ? (int)r : 0;
}

/* The child half of the clone runs service_main on its own stack. */
void xs_service_entry(void);
int g_service_tid;

void xs_service_entry(void)
{
	g_service_tid = (int)xs_sys0(SYS_gettid);
	xs_sys2(SYS_arch_prctl, ARCH_SET_GS, &g_no_thread);
	/* Boundaries should not wait behind the program's busy threads: ask
	 * for the highest weight (needs CAP_SYS_NICE; otherwise it stays). */
	xs_sys3(SYS_setpriority, PRIO_PROCESS, 0, -20);
	service_main(NULL);
	for (;;)
		xs_sys1(SYS_exit, 0);
}

static long service_clone(void *stack_top)
{
	unsigned long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
			      CLONE_SYSVSEM;
	return xs_clone_service(flags, stack_top, xs_service_entry);
}
