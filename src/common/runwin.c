/*
 * A run-wide window (see runwin.h). The other processes are asked first and
 * answered after, so that their service threads close their windows at the
 * same time: the cost is that of the slowest process, not the sum.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include "common/runfile.h"
#include "common/runwin.h"

#define ANSWER_WAIT_NS 30000000000ULL

static uint64_t now_ns(xs_sys_fn sys, int clock)
{
	struct timespec ts = { 0, 0 };
	sys(SYS_clock_gettime, clock, (long)&ts, 0, 0, 0);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int read_all(xs_sys_fn sys, int fd, struct xs_buf *b)
{
	for (;;) {
		if (b->cap - b->len < 65536 && b->grow(b, b->len + 65536) < 0)
			return -ENOMEM;
		long n = sys(SYS_pread64, fd, (long)(b->data + b->len), (long)(b->cap - b->len), (long)b->len, 0);
		if (n == -EINTR)
			continue;
		if (n < 0)
			return (int)n;
		if (n == 0)
			return 0;
		b->len += (size_t)n;
	}
}

static struct xs_runwin_result *result_of(struct xs_runwin *rw, int pid)
{
	for (size_t i = 0; i < rw->count; i++)
		if (rw->results[i].pid == pid)
			return &rw->results[i];
	return NULL;
}

/* /proc/net/unix into b (the control sockets' names and owners). */
static void read_unix_list(xs_sys_fn sys, struct xs_buf *unix_list)
{
	unix_list->len = 0;
	long ufd = sys(SYS_openat, AT_FDCWD, (long)"/proc/net/unix", O_RDONLY | O_CLOEXEC, 0, 0);
	if (ufd >= 0) {
		/* /proc files are read in order, not at offsets */
		for (;;) {
			if (unix_list->cap - unix_list->len < 65536 && unix_list->grow(unix_list, unix_list->len + 65536) < 0)
				break;
			long n = sys(SYS_read, ufd, (long)(unix_list->data + unix_list->len),
				     (long)(unix_list->cap - unix_list->len), 0, 0);
			if (n == -EINTR)
				continue;
			if (n <= 0)
				break;
			unix_list->len += (size_t)n;
		}
		sys(SYS_close, ufd, 0, 0, 0, 0);
	}
}

