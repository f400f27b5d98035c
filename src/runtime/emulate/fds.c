/*
 * The runtime's own file descriptors: the program may not see, close or
 * replace them (they sit out of its reach, are close-on-exec, and the
 * program's close, close_range, dup2 and dup3 are emulated around them);
 * each is registered with the variable that holds it; the log, the output
 * directory and the record file go through exec to the new image.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "runtime/runtime.h"

/*
 * Where the runtime's descriptors live. The program allocates lowest-first
 * and may dup2 onto any number below its soft RLIMIT_NOFILE; a number at
 * or above that limit is out of its reach altogether (dup2, dup3 and
 * F_DUPFD refuse it, no allocation lands there, and a program that closes
 * "every descriptor up to the limit" stops below it). So a runtime
 * descriptor goes there: the soft limit is raised for a moment, the
 * descriptor duplicated above the old limit, and the limit put back. That
 * needs room: soft < hard, or the program's CAP_SYS_RESOURCE to raise the
 * hard limit for that moment too (lowering it back needs nothing). And a
 * limit that is not huge: the kernel's descriptor table grows to the
 * highest number, and every fork copies it, so above a limit of
 * ABOVE_LIMIT_MAX, or without room, the descriptors go as high as they can
 * below it instead (1000, or 24 below a smaller limit), where the program
 * could reach them and close, close_range, dup2 and dup3 are emulated
 * around them. g_fd_lock serialises that with the program's own
 * RLIMIT_NOFILE calls, which are dispatched for it (xs_fd_rlimit): the
 * program never sees the raised limit, and its own change is never undone
 * by the restore.
 */
#define ABOVE_LIMIT_MAX 65536		/* a 512 KiB table */
#define ABOVE_LIMIT_ROOM 64

/* Not in the process arena: the log's descriptor is placed before it
 * exists. A fork child forked while another thread held it frees it in
 * xs_runtime_fds_reset, before anything else can take it. */
static volatile int g_fd_lock;

static void fd_lock(sigset_t *old)
{
	xs_lock_blocked(&g_fd_lock, old);
}

static void fd_unlock(const sigset_t *old)
{
	xs_unlock_blocked(&g_fd_lock, old);
}

static long nofile(struct rlimit *rl)
{
	return xs_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, rl);
}

/* Raise the soft limit for a moment (see the top of the file): the limit
 * to put back in *was; false without room. fd_lock held. */
static bool limit_raise(struct rlimit *was)
{
	if (nofile(was) < 0 || was->rlim_cur < 64 || was->rlim_cur > ABOVE_LIMIT_MAX)
		return false;
	struct rlimit up = { was->rlim_cur + ABOVE_LIMIT_ROOM, was->rlim_max };
	if (up.rlim_cur > was->rlim_max)
		up.rlim_cur = was->rlim_max;
	long set = up.rlim_cur > was->rlim_cur ? xs_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, &up, NULL) : -EPERM;
	if (set < 0 && was->rlim_max < RLIM_INFINITY - ABOVE_LIMIT_ROOM) {
		/* the hard limit too, with the program's CAP_SYS_RESOURCE */
		up.rlim_cur = up.rlim_max = was->rlim_cur + ABOVE_LIMIT_ROOM;
		if (up.rlim_max < was->rlim_max)
			up.rlim_max = was->rlim_max;
		set = xs_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, &up, NULL);
	}
	return set == 0;
}

static void limit_restore(const struct rlimit *was)
{
	xs_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, was, NULL);
}

/* Duplicate fd (kept open) out of the program's reach; the new number or
 * a negative errno. fd_lock held. */
static long dup_out_of_reach(long fd, int cmd)
{
	struct rlimit rl;
	if (limit_raise(&rl)) {
		long high = xs_sys3(SYS_fcntl, fd, cmd, rl.rlim_cur);
		limit_restore(&rl);
		if (high >= 0)
			return high;
	} else if (nofile(&rl) < 0) {
		return xs_sys3(SYS_fcntl, fd, cmd, 3);
	}
	long base = rl.rlim_cur < 64 ? 3 : rl.rlim_cur > 1024 ? 1000 : (long)rl.rlim_cur - 24;
	return xs_sys3(SYS_fcntl, fd, cmd, base);
}

long xs_fd_make_call(long nr, long a0, long a1, long a2, long a3)
{
	long fd = xs_syscall6(nr, a0, a1, a2, a3, 0, 0);
	if (fd != -EMFILE)
		return fd;
	sigset_t old;
	struct rlimit was;
	fd_lock(&old);
	if (limit_raise(&was)) {
		fd = xs_syscall6(nr, a0, a1, a2, a3, 0, 0);
		limit_restore(&was);
	}
	fd_unlock(&old);
	return fd;
}

