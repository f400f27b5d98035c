/*
 * The runtime's output: the files in the output directory (records and
 * profiles, opened so that a planted name never redirects a write), the
 * log, and the mmap-backed buffers the runtime formats into.
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

int xs_write_all(int fd, const void *data, size_t size)
{
	const char *p = data;
	while (size) {
		long n = xs_sys3(SYS_write, fd, p, size);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? (int)n : -EIO;
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

/* ---- output files ----
 *
 * Records and profiles are created in the output directory, which may be
 * shared and world-writable (/tmp) while exitscope runs as root: a planted
 * name must never redirect a write. The directory is opened once (so a
 * rename of its path cannot swap it) and every file in it is opened
 * relative to it without following a symlink. A new file is created
 * exclusively; an existing one is used only to append records, and only if
 * it is a regular file with one link, owned by the process's user. The
 * record file is opened once and kept, so records land in the same file
 * after a privilege drop, after the program runs out of descriptors and
 * across exec. */

int g_dir_fd = -1;	/* the output directory (O_PATH) */
int g_record_fd = -1;	/* exitscope-PID.jsonl of this process */
int g_record_pid;	/* the pid g_record_fd is for */

/* Say once per kind (records, profiles) why a file in the output
 * directory was not opened, and what happens instead. */
static void output_failed(const char *name, bool append, const char *why, long err)
{
	static int warned_append, warned_create;
	struct xs_buf b = { .grow = xs_buf_mmap_grow };	/* the path: not on a small stack */
	xs_buf_add(&b, "exitscope: not writing '");
	xs_buf_add(&b, g_config.dir);
	xs_buf_addc(&b, '/');
	xs_buf_add(&b, name);
	xs_buf_add(&b, "': ");
	if (why) {
		xs_buf_add(&b, why);
	} else {
		xs_buf_add(&b, "error ");
		xs_buf_u64(&b, (uint64_t)-err, 0);
	}
	xs_buf_add(&b, append ? "; the records are kept in memory and tried again at each window\n"
			      : "; profiling stops, the stats go on\n");
	xs_buf_addc(&b, 0);
	if (!b.failed)
		xs_warn_once(append ? &warned_append : &warned_create, b.data);
	xs_buf_mmap_free(&b);
}

/* Check an existing file opened for appending: NULL if it may be used,
 * else why not. */
static const char *check_existing(long fd)
{
	struct stat st;
	if (xs_sys2(SYS_fstat, fd, &st) < 0)
		return "cannot stat it";
	if (!S_ISREG(st.st_mode))
		return "it exists and is not a regular file";
	if (st.st_uid != (uid_t)xs_sys0(SYS_geteuid))
		return "it exists and belongs to another user";
	if (st.st_nlink != 1)
		return "it exists and has more than one link";
	return NULL;
}

int xs_output_open(const char *name, bool append, mode_t mode)
{
	const char *why = NULL;
	int dir = g_dir_fd >= 0 ? g_dir_fd : AT_FDCWD;
	long flags = O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | (append ? O_APPEND : 0);
	long fd = xs_fd_make(SYS_openat, dir, name, flags | O_CREAT | O_EXCL, mode);
	if (fd == -EEXIST && append) {
		/* O_NONBLOCK: a planted FIFO must not block the open */
		fd = xs_fd_make(SYS_openat, dir, name, flags | O_NONBLOCK, 0);
		if (fd >= 0 && (why = check_existing(fd)) != NULL)
			xs_sys1(SYS_close, fd);
		else if (fd >= 0)
			xs_sys3(SYS_fcntl, fd, F_SETFL, O_WRONLY | O_APPEND);
		else if (fd == -ELOOP)
			why = "it is a symbolic link";
		else if (fd == -ENXIO)
			why = "it exists and is not a regular file";
	} else if (fd == -EEXIST) {
		why = "it exists already (exitscope never overwrites a file)";
	}
	if (fd >= 0 && !why)
		return (int)fd;
	output_failed(name, append, why, fd);
	return why ? -EPERM : (int)fd;
}

static int record_name(char *name, size_t size, int pid)
{
	struct xs_buf b = { name, 0, size, false, NULL };
	xs_buf_add(&b, "exitscope-");
	xs_buf_u64(&b, (uint64_t)pid, 0);
	xs_buf_add(&b, ".jsonl");
	xs_buf_addc(&b, 0);
	return b.failed ? -ENAMETOOLONG : 0;
}

