/*
 * /dev/exitscope, emulated: it exists only for a program running under
 * exitscope. Opening it gives a real descriptor (of /dev/null, so that
 * fstat, poll and fcntl behave) whose reads and writes the runtime serves:
 *   write "dump [LABEL]\n" or "reset\n": close a window now (reason "app");
 *     the window holds exactly the calls the program issued before the write;
 *     anything else: EINVAL, nothing changes;
 *   read: the live counters as one JSON object (like a /proc file: read to
 *     EOF, and the next read starts a fresh snapshot).
 * The file's own traffic (open, read, write, close) is not counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include "runtime/runtime.h"

#define MAX_OPEN 16
static const char g_path[] = "/dev/exitscope";

struct devfile {
	int fd;			/* -1: unused */
	struct xs_buf out;	/* the JSON being read */
	size_t pos;
};

static struct devfile g_files[MAX_OPEN] = {
	[0 ... MAX_OPEN - 1] = { .fd = -1 },
};
/* The table's lock lives in the process arena, which a fork child gets
 * zeroed: a child forked while another thread held it must not inherit it
 * held (it would spin forever, with every signal blocked). */
static void lock(sigset_t *old)
{
	xs_lock_blocked(&g_proc->devfile_lock, old);
}

static void unlock(const sigset_t *old)
{
	xs_unlock_blocked(&g_proc->devfile_lock, old);
}

static struct devfile *find(long fd)
{
	for (int i = 0; i < MAX_OPEN; i++)
		if (g_files[i].fd == fd)
			return &g_files[i];
	return NULL;
}

/* (No memcmp: the fast entry calls this with the program's vector
 * registers live, and glibc's memcmp uses them.) */
bool xs_devfile_path(const char *user_path)
{
	char path[sizeof(g_path)];
	if (!user_path || xs_copy_user(path, user_path, sizeof(path)) < 0)
		return false;
	for (size_t i = 0; i < sizeof(path); i++)
		if (path[i] != g_path[i])
			return false;
	return true;
}

bool xs_devfile_owns(long fd)
{
	return find(fd) != NULL;
}

long xs_devfile_open(long flags)
{
	sigset_t old;
	long fd = xs_sys4(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | (flags & O_CLOEXEC), 0);
	if (fd < 0)
		return fd;
	lock(&old);
	struct devfile *f = find(-1);
	if (f) {
		f->fd = (int)fd;
		f->out = (struct xs_buf){ .grow = xs_buf_mmap_grow };
		f->pos = 0;
		xs_fd_watch((int)fd, true);
	}
	unlock(&old);
	if (!f) {
		xs_sys1(SYS_close, fd);
		return -EMFILE;
	}
	return fd;
}

static bool valid_command(const char *line)
{
	return !strcmp(line, "reset") || !strcmp(line, "dump") || !strncmp(line, "dump ", 5) ||
	       (g_run_fd >= 0 && (!strcmp(line, "run-reset") || !strcmp(line, "run-dump") ||
				  !strncmp(line, "run-dump ", 9)));
}

/* A write: one or more command lines, all valid or none run. */
static long write_commands(const char *user, size_t n)
{
	char buf[512];
	if (n >= sizeof(buf))
		return -EINVAL;
	if (xs_copy_user(buf, user, n) < 0)
		return -EFAULT;
	buf[n] = 0;
	if (memchr(buf, 0, n))
		return -EINVAL;
	char *lines[64];
	int count = 0;
	for (char *line = buf; *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = 0;
		if (*line) {
			if (count == 64 || !valid_command(line))
				return -EINVAL;
			lines[count++] = line;
		}
		if (!end)
			break;
		line = end + 1;
	}
	if (!count)
		return -EINVAL;
	for (int i = 0; i < count; i++) {
		sigset_t old;
		xs_block_all_signals(&old);
		/* a record that could not be written yet is kept and retried:
		 * the window did close */
		if (!strncmp(lines[i], "run-", 4))
			xs_run_window(lines[i][8] == ' ' ? lines[i] + 9 : NULL, lines[i][4] == 'r');
		else
			xs_control_command(lines[i], "app", NULL);
		xs_restore_signals(&old);
	}
	return (long)n;
}

/* The live counters as JSON into out (window lock held). */
static long format_live(void *out)
{
	struct xs_buf *b = out;
	struct xs_window *w = xs_window_collect(NULL, "live", NULL, NULL);
	if (w)
		xs_window_format(w, b, NULL);
	xs_window_free(w);
	return !w || b->failed ? -ENOMEM : 0;
}

static long read_live(struct devfile *f, char *user, size_t n)
{
	if (f->pos == f->out.len) {
		if (f->out.len) {
			/* EOF; the next read starts again */
			f->out.len = f->pos = 0;
			return 0;
		}
		xs_window_lock();
		long r = xs_on_boundary_stack(format_live, &f->out);
		xs_window_unlock();
		if (r < 0)
			return r;
	}
	size_t left = f->out.len - f->pos;
	if (n > left)
		n = left;
	if (xs_copy_user(user, f->out.data + f->pos, n) < 0)
		return -EFAULT;
	f->pos += n;
	return (long)n;
}

/* Forget fd's entry (table lock held). */
static void forget(struct devfile *f)
{
	xs_fd_watch(f->fd, false);
	xs_buf_mmap_free(&f->out);
	f->fd = -1;
}

/*
 * The file under a new number: a shell's `echo dump > /dev/exitscope`
 * opens it, dup2's it onto 1 and closes the original before it writes, so
 * the copy is the file too. And a number that dup2/dup3 replaced, or that
 * close_range closed, is the file no more.
 */
void xs_devfile_dup(long from, long to)
{
	if (to < 0 || from == to)
		return;
	sigset_t old;
	lock(&old);
	struct devfile *t = find(to), *f = NULL;
	if (t)
		forget(t);
	if (find(from) && (f = find(-1))) {
		f->fd = (int)to;
		f->out = (struct xs_buf){ .grow = xs_buf_mmap_grow };
		f->pos = 0;
		xs_fd_watch((int)to, true);
	}
	unlock(&old);
}

void xs_devfile_closed_range(unsigned long first, unsigned long last)
{
	sigset_t old;
	lock(&old);
	for (int i = 0; i < MAX_OPEN; i++)
		if (g_files[i].fd >= 0 && (unsigned long)g_files[i].fd >= first && (unsigned long)g_files[i].fd <= last)
			forget(&g_files[i]);
	unlock(&old);
}

long xs_devfile_call(long nr, const long *a)
{
	sigset_t old;
	long r;
	switch (nr) {
	case SYS_dup:
		r = xs_sys1(SYS_dup, a[0]);
		xs_devfile_dup(a[0], r);
		return r;
	case SYS_fcntl:
		r = xs_syscall6(nr, a[0], a[1], a[2], 0, 0, 0);
		if (a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC)
			xs_devfile_dup(a[0], r);
		return r;
	case SYS_write:
		return write_commands((const char *)a[1], (size_t)a[2]);
	case SYS_read:
		lock(&old);
		struct devfile *f = find(a[0]);
		r = f ? read_live(f, (char *)a[1], (size_t)a[2]) : -EBADF;
		unlock(&old);
		return r;
	case SYS_close:
		lock(&old);
		f = find(a[0]);
		if (f)
			forget(f);
		unlock(&old);
		return xs_sys1(SYS_close, a[0]);
	}
	/* anything else acts on the /dev/null behind it */
	return xs_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
