/*
 * The runtime's own file descriptors: the program may not see, close or
 * replace them (they sit high, are close-on-exec, and the program's close,
 * close_range, dup2 and dup3 are emulated around them); the log, the
 * output directory and the record file go through exec to the new image.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "runtime/runtime.h"

/* Runtime descriptors sit high, out of the way of the program's lowest-free
 * allocation. */
long xs_high_fd_base(void)
{
	struct rlimit rl;
	if (xs_sys2(SYS_getrlimit, RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < 64)
		return 3;
	return rl.rlim_cur > 1024 ? 1000 : (long)rl.rlim_cur - 24;
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

uint64_t g_fd_watch[16];
/* the log, the output directory, the record file, the task directory, a
 * profile, the service thread's (socket, spare, timer, eventfd, up to 12
 * control connections: control.c) */
static int g_runtime_fds[32];
static int g_runtime_fd_count;

void xs_fd_watch(int fd, bool on)
{
	if (fd < 0 || fd >= 1024)
		return;
	if (on)
		__atomic_or_fetch(&g_fd_watch[fd >> 6], 1ULL << (fd & 63), __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&g_fd_watch[fd >> 6], ~(1ULL << (fd & 63)), __ATOMIC_RELAXED);
}

bool xs_is_runtime_fd(long fd)
{
	for (int i = 0; i < g_runtime_fd_count; i++)
		if (g_runtime_fds[i] == fd)
			return true;
	return false;
}

int xs_runtime_fd_adopt(long fd)
{
	if (fd < 0)
		return (int)fd;
	long high = xs_sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, xs_high_fd_base());
	xs_sys1(SYS_close, fd);
	if (high >= 0)
		xs_runtime_fd_add((int)high);
	return (int)high;
}

void xs_runtime_fd_add(int fd)
{
	if (g_runtime_fd_count < (int)(sizeof(g_runtime_fds) / sizeof(g_runtime_fds[0])))
		g_runtime_fds[g_runtime_fd_count++] = fd;
	xs_fd_watch(fd, true);
}

void xs_runtime_fd_forget(int fd)
{
	for (int i = 0; i < g_runtime_fd_count; i++)
		if (g_runtime_fds[i] == fd) {
			g_runtime_fds[i] = g_runtime_fds[--g_runtime_fd_count];
			xs_fd_watch(fd, false);
			return;
		}
}

/* A runtime descriptor moved out of the way of the program's dup2. */
static void runtime_fd_moved(int from, int to)
{
	for (int i = 0; i < g_runtime_fd_count; i++)
		if (g_runtime_fds[i] == from)
			g_runtime_fds[i] = to;
	if (g_config.log_fd == from)
		g_config.log_fd = to;
	if (g_dir_fd == from)
		g_dir_fd = to;
	if (g_record_fd == from)
		g_record_fd = to;
	if (g_config.exe_fd == from)
		g_config.exe_fd = to;
	xs_fd_watch(from, false);
	xs_fd_watch(to, true);
}

/* In a fork child the runtime's descriptors are the parent's copies: the
 * log, the output directory, the run file and the program's executable
 * (emulate/self_exe.c) are shared, the rest is closed (the child
 * opens its own record file and service descriptors). */
void xs_runtime_fds_reset(void)
{
	int keep = 0;
	g_record_fd = -1;
	for (int i = 0; i < g_runtime_fd_count; i++) {
		if (g_runtime_fds[i] == g_config.log_fd || g_runtime_fds[i] == g_dir_fd ||
		    g_runtime_fds[i] == g_run_fd || g_runtime_fds[i] == g_run_cli_fd ||
		    g_runtime_fds[i] == g_config.exe_fd) {
			g_runtime_fds[keep++] = g_runtime_fds[i];
			continue;
		}
		xs_fd_watch(g_runtime_fds[i], false);
		xs_sys1(SYS_close, g_runtime_fds[i]);
	}
	g_runtime_fd_count = keep;
}

/* The program cannot close the runtime's descriptors; it is told it did. */
long xs_fd_close(long fd)
{
	if (xs_is_runtime_fd(fd))
		return 0;
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
			unsigned long fd = (unsigned long)g_runtime_fds[i];
			if (fd >= from && fd <= last && fd < next)
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

/* dup2/dup3 onto a runtime descriptor: move ours out of the way first. */
long xs_fd_dup_onto(long nr, const long *a)
{
	if (xs_is_runtime_fd(a[1]) && a[0] != a[1]) {
		long moved = xs_sys3(SYS_fcntl, a[1], F_DUPFD_CLOEXEC, xs_high_fd_base());
		if (moved >= 0)
			runtime_fd_moved((int)a[1], (int)moved);
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
		if (fds[i] >= 0)
			xs_sys3(SYS_fcntl, fds[i], F_SETFD, keep ? 0 : FD_CLOEXEC);
}
