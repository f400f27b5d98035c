/*
 * The service thread: it owns every window boundary on demand. It waits in
 * ppoll for
 *   - the control signal (SIGUSR1 unless --signal says otherwise): it is
 *     kept blocked in every program thread and unblocked only in this
 *     thread's ppoll, so the kernel always hands it here, whatever the
 *     program's masks. (Not a signalfd: the kernel wakes every signalfd
 *     reader of a process at every signal, and each trapped call is one.)
 *   - the control socket, for `exitscope dump PID [LABEL]`,
 *     `exitscope dump --json PID [LABEL]` and `exitscope reset PID`, and
 *     the connections it accepted (see below);
 *   - the interval timer (--interval MS);
 *   - an eventfd the program's threads poke: credentials to follow
 *     (creds.c), a thread ending in seccomp's strict mode (tasks.c), dead
 *     threads piling up.
 * It is a raw clone without TLS of its own, with every signal blocked and
 * without dispatch: invisible to the program, its calls are never counted.
 * It uses only the runtime's raw calls. Fork children start their own.
 *
 * If the program takes the control signal for itself (installs a handler,
 * waits for it with sigwait or signalfd), the program wins: the runtime
 * stops reading it, unblocks it in each thread as the program wanted, and
 * says so once on the log.
 *
 * The rendezvous. Abstract unix socket names belong to whoever binds them
 * first, and any user may bind any name: a fixed name such as
 * "@exitscope-PID" can be taken by another user before PID starts, which
 * both shuts the runtime out and lets the squatter answer root's
 * `exitscope dump PID`. So the runtime binds "@exitscope-PID-R", R being 64
 * random bits (getrandom) in 16 hex digits, fresh at every bind: nobody can
 * take the name in advance. The name is not a secret either:
 * /proc/net/unix lists every bound abstract name, and that is how the
 * command finds the candidates "@exitscope-PID-*". It trusts none of them
 * by name: it connects and checks who listens (the listener's pidfd must be
 * PID's, src/cli/control.c), so names an impostor binds to the same pattern
 * are refused, never talked to, and cannot stand in the way.
 *   - Fork children start their own service thread, which binds its own
 *     name with its own pid (the parent's listening socket is closed in the
 *     child, see xs_runtime_fds_reset).
 *   - exec keeps the pid: the socket is close-on-exec, so the old image's
 *     name disappears with it, and the new image binds a fresh name.
 *   - Credentials: the kernel records the listener's pid and euid when
 *     listen() runs. After a root program drops to uid U, the runtime goes
 *     on refusing peers other than U and root (it reads geteuid at each
 *     connection), and the command accepts a listener whose uid is not the
 *     target's current one only when the pidfd proves it is the target
 *     itself. xs_control_rebind() is there for the service thread to call
 *     after it follows a credential change: the socket is then listened on
 *     with the new uid, which kernels without pidfs need.
 * Without the socket (socket() or bind() failed), the log says why and
 * names the other ways to close a window.
 *
 * Connections are served concurrently from this one poll loop, without a
 * thread: each accepted connection is non-blocking, gets 1 s to send its
 * command line and 5 s to take the answer, and a table of CONN_MAX pending
 * connections drops its oldest silent one when full, so an idle client
 * delays nobody. A program that holds every descriptor (EMFILE) must not
 * make the loop spin on a readable socket it cannot accept: a spare
 * descriptor is kept in reserve and given up to accept one connection at a
 * time, and when even that fails the socket is left out of the poll for a
 * while (ACCEPT_PAUSE_NS).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
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
/* %gs of the service thread: no block (and no key a stub would take) */
static struct { void *self; long fast_key; } g_no_thread;

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
	if (sig >= XS_SIGRTMIN) {
		xs_buf_add(&b, "SIGRTMIN+");
		xs_buf_u64(&b, (uint64_t)(sig - XS_SIGRTMIN), 0);
	} else {	/* 32 and 33 lie below glibc's SIGRTMIN: no name */
		xs_buf_add(&b, "signal ");
		xs_buf_u64(&b, (uint64_t)sig, 0);
	}
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