/* Is pid still running (not gone, not a zombie)? */
static bool alive(xs_sys_fn sys, int pid)
{
	char st[256];
	if (xs_ctl_read_proc(sys, pid, "stat", st, sizeof(st)) <= 0)
		return false;
	const char *p = strrchr(st, ')');	/* "pid (comm) S ..." */
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* Connect to pid's runtime from the candidates in /proc/net/unix, send cmd;
 * the socket or -errno (why says why for a refusal). */
static long reach(struct xs_runwin *rw, const char *unix_list, size_t size, int pid, const char *cmd, size_t cmd_len,
		  char *why, size_t why_size)
{
	xs_sys_fn sys = rw->sys;
	long pidfd = sys(SYS_pidfd_open, pid, 0, 0, 0, 0);
	if (pidfd == -ESRCH)
		return -ESRCH;
	long found = -ECONNREFUSED;
	const char *p = unix_list, *end = unix_list + size;
	char line[512], name[XS_CTL_NAME_MAX];
	while (p < end && found < 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = 0;
		p = nl ? nl + 1 : end;
		int owner;
		if (!xs_ctl_unix_line(line, &owner, name) || owner != pid)
			continue;
		long c = xs_ctl_connect(sys, name);
		if (c < 0)
			continue;
		if (!xs_ctl_listener_is(sys, (int)c, pid, (int)pidfd, why, why_size)) {
			sys(SYS_close, c, 0, 0, 0, 0);
			found = -EPERM;
			continue;
		}
		found = c;
	}
	if (pidfd >= 0)
		sys(SYS_close, pidfd, 0, 0, 0, 0);
	if (found >= 0) {
		sys(SYS_sendto, found, (long)cmd, (long)cmd_len, MSG_NOSIGNAL, 0);
		sys(SYS_shutdown, found, SHUT_WR, 0, 0, 0);
	}
	return found;
}

/* "ok window S\n" at the end of what came back: S, else -1. */
static long answer_seq(const char *a, size_t n)
{
	if (n < 12 || a[n - 1] != '\n')
		return -1;
	size_t start = n - 1;
	while (start > 0 && a[start - 1] != '\n')
		start--;
	if (n - 1 - start <= 10 || memcmp(a + start, "ok window ", 10))
		return -1;
	long v = 0;
	for (size_t i = start + 10; i < n - 1; i++) {
		if (a[i] < '0' || a[i] > '9')
			return -1;
		v = v * 10 + (a[i] - '0');
	}
	return v;
}

struct pending {
	long fd;
	size_t n;
	char tail[64];
};

/* Wait for every answer (each runtime closes the connection after it). */
static void collect(struct xs_runwin *rw, struct pending *pend, struct pollfd *fds)
{
	xs_sys_fn sys = rw->sys;
	uint64_t deadline = now_ns(sys, CLOCK_MONOTONIC) + ANSWER_WAIT_NS;
	for (;;) {
		size_t n = 0;
		for (size_t i = 0; i < rw->count; i++)
			if (pend[i].fd >= 0)
				fds[n++] = (struct pollfd){ (int)pend[i].fd, POLLIN, 0 };
		uint64_t now = now_ns(sys, CLOCK_MONOTONIC);
		if (!n || now >= deadline)
			break;
		struct timespec ts = { (time_t)((deadline - now) / 1000000000ULL), (long)((deadline - now) % 1000000000ULL) };
		long ready = sys(SYS_ppoll, (long)fds, (long)n, (long)&ts, 0, 8);
		if (ready < 0 && ready != -EINTR)
			break;
		for (size_t k = 0; k < n; k++) {
			if (!fds[k].revents)
				continue;
			for (size_t i = 0; i < rw->count; i++) {
				struct pending *q = &pend[i];
				if (q->fd != fds[k].fd)
					continue;
				char chunk[256];
				long got = sys(SYS_read, q->fd, (long)chunk, sizeof(chunk), 0, 0);
				if (got == -EINTR || got == -EAGAIN)
					break;
				if (got > 0) {
					/* keep the last bytes: the status line ends the answer */
					for (long c = 0; c < got; c++) {
						if (q->n == sizeof(q->tail)) {
							memmove(q->tail, q->tail + 1, sizeof(q->tail) - 1);
							q->n--;
						}
						q->tail[q->n++] = chunk[c];
					}
					break;
				}
				long seq = answer_seq(q->tail, q->n);
				/* closed with no word: the process went away (an exec or
				 * exit closed its socket) before it answered; that image's
				 * last record belongs to this window all the same */
				rw->results[i].err = seq >= 0 ? 0 : q->n == 0 ? -ESRCH : -EPROTO;
				rw->results[i].seq = seq < 0 ? 0 : (uint32_t)seq;
				sys(SYS_close, q->fd, 0, 0, 0, 0);
				q->fd = -1;
				break;
			}
		}
	}
	for (size_t i = 0; i < rw->count; i++)
		if (pend[i].fd >= 0) {
			rw->results[i].err = -ETIMEDOUT;
			sys(SYS_close, pend[i].fd, 0, 0, 0, 0);
			pend[i].fd = -1;
		}
}

static void window_line(struct xs_runwin *rw, struct xs_buf *b, uint64_t begin_ns, uint64_t end_ns)
{
	xs_buf_add(b, "{\"event\": \"window\", \"run_window\": ");
	xs_buf_u64(b, rw->run_window, 0);
	xs_buf_add(b, ", \"label\": ");
	if (rw->label)
		xs_buf_json_str(b, rw->label);
	else
		xs_buf_add(b, "null");
	xs_buf_add(b, ", \"reset\": ");
	xs_buf_add(b, rw->reset ? "true" : "false");
	xs_buf_add(b, ", \"reason\": ");
	xs_buf_json_str(b, rw->reason);
	xs_buf_add(b, ", \"by\": ");
	xs_buf_u64(b, (uint64_t)(rw->self_pid > 0 ? rw->self_pid : 0), 0);
	xs_buf_add(b, ", \"begin_ns\": ");
	xs_buf_u64(b, begin_ns, 0);
	xs_buf_add(b, ", \"time_ns\": ");
	xs_buf_u64(b, end_ns, 0);
	xs_buf_add(b, ", \"closed\": [");
	bool first = true;
	for (size_t i = 0; i < rw->count; i++) {
		if (rw->results[i].err)
			continue;
		xs_buf_add(b, first ? "" : ", ");
		first = false;
		xs_buf_add(b, "{\"pid\": ");
		xs_buf_u64(b, (uint64_t)rw->results[i].pid, 0);
		xs_buf_add(b, ", \"seq\": ");
		xs_buf_u64(b, rw->results[i].seq, 0);
		xs_buf_addc(b, '}');
	}
	xs_buf_add(b, "], \"missed\": [");
	first = true;
	for (size_t i = 0; i < rw->count; i++) {
		if (!rw->results[i].err)
			continue;
		xs_buf_add(b, first ? "" : ", ");
		first = false;
		xs_buf_u64(b, (uint64_t)rw->results[i].pid, 0);
	}
	xs_buf_add(b, "]}\n");
}

int xs_runwin_close(struct xs_runwin *rw)
{
	xs_sys_fn sys = rw->sys;
	struct xs_buf file = { .grow = rw->grow }, unix_list = { .grow = rw->grow }, cmd = { .grow = rw->grow };
	struct xs_buf mem = { .grow = rw->grow };
	int r;
	rw->count = rw->dropped = 0;
	long lr;
	while ((lr = sys(SYS_flock, rw->lock_fd, LOCK_EX | (rw->try_lock ? LOCK_NB : 0), 0, 0, 0)) == -EINTR)
		;
	if (lr < 0)
		return (int)lr;
	r = read_all(sys, rw->lock_fd, &file);
	if (r < 0)
		goto out_unlock;
	/* the live pids and the per-process bookkeeping, in one allocation */
	size_t need = XS_RUNWIN_MAX * (sizeof(int) + sizeof(struct pending) + sizeof(struct pollfd));
	if (mem.grow(&mem, need) < 0) {
		r = -ENOMEM;
		goto out_unlock;
	}
	int *live = (int *)mem.data;
	struct pending *pend = (struct pending *)(mem.data + XS_RUNWIN_MAX * sizeof(int));
	struct pollfd *fds = (struct pollfd *)(mem.data + XS_RUNWIN_MAX * (sizeof(int) + sizeof(struct pending)));
	struct xs_runfile_scan scan = { live, XS_RUNWIN_MAX, 0, 0, 0 };
	xs_runfile_scan(file.data, file.len, &scan);
	rw->run_window = scan.last_window + 1;
	rw->dropped = scan.live_dropped;
	uint64_t begin_ns = now_ns(sys, CLOCK_REALTIME);

	xs_buf_add(&cmd, rw->reset ? "run-reset " : "run-dump ");
	xs_buf_u64(&cmd, rw->run_window, 0);
	if (rw->label && !rw->reset) {
		xs_buf_addc(&cmd, ' ');
		xs_buf_add(&cmd, rw->label);
	}
	xs_buf_addc(&cmd, '\n');
	read_unix_list(sys, &unix_list);
	if (cmd.failed || file.failed) {
		r = -ENOMEM;
		goto out_unlock;
	}
	for (size_t i = 0; i < scan.live_count; i++) {
		if (result_of(rw, live[i]))
			continue;
		struct xs_runwin_result *res = &rw->results[rw->count];
		struct pending *q = &pend[rw->count];
		rw->count++;
		*res = (struct xs_runwin_result){ .pid = live[i] };
		q->fd = -1;
		q->n = 0;
		if (live[i] == rw->self_pid) {
			long seq = rw->close_self ? rw->close_self(rw->run_window, rw->arg) : -ENOSYS;
			res->err = seq < 0 ? (int)seq : 0;
			res->seq = seq < 0 ? 0 : (uint32_t)seq;
			continue;
		}
		long fd = reach(rw, unix_list.data, unix_list.len, live[i], cmd.data, cmd.len, res->why, sizeof(res->why));
		/* no listener: a process between the two images of an exec binds
		 * its new socket within milliseconds; one that ended (or is a
		 * zombie) since the run file named it has its exit record */
		for (int tries = 0; fd == -ECONNREFUSED && alive(sys, live[i]) && tries < 50; tries++) {
			struct timespec ms2 = { 0, 2000000 };
			sys(SYS_nanosleep, (long)&ms2, 0, 0, 0, 0);
			read_unix_list(sys, &unix_list);
			fd = reach(rw, unix_list.data, unix_list.len, live[i], cmd.data, cmd.len, res->why,
				   sizeof(res->why));
		}
		if (fd == -ECONNREFUSED && !alive(sys, live[i]))
			fd = -ESRCH;
		if (fd < 0) {
			/* gone: it exited before the window reached it, so its
			 * last window (exit) is in this run window */
			res->err = (int)fd;
			continue;
		}
		q->fd = fd;
	}
	collect(rw, pend, fds);
	struct xs_buf line = { .grow = rw->grow };
	window_line(rw, &line, begin_ns, now_ns(sys, CLOCK_REALTIME));
	r = line.failed ? -ENOMEM : 0;
	for (size_t off = 0; !r && off < line.len;) {
		long n = sys(SYS_write, rw->append_fd, (long)(line.data + off), (long)(line.len - off), 0, 0);
		if (n == -EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? (int)n : -EIO;
			break;
		}
		off += (size_t)n;
	}
	rw->release(&line);
out_unlock:
	sys(SYS_flock, rw->lock_fd, LOCK_UN, 0, 0, 0);
	rw->release(&file);
	rw->release(&unix_list);
	rw->release(&cmd);
	rw->release(&mem);
	return r;
}