long xs_fd_out_of_reach(long fd, bool cloexec)
{
	if (fd < 0)
		return fd;
	sigset_t old;
	fd_lock(&old);
	long high = dup_out_of_reach(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD);
	fd_unlock(&old);
	if (high < 0)
		return fd;	/* no room: where it is, hidden all the same */
	xs_sys1(SYS_close, fd);
	return high;
}

bool xs_fd_first_arg(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_fstat: case SYS_lseek: case SYS_ioctl:
	case SYS_pread64: case SYS_pwrite64: case SYS_readv: case SYS_writev: case SYS_dup:
	case SYS_sendfile: case SYS_connect: case SYS_accept: case SYS_sendto: case SYS_recvfrom:
	case SYS_sendmsg: case SYS_recvmsg: case SYS_shutdown: case SYS_bind: case SYS_listen:
	case SYS_getsockname: case SYS_getpeername: case SYS_setsockopt: case SYS_getsockopt:
	case SYS_fcntl: case SYS_flock: case SYS_fsync: case SYS_fdatasync: case SYS_ftruncate:
	case SYS_getdents: case SYS_fchdir: case SYS_fchmod: case SYS_fchown: case SYS_fstatfs:
	case SYS_getdents64: case SYS_fadvise64: case SYS_sync_file_range: case SYS_fallocate:
	case SYS_accept4: case SYS_preadv: case SYS_pwritev: case SYS_syncfs: case SYS_preadv2:
	case SYS_pwritev2: case SYS_copy_file_range: case SYS_fsetxattr: case SYS_fgetxattr:
	case SYS_flistxattr: case SYS_fremovexattr: case SYS_readahead: case SYS_splice: case SYS_tee:
		return true;
	}
	return false;
}

uint64_t g_fd_watch[XS_FD_WATCH_MAX / 64];

void xs_fd_watch(int fd, bool on)
{
	if (fd < 0 || fd >= XS_FD_WATCH_MAX)
		return;
	if (on)
		__atomic_or_fetch(&g_fd_watch[fd >> 6], 1ULL << (fd & 63), __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&g_fd_watch[fd >> 6], ~(1ULL << (fd & 63)), __ATOMIC_RELAXED);
}

/*
 * The registry: every runtime descriptor with the variable that holds it,
 * so that moving one (the program's dup2 onto its number) updates its
 * owner, and a fork child closes the ones it does not share. Entries
 * change under fd_lock; xs_is_runtime_fd reads without it (a descriptor
 * being added or forgotten is the caller's own, not one the program
 * names).
 * The log, the output directory, the run file and the exitscope binary
 * (run.c), the program's file (self_exe.c); a record file; /proc/self/task;
 * a profile; the service thread's socket, spare, timer, eventfd and up to
 * 12 control connections (control.c); a run-window lock (run.c).
 */
struct runtime_fd {
	int fd;
	int *owner;
	unsigned flags;
};
static struct runtime_fd g_runtime_fds[40];
static int g_runtime_fd_count;

static void lost_warning(int fd)
{
	static int warned;
	char msg[256];
	struct xs_buf b = { msg, 0, sizeof(msg), false, NULL };
	xs_buf_add(&b, "exitscope: the program took descriptor ");
	xs_buf_u64(&b, (uint64_t)fd, 0);
	xs_buf_add(&b, ", one of the runtime's, and no descriptor was free to move it to: what it held "
		       "(records, profile or control) is lost from here on\n");
	xs_buf_addc(&b, 0);
	xs_warn_once(&warned, msg);
}

/*
 * A process that shares our memory (vfork, posix_spawn: XS_KIND_VMPROC)
 * has a descriptor table of its own but our registry and owners. Its dup2
 * onto a runtime descriptor's number moves the runtime's copy in its own
 * table only and notes the move here, under its pid: the registry stays
 * the parent's, the number is the program's in that child, and the child's
 * exec hands on the moved copy (xs_runtime_fd_here). An entry is free when
 * its pid is 0 (a vfork child's, once the parent resumes: the pid may come
 * back for another child) or gone.
 */
#define VM_MOVED_MAX 32
static struct { int pid, from, to; } g_vm_moved[VM_MOVED_MAX];
static volatile int g_vm_moved_used;	/* entries ever taken: a cheap "none" */

static int vm_moved_find(int pid, long fd)
{
	for (int i = 0; i < VM_MOVED_MAX; i++)
		if (g_vm_moved[i].pid == pid && g_vm_moved[i].from == fd)
			return i;
	return -1;
}

int xs_runtime_fd_here(int fd)
{
	if (fd < 0 || !g_vm_moved_used)
		return fd;
	int i = vm_moved_find((int)xs_sys0(SYS_getpid), fd);
	return i < 0 ? fd : g_vm_moved[i].to;
}

