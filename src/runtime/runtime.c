/*
 * Start-up and the runtime's dealings with the outside: its configuration
 * (environment variables set by `exitscope run`, removed before the program
 * sees its environment), the log, the record files, the runtime's own file
 * descriptors (which the program may not close or replace), and the
 * environment an exec passes on, so that the runtime follows the program
 * into every image even when the program drops LD_PRELOAD.
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

struct xs_config g_config = { .log_fd = -1 };

#define ENV_PREFIX "EXITSCOPE_"

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

static int g_dir_fd = -1;	/* the output directory (O_PATH) */
static int g_record_fd = -1;	/* exitscope-PID.jsonl of this process */
static int g_record_pid;	/* the pid g_record_fd is for */

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
	long fd = xs_sys4(SYS_openat, dir, name, flags | O_CREAT | O_EXCL, mode);
	if (fd == -EEXIST && append) {
		/* O_NONBLOCK: a planted FIFO must not block the open */
		fd = xs_sys4(SYS_openat, dir, name, flags | O_NONBLOCK, 0);
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
	if (g_record_fd >= 0) {
		xs_runtime_fd_forget(g_record_fd);
		xs_sys1(SYS_close, g_record_fd);
		g_record_fd = -1;
	}
	record_name(name, sizeof(name), pid);
	int fd = xs_runtime_fd_adopt(xs_output_open(name, true, 0644));
	if (fd < 0)
		return fd;
	g_record_fd = fd;
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

/* ---- the runtime's file descriptors ---- */

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
	xs_fd_watch(from, false);
	xs_fd_watch(to, true);
}

/* In a fork child the runtime's descriptors are the parent's copies: the
 * log and the output directory are shared, the rest is closed (the child
 * opens its own record file and service descriptors). */