/* ---- the control socket ---- */

#define CONN_MAX 12			/* pending connections */
#define CONN_READ_NS 1000000000ULL	/* to send the command line */
#define CONN_WRITE_NS 5000000000ULL	/* to take the answer */
#define ACCEPT_PAUSE_NS 250000000ULL	/* no descriptor to accept with */

struct conn {
	int fd;				/* -1: a free entry */
	bool writing;			/* the answer is going out */
	uint64_t opened_ns, deadline_ns;
	size_t n;			/* bytes of req received */
	char req[REQUEST_MAX + 1];
	struct xs_buf out;		/* the answer (mmap), out.len - sent to go */
	size_t sent;
};

static struct conn g_conns[CONN_MAX];
static int g_spare = -1;		/* reserved for accept under EMFILE */
static uint64_t g_accept_paused_until;	/* CLOCK_MONOTONIC ns */

/* send without blocking and without SIGPIPE: bytes sent or -errno */
static long send_nb(int fd, const void *data, size_t size)
{
	return xs_syscall6(SYS_sendto, fd, (long)data, (long)size, MSG_NOSIGNAL | MSG_DONTWAIT, 0, 0);
}

static const char *errno_name(long err)
{
	switch (-err) {
	case EMFILE: return "the process has no free file descriptor";
	case ENFILE: return "the system has no free file descriptor";
	case ENOMEM: case ENOBUFS: return "out of memory";
	case EACCES: case EPERM: return "not permitted (seccomp or a security module)";
	case EADDRINUSE: return "the name is taken";
	case EAFNOSUPPORT: return "unix sockets are not available";
	}
	return "error";
}

static void spare_reserve(void)
{
	if (g_spare < 0)
		xs_runtime_fd_adopt(xs_fd_make(SYS_eventfd2, 0, EFD_CLOEXEC, 0, 0), &g_spare, 0);
}

/* Bind and listen on "@exitscope-PID-R" (see the top of the file): the
 * socket (close-on-exec, not hidden yet) or a negative errno. */
static long socket_open(void)
{
	long s = xs_fd_make(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, 0);
	if (s < 0)
		return s;
	long r = -EADDRINUSE;
	for (int attempt = 0; attempt < 4 && r == -EADDRINUSE; attempt++) {
		uint64_t rnd;
		if (xs_sys3(SYS_getrandom, &rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
			/* the entropy pool is not ready (early boot): the clock
			 * and the address layout, weaker but still not known in
			 * advance by another user */
			rnd = xs_now_mono() * 0x9e3779b97f4a7c15ULL ^ xs_now_real() ^ (uint64_t)(uintptr_t)&rnd;
		}
		struct sockaddr_un addr = { .sun_family = AF_UNIX };
		struct xs_buf b = { addr.sun_path + 1, 0, sizeof(addr.sun_path) - 1, false, NULL };
		static const char hex[] = "0123456789abcdef";
		xs_buf_add(&b, "exitscope-");
		xs_buf_u64(&b, (uint64_t)g_proc->pid, 0);
		xs_buf_addc(&b, '-');
		for (int i = 60; i >= 0; i -= 4)
			xs_buf_addc(&b, hex[(rnd >> i) & 15]);
		socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + b.len);
		r = xs_sys3(SYS_bind, s, &addr, len);
	}
	if (r == 0)
		r = xs_sys2(SYS_listen, s, 64);
	if (r < 0) {
		xs_sys1(SYS_close, s);
		return r;
	}
	return s;
}