/* Append data whole or not at all: a failed write is cut back off. */
static int append_whole(long fd, const char *data, size_t len)
{
	struct stat st;
	long r = xs_sys2(SYS_fstat, fd, &st);
	if (r < 0)
		return (int)r;
	r = xs_write_all((int)fd, data, len);
	if (r < 0)
		xs_sys2(SYS_ftruncate, fd, st.st_size);
	return (int)r;
}

int xs_record_open(void)
{
	char name[64];
	int pid = g_proc->pid;
	if (g_config.no_records)
		return 0;
	if (g_record_fd >= 0 && g_record_pid == pid)
		return 0;
	xs_runtime_fd_close(&g_record_fd);
	record_name(name, sizeof(name), pid);
	int fd = xs_runtime_fd_adopt(xs_output_open(name, true, 0644), &g_record_fd, 0);
	if (fd < 0)
		return fd;
	g_record_pid = pid;
	return 0;
}

int xs_append_record(int pid, const char *data, size_t len)
{
	if (g_config.no_records)
		return 0;	/* the log has it */
	if (pid == g_proc->pid) {
		int r = xs_record_open();	/* a refused file is tried again */
		return r < 0 ? r : append_whole(g_record_fd, data, len);
	}
	/* a vfork child's own record, written once */
	char name[64];
	record_name(name, sizeof(name), pid);
	long fd = xs_output_open(name, true, 0644);
	if (fd < 0)
		return (int)fd;
	int r = append_whole(fd, data, len);
	xs_sys1(SYS_close, fd);
	return r;
}

void xs_log_buf(const char *data, size_t len)
{
	if (g_config.log_fd >= 0)
		xs_write_all(g_config.log_fd, data, len);
}

void xs_log(const char *msg)
{
	xs_log_buf(msg, strlen(msg));
}

void xs_warn_once(int *flag, const char *msg)
{
	if (__atomic_exchange_n(flag, 1, __ATOMIC_RELAXED))
		return;
	xs_log(msg);
}

int xs_buf_mmap_grow(struct xs_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap * 2 : 65536;
	while (cap < need)
		cap *= 2;
	long p;
	if (b->data)
		p = xs_sys4(SYS_mremap, b->data, b->cap, cap, MREMAP_MAYMOVE);
	else
		p = xs_syscall6(SYS_mmap, 0, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((unsigned long)p > -4096UL)
		return (int)p;
	b->data = (char *)p;
	b->cap = cap;
	return 0;
}

void xs_buf_mmap_free(struct xs_buf *b)
{
	if (b->data)
		xs_sys2(SYS_munmap, b->data, b->cap);
	b->data = NULL;
	b->len = b->cap = 0;
}

/*
 * Buffers that every boundary on demand takes and gives back (a control
 * connection's answer, a run-wide window's lists) stay mapped when given
 * back, for the next one. mmap, mremap and munmap take the process's
 * mmap lock for writing, and a program that makes threads or forks under
 * CPU contention holds it for long stretches: t130's stress (64 threads
 * coming and going, forks, two CPU hogs) kept the service thread waiting
 * in mmap and munmap for 1 to 3 s at a time, and the dump commands queued
 * behind it. A fork child inherits the pool (its own copies) with its
 * lock free (the process arena comes back zeroed).
 */
#define POOL_MAX 8
static struct { char *data; size_t cap; } g_pool[POOL_MAX];

int xs_buf_pool_grow(struct xs_buf *b, size_t need)
{
	if (!b->data) {
		sigset_t old;
		xs_lock_blocked(&g_proc->pool_lock, &old);
		for (int i = 0; i < POOL_MAX; i++)
			if (g_pool[i].data && g_pool[i].cap >= need) {
				b->data = g_pool[i].data;
				b->cap = g_pool[i].cap;
				g_pool[i].data = NULL;
				break;
			}
		xs_unlock_blocked(&g_proc->pool_lock, &old);
		if (b->data)
			return 0;
	}
	return xs_buf_mmap_grow(b, need);
}

void xs_buf_pool_release(struct xs_buf *b)
{
	if (!b->data)
		return;
	sigset_t old;
	xs_lock_blocked(&g_proc->pool_lock, &old);
	for (int i = 0; i < POOL_MAX; i++)
		if (!g_pool[i].data) {
			g_pool[i].data = b->data;
			g_pool[i].cap = b->cap;
			b->data = NULL;
			break;
		}
	xs_unlock_blocked(&g_proc->pool_lock, &old);
	xs_buf_mmap_free(b);	/* the pool is full */
}