void xs_runtime_fds_reset(void)
{
	int keep = 0;
	g_record_fd = -1;
	for (int i = 0; i < g_runtime_fd_count; i++) {
		if (g_runtime_fds[i] == g_config.log_fd || g_runtime_fds[i] == g_dir_fd) {
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
long xs_fd_close_range(unsigned long first, unsigned long last, unsigned long flags)
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
	return xs_syscall6(nr, a[0], a[1], a[2], 0, 0, 0);
}

/* The log, the output directory and the record file go through exec to
 * the new image (their numbers are in its environment). */
/* The record file goes to the new image only from its own process: a vfork
 * child shares our memory, g_record_fd included, but not our pid. */
static bool record_fd_is_callers(void)
{
	return g_record_fd >= 0 && g_record_pid == (int)xs_sys0(SYS_getpid);
}

void xs_runtime_fds_for_exec(bool keep)
{
	int fds[3] = { g_config.log_fd, g_dir_fd, record_fd_is_callers() ? g_record_fd : -1 };
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			xs_sys3(SYS_fcntl, fds[i], F_SETFD, keep ? 0 : FD_CLOEXEC);
}

/* ---- the environment of an exec ---- */

static long user_byte(const char *p, char *c)
{
	return xs_copy_user(c, p, 1);
}

/* Does the program's string s start with prefix? */
static bool user_has_prefix(const char *s, const char *prefix)
{
	for (; *prefix; prefix++, s++) {
		char c;
		if (user_byte(s, &c) < 0 || c != *prefix)
			return false;
	}
	return true;
}

/* Append the program's string s (up to its NUL) to b. */
static long user_append(struct xs_buf *b, const char *s)
{
	for (size_t n = 0; n < (1u << 20); n++) {
		char c;
		if (user_byte(s + n, &c) < 0)
			return -EFAULT;
		if (!c)
			return 0;
		xs_buf_addc(b, c);
	}
	return -E2BIG;
}

static void add_var(struct xs_buf *b, const char *name, const char *value)
{
	xs_buf_add(b, name);
	xs_buf_addc(b, '=');
	xs_buf_add(b, value);
	xs_buf_addc(b, 0);
}

static void add_var_u64(struct xs_buf *b, const char *name, uint64_t value)
{
	xs_buf_add(b, name);
	xs_buf_addc(b, '=');
	xs_buf_u64(b, value, 0);
	xs_buf_addc(b, 0);
}

/*
 * Build the environment for an exec: the program's, without any LD_PRELOAD
 * or EXITSCOPE_ variable, plus ours. *out points into store (pointer array
 * first, then our strings); the program's strings are used in place.
 */
int xs_exec_env(const long *envp_user, char ***out, struct xs_buf *store, int handoff_fd, uint64_t sigmask)
{
	enum { OURS = 15 };
	long n = 0;
	long ptr;
	const char *preload = NULL;

	if (envp_user) {
		for (;; n++) {
			if (xs_copy_user(&ptr, envp_user + n, sizeof(ptr)) < 0)
				return -EFAULT;
			if (!ptr)
				break;
			if (!preload && user_has_prefix((const char *)ptr, "LD_PRELOAD="))
				preload = (const char *)ptr + strlen("LD_PRELOAD=");
		}
	}
	size_t array_size = (size_t)(n + OURS + 1) * sizeof(char *);
	if (store->cap < array_size && xs_buf_mmap_grow(store, array_size) < 0)
		return -ENOMEM;
	store->len = array_size;

	/* our strings, as offsets until the store stops moving */
	size_t offs[OURS];
	int k = 0;
	offs[k++] = store->len;
	xs_buf_add(store, "LD_PRELOAD=");
	xs_buf_add(store, g_config.lib);
	if (preload) {
		xs_buf_addc(store, ':');
		if (user_append(store, preload) < 0)
			return -EFAULT;
		xs_buf_addc(store, 0);
		offs[k++] = store->len;
		xs_buf_add(store, ENV_PREFIX "PRELOAD_ORIG=");
		user_append(store, preload);
	}
	xs_buf_addc(store, 0);
	offs[k++] = store->len;
	add_var(store, ENV_PREFIX "LIB", g_config.lib);
	offs[k++] = store->len;
	add_var(store, ENV_PREFIX "DIR", g_config.dir);
	offs[k++] = store->len;
	add_var(store, ENV_PREFIX "FORMAT",
		g_config.format == XS_FORMAT_TEXT ? "text" : g_config.format == XS_FORMAT_GRAMINE ? "gramine" : "none");
	offs[k++] = store->len;
	if (g_config.log_fd >= 0)
		add_var_u64(store, ENV_PREFIX "LOG_FD", (uint64_t)g_config.log_fd);
	else
		add_var(store, ENV_PREFIX "LOG_FD", "none");
	offs[k++] = store->len;
	if (g_config.no_records)
		add_var(store, ENV_PREFIX "RECORDS", "off");
	else
		add_var_u64(store, ENV_PREFIX "DIR_FD", (uint64_t)g_dir_fd);
	if (record_fd_is_callers()) {
		offs[k++] = store->len;
		add_var_u64(store, ENV_PREFIX "RECORD_FD", (uint64_t)g_record_fd);
	}
	if (handoff_fd >= 0) {
		offs[k++] = store->len;
		add_var_u64(store, ENV_PREFIX "HANDOFF", (uint64_t)handoff_fd);
	}
	offs[k++] = store->len;
	add_var_u64(store, ENV_PREFIX "SIGMASK", sigmask);
	offs[k++] = store->len;
	add_var_u64(store, ENV_PREFIX "SIGNAL", (uint64_t)g_config.signal);
	offs[k++] = store->len;
	add_var_u64(store, ENV_PREFIX "INTERVAL", g_config.interval_ms);
	offs[k++] = store->len;
	add_var(store, ENV_PREFIX "PROFILE",
		(const char *[]){ "off", "none", "fp", "dwarf" }[g_config.profile]);
	offs[k++] = store->len;
	add_var_u64(store, ENV_PREFIX "FREQUENCY", g_config.frequency);
	if (store->failed)
		return -ENOMEM;

	char **env = (char **)store->data;
	long j = 0;
	for (long i = 0; i < n; i++) {
		xs_copy_user(&ptr, envp_user + i, sizeof(ptr));
		const char *s = (const char *)ptr;
		if (user_has_prefix(s, "LD_PRELOAD=") || user_has_prefix(s, ENV_PREFIX))
			continue;
		env[j++] = (char *)s;
	}
	for (int i = 0; i < k; i++)
		env[j++] = store->data + offs[i];
	env[j] = NULL;
	*out = env;
	return 0;
}

/* ---- start-up ---- */

static void copy_env(char *dst, size_t size, const char *name)
{
	const char *v = getenv(name);
	dst[0] = 0;
	if (v && strlen(v) < size)
		strcpy(dst, v);
}

static void read_config(void)
{
	const char *v;
	copy_env(g_config.lib, sizeof(g_config.lib), ENV_PREFIX "LIB");
	copy_env(g_config.dir, sizeof(g_config.dir), ENV_PREFIX "DIR");
	copy_env(g_config.preload_orig, sizeof(g_config.preload_orig), ENV_PREFIX "PRELOAD_ORIG");
	g_config.have_preload_orig = getenv(ENV_PREFIX "PRELOAD_ORIG") != NULL;
	if (!g_config.dir[0] && !getcwd(g_config.dir, sizeof(g_config.dir)))
		strcpy(g_config.dir, ".");
	v = getenv(ENV_PREFIX "SIGNAL");
	g_config.signal = v ? (int)strtol(v, NULL, 10) : SIGUSR1;
	if (g_config.signal < 0 || g_config.signal > 64 || g_config.signal == SIGKILL ||
	    g_config.signal == SIGSTOP || g_config.signal == SIGSYS)
		g_config.signal = 0;
	g_ctl_sig = g_config.signal;
	v = getenv(ENV_PREFIX "PROFILE");
	g_config.profile = !v || !*v || !strcmp(v, "off") ? XS_PROFILE_OFF
			 : !strcmp(v, "fp")		  ? XS_PROFILE_FP
			 : !strcmp(v, "none")		  ? XS_PROFILE_NONE : XS_PROFILE_DWARF;
	v = getenv(ENV_PREFIX "FREQUENCY");
	g_config.frequency = v ? (uint32_t)strtoul(v, NULL, 10) : 0;
	if (g_config.frequency < 1 || g_config.frequency > 100000)
		g_config.frequency = XS_DEFAULT_FREQUENCY;
	v = getenv(ENV_PREFIX "INTERVAL");
	g_config.interval_ms = v ? strtoull(v, NULL, 10) : 0;
	v = getenv(ENV_PREFIX "FORMAT");
	g_config.format = !v || !strcmp(v, "text") ? XS_FORMAT_TEXT
			: !strcmp(v, "gramine")     ? XS_FORMAT_GRAMINE : XS_FORMAT_NONE;
	/* the log: stderr as the program starts, or a descriptor that
	 * `exitscope run --log` or the previous image opened */
	v = getenv(ENV_PREFIX "LOG_FD");
	if (!v || strcmp(v, "none") != 0) {
		long fd = v ? strtol(v, NULL, 10) : 2;
		g_config.log_fd = (int)xs_sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, xs_high_fd_base());
		if (v && fd != 2 && g_config.log_fd >= 0)
			xs_sys1(SYS_close, fd);
		if (g_config.log_fd >= 0)
			xs_runtime_fd_add(g_config.log_fd);
	}
	v = getenv(ENV_PREFIX "RECORDS");
	g_config.no_records = v && !strcmp(v, "off");
	if (g_config.no_records)
		g_config.profile = XS_PROFILE_OFF;	/* profiles are files too */
	v = getenv(ENV_PREFIX "DIR_FD");
	if (v && !g_config.no_records)
		g_dir_fd = xs_runtime_fd_adopt(strtol(v, NULL, 10));
	else if (!g_config.no_records)
		g_dir_fd = xs_runtime_fd_adopt(xs_sys4(SYS_openat, AT_FDCWD, g_config.dir,
						       O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
	v = getenv(ENV_PREFIX "RECORD_FD");
	if (v) {
		/* same pid: the previous image's file (see xs_record_open) */
		g_record_fd = xs_runtime_fd_adopt(strtol(v, NULL, 10));
		g_record_pid = (int)xs_sys0(SYS_getpid);
	}
	if (!g_config.lib[0]) {
		/* preloaded by hand: find ourselves, to follow execs */
		Dl_info info;
		if (dladdr((void *)read_config, &info) && info.dli_fname &&
		    strlen(info.dli_fname) < sizeof(g_config.lib))
			strcpy(g_config.lib, info.dli_fname);
	}
}

/* Leave the program the environment it would have had without us. This
 * edits environ in place rather than calling unsetenv/setenv, which some
 * programs (bash) replace with their own.
 *
 * environ is the array on the initial stack, and the auxiliary vector
 * follows its terminating NULL. Removing entries ends the array earlier;
 * a program that finds the auxv by walking past envp (Go does) would then
 * read the stale slots as auxv pairs and miss AT_PAGESZ ("failed to get
 * system page size"). So the freed slots are zeroed: such a reader finds
 * an empty auxv at once (Go then reads /proc/self/auxv), while glibc keeps
 * the auxv address it took at start-up. */
static void clean_environment(void)
{
	static char preload_var[sizeof("LD_PRELOAD=") + sizeof(g_config.preload_orig)];
	char **out = environ;
	if (!environ)
		return;
	for (char **e = environ; *e; e++) {
		if (!strncmp(*e, ENV_PREFIX, strlen(ENV_PREFIX)))
			continue;
		if (!strncmp(*e, "LD_PRELOAD=", strlen("LD_PRELOAD=")) && g_config.lib[0]) {
			if (!g_config.have_preload_orig)
				continue;
			strcpy(preload_var, "LD_PRELOAD=");
			strcat(preload_var, g_config.preload_orig);
			*out++ = preload_var;
			continue;
		}
		*out++ = *e;
	}
	char **end = out;
	while (*end)	/* up to the old terminator: the freed slots */
		end++;
	while (out <= end)
		*out++ = NULL;
}

/* The window that the exec closed, handed over by the old image. */
static void take_handoff(void)
{
	const char *v = getenv(ENV_PREFIX "HANDOFF");
	if (!v)
		return;
	int fd = (int)strtol(v, NULL, 10);
	struct xs_handoff_header hdr;
	struct xs_buf json = { .grow = xs_buf_mmap_grow }, text = { .grow = xs_buf_mmap_grow };
	long off = 0;
	if (xs_sys4(SYS_pread64, fd, &hdr, sizeof(hdr), off) != sizeof(hdr) || hdr.magic != XS_HANDOFF_MAGIC)
		goto out;
	off += sizeof(hdr);
	if (xs_sys4(SYS_pread64, fd, &g_proc->base_total, sizeof(g_proc->base_total), off) !=
	    sizeof(g_proc->base_total))
		goto out;
	off += sizeof(g_proc->base_total);
	if (xs_buf_mmap_grow(&json, hdr.json_size + 1) < 0 || xs_buf_mmap_grow(&text, hdr.text_size + 1) < 0)
		goto out;
	if (xs_sys4(SYS_pread64, fd, json.data, hdr.json_size, off) != (long)hdr.json_size)
		goto out;
	off += (long)hdr.json_size;
	if (xs_sys4(SYS_pread64, fd, text.data, hdr.text_size, off) != (long)hdr.text_size)
		goto out;
	g_proc->seq = (uint32_t)hdr.next_seq;
	if (xs_append_record(g_proc->pid, json.data, hdr.json_size) < 0)
		xs_log("exitscope: cannot write the stats record of the exec\n");
	xs_log_buf(text.data, hdr.text_size);
out:
	xs_buf_mmap_free(&json);
	xs_buf_mmap_free(&text);
	xs_sys1(SYS_close, fd);
}

/* After an exec the old image kept every signal blocked through it; the
 * program's own mask came along in the environment. */
static void restore_program_mask(const char *mask)
{
	if (!mask)
		return;
	uint64_t m = strtoull(mask, NULL, 10) & ~XS_SIGBIT(SIGSYS);
	xs_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &m, NULL, 8);
}

__attribute__((constructor)) static void xs_start(void)
{
	const char *mask = getenv(ENV_PREFIX "SIGMASK");
	const char *failure = NULL;

	read_config();
	if (xs_counters_init() < 0) {
		failure = "exitscope: cannot map the counters; the program runs unobserved\n";
		goto out;
	}
	xs_record_open();	/* a refusal is on the log; records wait in memory */
	take_handoff();
	clean_environment();
	if (xs_signals_init() < 0) {
		failure = "exitscope: cannot install the SIGSYS handler; the program runs unobserved\n";
		goto out;
	}
	restore_program_mask(mask);
	mask = NULL;
	if (xs_profile_init() < 0) {
		g_config.profile = XS_PROFILE_OFF;
		xs_log("exitscope: cannot set up the profiler; the stats go on without it\n");
	}
	struct xs_thread *t = xs_thread_alloc(XS_KIND_THREAD, g_proc->pid);
	if (t) {
		/* the control signal waits for the service thread's ppoll;
		 * threads and fork children inherit the mask */
		g_ctl_sig = g_config.signal;
		xs_sig_ctl_block(t);
		xs_sig_altstack_adopt(xs_slot_index(t));	/* before the runtime's replaces it */
	}
	if (!t || xs_thread_activate(t) < 0) {
		failure = "exitscope: cannot turn on Syscall User Dispatch; the program runs unobserved\n";
		goto out;
	}
	if (xs_windows_init() < 0 || xs_creds_init() < 0 || xs_control_start() < 0)
		failure = "exitscope: cannot start the service thread; windows close only at exit\n";
out:
	restore_program_mask(mask);
	if (failure)
		xs_log(failure);
}