static void socket_failed(long err)
{
	static int warned;
	char msg[512];
	struct xs_buf b = { msg, 0, sizeof(msg), false, NULL };
	xs_buf_add(&b, "exitscope: cannot open the control socket (");
	xs_buf_add(&b, errno_name(err));
	xs_buf_add(&b, ", errno ");
	xs_buf_u64(&b, (uint64_t)-err, 0);
	xs_buf_add(&b, "); 'exitscope dump' will not reach this process; close windows with ");
	if (g_ctl_sig) {
		xs_buf_add(&b, "the control signal (kill -");
		const char *name = xs_control_signal_name();	/* "SIGUSR1" or "signal 32" */
		xs_buf_add(&b, strncmp(name, "SIG", 3) ? name + strlen("signal ") : name + 3);
		xs_buf_add(&b, " PID), ");
	}
	xs_buf_add(&b, "a write to /dev/exitscope, or --interval\n");
	xs_buf_addc(&b, 0);
	xs_warn_once(&warned, msg);
}

int xs_control_rebind(void)
{
	long s = socket_open();
	if (s < 0)
		return (int)s;
	xs_runtime_fd_close(&g_sockfd);
	xs_runtime_fd_adopt(s, &g_sockfd, 0);
	return 0;
}

static void conn_close(struct conn *c)
{
	xs_runtime_fd_close(&c->fd);
	xs_buf_pool_release(&c->out);
	spare_reserve();	/* the descriptor it freed */
}

/* Send what the socket takes now; close the connection when all is sent
 * or the peer is gone. */
static void conn_send(struct conn *c)
{
	while (c->sent < c->out.len) {
		long n = send_nb(c->fd, c->out.data + c->sent, c->out.len - c->sent);
		if (n == -EINTR)
			continue;
		if (n == -EAGAIN)
			return;
		if (n <= 0)
			break;
		c->sent += (size_t)n;
	}
	conn_close(c);
}

/* The command line is complete (newline, end of input or full): run it and
 * start sending the answer. */
static void conn_run(struct conn *c)
{
	c->req[c->n] = 0;
	char *nl = memchr(c->req, '\n', c->n);
	if (nl)
		*nl = 0;
	struct xs_buf *out = &c->out;
	out->grow = xs_buf_pool_grow;
	int r = xs_control_command(c->req, "command", out);
	if (r == -EINVAL) {
		xs_buf_add(out, "error: unknown command '");
		xs_buf_add(out, c->req);
		xs_buf_add(out, "' (dump [LABEL], dump-json [LABEL], reset, run-dump N [LABEL] or run-reset N)\n");
	} else if (r < 0) {
		xs_buf_add(out, "error: the record could not be written (kept in memory, retried at the next window)\n");
	} else {
		xs_buf_add(out, "ok window ");
		xs_buf_u64(out, (uint64_t)r, 0);
		xs_buf_addc(out, '\n');
	}
	if (out->failed) {
		out->len = 0;
		out->failed = false;
		xs_buf_add(out, "error: out of memory for the answer (the record is written)\n");
	}
	c->writing = true;
	c->sent = 0;
	c->deadline_ns = xs_now_mono() + CONN_WRITE_NS;
	conn_send(c);
}

static void conn_readable(struct conn *c)
{
	long got = xs_sys3(SYS_read, c->fd, c->req + c->n, REQUEST_MAX - c->n);
	if (got == -EAGAIN || got == -EINTR)
		return;
	if (got < 0) {
		conn_close(c);
		return;
	}
	c->n += (size_t)got;
	if (got == 0 || c->n == REQUEST_MAX || memchr(c->req, '\n', c->n))
		conn_run(c);
}

/* The entry to give a new connection: a free one, or the oldest silent
 * one (else the oldest still reading, else the oldest), dropped. */
static struct conn *conn_slot(bool drop)
{
	struct conn *victim = NULL;
	int victim_rank = 3;
	for (int i = 0; i < CONN_MAX; i++) {
		struct conn *c = &g_conns[i];
		if (c->fd < 0)
			return c;
		int rank = c->writing ? 2 : c->n ? 1 : 0;
		if (rank < victim_rank || (rank == victim_rank && c->opened_ns < victim->opened_ns)) {
			victim = c;
			victim_rank = rank;
		}
	}
	if (drop && victim) {
		conn_close(victim);
		return victim;
	}
	return NULL;
}