void xs_runtime_fds_vm_end(int pid)
{
	if (!g_vm_moved_used || pid <= 0)
		return;
	sigset_t old;
	fd_lock(&old);
	for (int i = 0; i < VM_MOVED_MAX; i++)
		if (g_vm_moved[i].pid == pid)
			g_vm_moved[i].pid = 0;
	fd_unlock(&old);
}

static bool registered(long fd)
{
	for (int i = 0; i < g_runtime_fd_count; i++)
		if (g_runtime_fds[i].fd == fd)
			return true;
	return false;
}

bool xs_is_runtime_fd(long fd)
{
	return registered(fd) && (!g_vm_moved_used || vm_moved_find((int)xs_sys0(SYS_getpid), fd) < 0);
}

/* A dup2 onto fd in a process that shares our memory: the runtime's copy
 * there, registered or moved before, goes out of the way. fd_lock held. */
static void vm_move(long fd)
{
	int pid = (int)xs_sys0(SYS_getpid), slot = -1;
	for (int i = 0; i < VM_MOVED_MAX; i++)
		if (g_vm_moved[i].pid == pid && g_vm_moved[i].to == fd) {	/* a copy moved here before */
			long again = dup_out_of_reach(fd, F_DUPFD_CLOEXEC);
			g_vm_moved[i].to = again < 0 ? -1 : (int)again;
			if (again < 0)
				lost_warning((int)fd);
			return;
		}
	if (!registered(fd) || vm_moved_find(pid, fd) >= 0)
		return;	/* not the runtime's, or moved already: the program's number now */
	for (int i = 0; i < VM_MOVED_MAX && slot < 0; i++)
		if (!g_vm_moved[i].pid || xs_sys2(SYS_kill, g_vm_moved[i].pid, 0) == -ESRCH)
			slot = i;
	if (slot < 0) {
		lost_warning((int)fd);	/* the child loses its copy, the parent keeps its own */
		return;
	}
	long moved = dup_out_of_reach(fd, F_DUPFD_CLOEXEC);
	if (moved < 0)
		lost_warning((int)fd);
	g_vm_moved[slot].from = (int)fd;
	g_vm_moved[slot].to = moved < 0 ? -1 : (int)moved;
	g_vm_moved[slot].pid = pid;
	g_vm_moved_used = 1;
}

int xs_runtime_fd_adopt(long fd, int *owner, unsigned flags)
{
	fd = xs_fd_out_of_reach(fd, true);
	*owner = fd < 0 ? -1 : (int)fd;
	if (fd < 0)
		return (int)fd;
	sigset_t old;
	fd_lock(&old);
	if (g_runtime_fd_count < (int)(sizeof(g_runtime_fds) / sizeof(g_runtime_fds[0])))
		g_runtime_fds[g_runtime_fd_count++] = (struct runtime_fd){ (int)fd, owner, flags };
	xs_fd_watch((int)fd, true);
	fd_unlock(&old);
	return (int)fd;
}

static void forget_locked(int fd)
{
	for (int i = 0; i < g_runtime_fd_count; i++)
		if (g_runtime_fds[i].fd == fd) {
			g_runtime_fds[i] = g_runtime_fds[--g_runtime_fd_count];
			xs_fd_watch(fd, false);
			return;
		}
}

void xs_runtime_fd_forget(int *owner)
{
	if (*owner < 0)
		return;
	sigset_t old;
	fd_lock(&old);
	forget_locked(*owner);
	fd_unlock(&old);
}

void xs_runtime_fd_close(int *owner)
{
	xs_runtime_fd_forget(owner);
	if (*owner >= 0)
		xs_sys1(SYS_close, *owner);
	*owner = -1;
}

/* In a fork child the runtime's descriptors are the parent's copies: the
 * shared ones (XS_FD_FORK_SHARED: the log, the output directory, the run
 * file and the program's executable) stay, the rest is closed (the child
 * opens its own record file and service descriptors). */
void xs_runtime_fds_reset(void)
{
	int keep = 0;
	g_fd_lock = 0;
	for (int i = 0; i < g_runtime_fd_count; i++) {
		struct runtime_fd *r = &g_runtime_fds[i];
		if (r->flags & XS_FD_FORK_SHARED) {
			g_runtime_fds[keep++] = *r;
			continue;
		}
		xs_fd_watch(r->fd, false);
		xs_sys1(SYS_close, r->fd);
		*r->owner = -1;
	}
	g_runtime_fd_count = keep;
}

/* The program cannot close the runtime's descriptors: it never had them,
 * so it gets what closing a number it does not have gets. */