static struct conn *conn_oldest_silent(void)
{
	struct conn *oldest = NULL;
	for (int i = 0; i < CONN_MAX; i++) {
		struct conn *c = &g_conns[i];
		if (c->fd >= 0 && !c->writing && !c->n && (!oldest || c->opened_ns < oldest->opened_ns))
			oldest = c;
	}
	return oldest;
}

/* accept4 when the program holds every descriptor: give up the spare, then
 * the oldest silent connection's; if the program took even those, leave
 * the socket alone for a while instead of spinning on it. */
static long accept_without_descriptors(void)
{
	static int warned;
	xs_warn_once(&warned, "exitscope: the program holds every file descriptor; the control socket "
			      "serves one connection at a time on a reserved descriptor (the control "
			      "signal and --interval are not affected)\n");
	long c = -EMFILE;
	if (g_spare >= 0) {
		xs_runtime_fd_close(&g_spare);
		c = xs_sys4(SYS_accept4, g_sockfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	}
	struct conn *old;
	if ((c == -EMFILE || c == -ENFILE) && (old = conn_oldest_silent())) {
		conn_close(old);
		xs_runtime_fd_close(&g_spare);	/* conn_close reserved it again: give it up */
		c = xs_sys4(SYS_accept4, g_sockfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	}
	if (c == -EMFILE || c == -ENFILE) {
		g_accept_paused_until = xs_now_mono() + ACCEPT_PAUSE_NS;
		spare_reserve();
	}
	return c;
}

/* A connection is waiting on the control socket. Peers of another user
 * (but root) are refused. */
static void accept_one(void)
{
	long c = xs_fd_make(SYS_accept4, g_sockfd, 0, 0, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c == -EMFILE || c == -ENFILE)
		c = accept_without_descriptors();
	if (c < 0)
		return;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (xs_sys5(SYS_getsockopt, c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != (uid_t)xs_sys0(SYS_geteuid) && cred.uid != 0)) {
		static const char no[] = "error: permission denied: not the same user\n";
		send_nb((int)c, no, sizeof(no) - 1);
		xs_sys1(SYS_close, c);
		spare_reserve();
		return;
	}
	struct conn *slot = conn_slot(true);
	xs_runtime_fd_adopt(c, &slot->fd, 0);
	slot->writing = false;
	slot->n = slot->sent = 0;
	slot->out = (struct xs_buf){ .grow = xs_buf_pool_grow };
	slot->opened_ns = xs_now_mono();
	slot->deadline_ns = slot->opened_ns + CONN_READ_NS;
}

/* Connections past their deadline: a silent one is told so, then dropped. */
static void conns_expire(uint64_t now)
{
	static const char late[] = "error: no command within 1 s\n";
	for (int i = 0; i < CONN_MAX; i++) {
		struct conn *c = &g_conns[i];
		if (c->fd < 0 || now < c->deadline_ns)
			continue;
		if (!c->writing)
			send_nb(c->fd, late, sizeof(late) - 1);
		conn_close(c);
	}
}

int xs_control_command(const char *line, const char *reason, struct xs_buf *out)
{
	const char *label = NULL;
	enum xs_show show;
	size_t verb;
	if (!strncmp(line, "run-dump ", 9) || !strncmp(line, "run-reset ", 10)) {
		/* one process's part of a run-wide window N (common/runwin.c):
		 * closed silently, the record carries N */
		bool reset = line[4] == 'r';
		const char *p = line + (reset ? 10 : 9);
		uint64_t n = 0;
		while (*p >= '0' && *p <= '9' && n < 0xffffffffULL)
			n = n * 10 + (uint64_t)(*p++ - '0');
		if (n == 0 || n >= 0xffffffffULL || (*p && (*p != ' ' || reset)))
			return -EINVAL;
		if (*p == ' ' && p[1])
			label = p + 1;
		uint32_t seq = g_proc->seq;
		int r = xs_window_close_run(reason, label, (uint32_t)n, XS_SHOW_NONE);
		return r < 0 ? r : (int)seq;
	}
	if (!strncmp(line, "dump", 4) && (line[4] == 0 || line[4] == ' ')) {
		show = out ? XS_SHOW_TEXT : XS_SHOW_LOG;
		verb = 4;
	} else if (out && !strncmp(line, "dump-json", 9) && (line[9] == 0 || line[9] == ' ')) {
		show = XS_SHOW_JSON;
		verb = 9;
	} else if (!strcmp(line, "reset")) {
		show = XS_SHOW_NONE;
		verb = 5;
	} else {
		return -EINVAL;
	}
	if (show != XS_SHOW_NONE && line[verb] == ' ' && line[verb + 1])
		label = line + verb + 1;
	uint32_t seq = g_proc->seq;
	int r = xs_window_close(reason, label, NULL, out, show);
	return r < 0 ? r : (int)seq;
}

/* ---- the service loop ---- */

/* What woke the service thread (one case each in service_main). */
enum wake {
	WAKE_SOCKET = 1,	/* a connection to accept */
	WAKE_TIMER = 2,		/* --interval */
	WAKE_EVENT = 3,		/* the eventfd: credentials to follow, threads ended in
				 * strict mode, dead threads to reclaim */
	WAKE_CONN = 4,		/* WAKE_CONN + i: g_conns[i] */
};

static int service_main(void *arg)
{
	(void)arg;
	struct pollfd fds[3 + CONN_MAX];
	int wake[3 + CONN_MAX];
	uint64_t next_drain = 0;
	for (;;) {
		uint64_t now = xs_now_mono(), until = ~0ULL;
		int n = 0;
		/* the socket is left out while nothing could accept from it */
		if (g_sockfd >= 0 && now >= g_accept_paused_until) {
			wake[n] = WAKE_SOCKET;
			fds[n++] = (struct pollfd){ g_sockfd, POLLIN, 0 };
		} else if (g_sockfd >= 0) {
			until = g_accept_paused_until;
		}
		if (g_timerfd >= 0) { wake[n] = WAKE_TIMER; fds[n++] = (struct pollfd){ g_timerfd, POLLIN, 0 }; }
		if (g_eventfd >= 0) { wake[n] = WAKE_EVENT; fds[n++] = (struct pollfd){ g_eventfd, POLLIN, 0 }; }
		for (int i = 0; i < CONN_MAX; i++) {
			struct conn *c = &g_conns[i];
			if (c->fd < 0)
				continue;
			wake[n] = WAKE_CONN + i;
			fds[n++] = (struct pollfd){ c->fd, c->writing ? POLLOUT : POLLIN, 0 };
			if (c->deadline_ns < until)
				until = c->deadline_ns;
		}
		/* with the profiler on, the sample rings are drained every 50 ms */
		if (xs_profiling()) {
			if (!next_drain)
				next_drain = now + 50 * 1000 * 1000;
			if (next_drain < until)
				until = next_drain;
		}
		struct timespec ts = { 0, 0 };
		if (until != ~0ULL && until > now) {
			ts.tv_sec = (time_t)((until - now) / 1000000000);
			ts.tv_nsec = (long)((until - now) % 1000000000);
		}
		/* the control signal is unblocked here only, so the kernel
		 * hands it to this thread: its handler sets g_ctl_pending and
		 * ppoll returns EINTR (a storm of signals closes one window) */
		uint64_t wait_mask = g_ctl_sig ? ~XS_SIGBIT(g_ctl_sig) : ~0ULL;
		long ready = xs_sys5(SYS_ppoll, fds, n, until != ~0ULL ? &ts : NULL, &wait_mask, 8);
		/* ppoll that finds a descriptor ready at once restores the mask
		 * without delivering a pending signal: take it here, so that a
		 * busy socket cannot hold the signal back */
		if (ready > 0 && g_ctl_sig) {
			uint64_t set = XS_SIGBIT(g_ctl_sig);
			struct timespec zero = { 0, 0 };
			if (xs_sys4(SYS_rt_sigtimedwait, &set, NULL, &zero, 8) == g_ctl_sig)
				g_ctl_pending = 1;
		}
		/* the run's first process: a run-wide window (DESIGN.md §3.11),
		 * or its own when it is in no run or another closer holds the
		 * run file (waiting for it could wait for our own answer) */
		if (__atomic_exchange_n(&g_ctl_pending, 0, __ATOMIC_ACQ_REL) && g_ctl_sig &&
		    xs_run_signal_window() < 0)
			xs_window_close("signal", NULL, NULL, NULL, XS_SHOW_LOG);
		now = xs_now_mono();
		if (xs_profiling() && now >= next_drain) {
			xs_window_lock();
			xs_profile_drain();
			xs_window_unlock();
			next_drain = now + 50 * 1000 * 1000;
		}
		for (int i = 0; ready > 0 && i < n; i++) {
			if (!fds[i].revents)
				continue;
			switch (wake[i]) {
			case WAKE_SOCKET:
				accept_one();
				break;
			case WAKE_TIMER: {
				uint64_t ticks;
				if (xs_sys3(SYS_read, g_timerfd, &ticks, 8) == 8)
					xs_window_close("interval", NULL, NULL, NULL, XS_SHOW_LOG);
				break;
			}
			case WAKE_EVENT: {
				uint64_t v;
				xs_sys3(SYS_read, g_eventfd, &v, 8);
				if (xs_creds_follow())
					xs_control_rebind();	/* listen with the new credentials */
				xs_reap_fated();
				xs_window_lock();
				xs_reclaim_dead();
				xs_window_unlock();
				break;
			}
			default: {
				struct conn *c = &g_conns[wake[i] - WAKE_CONN];
				if (c->fd != fds[i].fd)
					break;	/* dropped for a newer one meanwhile */
				if (c->writing)
					conn_send(c);
				else
					conn_readable(c);
				break;
			}
			}
		}
		conns_expire(xs_now_mono());
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

static long open_first_profile(void *arg)
{
	(void)arg;
	xs_profile_open_window(g_proc->seq);
	return 0;
}

/* Start the service thread of this process (at start-up, in fork children). */
int xs_control_start(void)
{
	g_sockfd = g_timerfd = g_eventfd = -1;
	/* a fork child: the parent's connections and spare were closed with
	 * the other runtime descriptors (xs_runtime_fds_reset) */
	for (int i = 0; i < CONN_MAX; i++) {
		xs_buf_pool_release(&g_conns[i].out);
		g_conns[i] = (struct conn){ .fd = -1 };
	}
	g_spare = -1;
	g_accept_paused_until = 0;
	xs_usage_init();
	g_ctl_sig = g_ctl_epoch ? 0 : g_config.signal;	/* 0 once the program took it */
	long s = socket_open();
	if (s < 0)
		socket_failed(s);
	else
		xs_runtime_fd_adopt(s, &g_sockfd, 0);
	if (g_config.interval_ms) {
		long t = xs_fd_make(SYS_timerfd_create, CLOCK_MONOTONIC, TFD_CLOEXEC, 0, 0);
		struct itimerspec its;
		its.it_interval.tv_sec = (time_t)(g_config.interval_ms / 1000);
		its.it_interval.tv_nsec = (long)(g_config.interval_ms % 1000) * 1000000;
		its.it_value = its.it_interval;
		if (t >= 0 && xs_sys4(SYS_timerfd_settime, t, 0, &its, NULL) == 0)
			xs_runtime_fd_adopt(t, &g_timerfd, 0);
		else if (t >= 0)
			xs_sys1(SYS_close, t);
	}
	xs_runtime_fd_adopt(xs_fd_make(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK, 0, 0), &g_eventfd, 0);
	if (g_sockfd >= 0)
		spare_reserve();
	xs_run_process_start();	/* the socket is there: a run-wide window can reach us */

	/* the first window's profile, before any program code can exit (in a
	 * fork child this runs in the SIGSYS handler, on the program's stack) */
	xs_window_lock();
	xs_on_boundary_stack(open_first_profile, NULL);
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
	if (r > 0)
		g_service_tid = (int)r;	/* now, not when it first runs: see creds.c */
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