long xs_fd_close(long fd)
{
	if (xs_is_runtime_fd(fd))
		return -EBADF;
	return xs_sys1(SYS_close, fd);
}

/* close_range around the runtime's descriptors. */
static long close_range_around(unsigned long first, unsigned long last, unsigned long flags);

long xs_fd_close_range(unsigned long first, unsigned long last, unsigned long flags)
{
	long r = close_range_around(first, last, flags);
	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
		xs_devfile_closed_range(first, last);	/* those numbers are /dev/exitscope no more */
	return r;
}

static long close_range_around(unsigned long first, unsigned long last, unsigned long flags)
{
	unsigned long from = first;
	if (first > last)
		return xs_sys3(SYS_close_range, first, last, flags);
	for (;;) {
		/* the lowest runtime descriptor in [from, last] */
		unsigned long next = ~0UL;
		for (int i = 0; i < g_runtime_fd_count; i++) {
			long here = xs_runtime_fd_here(g_runtime_fds[i].fd);
			unsigned long fd = (unsigned long)here;
			if (here >= 0 && fd >= from && fd <= last && fd < next)
				next = fd;
		}
		if (next == ~0UL)
			return xs_sys3(SYS_close_range, from, last, flags);
		if (next > from) {
			long r = xs_sys3(SYS_close_range, from, next - 1, flags);
			if (r < 0)
				return r;
		}
		if (next == last)
			return 0;
		from = next + 1;
	}
}

/* dup2/dup3 onto a runtime descriptor: move ours out of the way first,
 * and tell its owner. With no descriptor left to move it to (the program
 * holds them all), the program's call still does what it asked: the
 * runtime loses that descriptor rather than write into the program's. */
long xs_fd_dup_onto(long nr, const long *a)
{
	struct xs_thread *self = xs_self();
	if (a[0] != a[1] && self && self->kind == XS_KIND_VMPROC) {
		sigset_t old;
		fd_lock(&old);
		vm_move(a[1]);
		fd_unlock(&old);
	} else if (a[0] != a[1] && xs_is_runtime_fd(a[1])) {
		sigset_t old;
		fd_lock(&old);
		for (int i = 0; i < g_runtime_fd_count; i++) {
			struct runtime_fd *r = &g_runtime_fds[i];
			if (r->fd != a[1])
				continue;
			long moved = dup_out_of_reach(r->fd, F_DUPFD_CLOEXEC);
			xs_fd_watch(r->fd, false);
			if (moved >= 0) {
				r->fd = (int)moved;
				__atomic_store_n(r->owner, (int)moved, __ATOMIC_RELEASE);
				xs_fd_watch((int)moved, true);
			} else {
				__atomic_store_n(r->owner, -1, __ATOMIC_RELEASE);
				g_runtime_fds[i] = g_runtime_fds[--g_runtime_fd_count];
				lost_warning((int)a[1]);
			}
			break;
		}
		fd_unlock(&old);
	}
	long r = xs_syscall6(nr, a[0], a[1], a[2], 0, 0, 0);
	if (r >= 0 && (xs_fd_watched(a[0]) || xs_fd_watched(a[1])))
		xs_devfile_dup(a[0], r);	/* /dev/exitscope under a new number */
	return r;
}

/* The log, the output directory and the record file go through exec to
 * the new image (their numbers are in its environment). */
/* The record file goes to the new image only from its own process: a vfork
 * child shares our memory, g_record_fd included, but not our pid. */
bool xs_record_fd_is_callers(void)
{
	return g_record_fd >= 0 && g_record_pid == (int)xs_sys0(SYS_getpid);
}

void xs_runtime_fds_for_exec(bool keep)
{
	int fds[5] = { g_config.log_fd, g_dir_fd, xs_record_fd_is_callers() ? g_record_fd : -1, g_run_fd,
		       g_run_cli_fd };
	for (int i = 0; i < 5; i++)
		if (xs_runtime_fd_here(fds[i]) >= 0)
			xs_sys3(SYS_fcntl, xs_runtime_fd_here(fds[i]), F_SETFD, keep ? 0 : FD_CLOEXEC);
}

/* The program's own RLIMIT_NOFILE calls (getrlimit, setrlimit, prlimit64
 * on itself) under fd_lock: they neither see the limit raised for a moment
 * (see the top of the file) nor have their change undone by the restore. */
long xs_fd_rlimit(long nr, const long *a)
{
	bool nofile_self = nr == SYS_prlimit64 ? a[1] == RLIMIT_NOFILE && (a[0] == 0 || a[0] == g_proc->pid)
					       : a[0] == RLIMIT_NOFILE;
	if (!nofile_self)
		return xs_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	sigset_t old;
	fd_lock(&old);
	long r = xs_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	fd_unlock(&old);
	return r;
}
