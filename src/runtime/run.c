/*
 * The run: what this process tells the run file (run.jsonl in the run
 * directory, DESIGN.md §3.11) and the run-wide windows it closes from
 * inside (/dev/exitscope "run-dump [LABEL]", "run-reset").
 *
 * `exitscope run` creates the run file and hands its descriptor down
 * (EXITSCOPE_RUN=FD:NAME); every image and fork child of the run appends to
 * that one descriptor (O_APPEND), each line in one write: a process's start
 * (or the exec of a new image), and its end. The descriptor is kept from
 * the start, like the record file, so lines land after a privilege drop and
 * when the program holds every descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "common/runfile.h"
#include "common/runwin.h"
#include "runtime/runtime.h"

#define LINE_MAX_SIZE 4000	/* a line is written whole, in one call */

int g_run_fd = -1;
int g_run_cli_fd = -1;		/* the exitscope binary (O_PATH), for the run's summary */
static char g_run_name[64];
static int g_run_root;		/* the run's first pid: it prints the run's summary */
static bool g_run_log_each;	/* run --log-each: every process's blocks on the log too */
static char g_run_dir[PATH_MAX];	/* the run directory, absolute */
static bool g_run_after_exec;	/* this image came from an exec of the run */
static bool g_run_image_said;	/* this image's start or exec line is written */
static int g_exit_status = -1;	/* exit_group's or the last thread's status, until the end */
static int g_exit_signal;	/* the signal the process dies of, once the runtime knows */

/* One number of EXITSCOPE_RUN, and the ':' after it. */
static const char *env_number(const char *p, long *out)
{
	const char *start = p;
	long v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	*out = v;
	return p == start || *p != ':' ? NULL : p + 1;
}

/* EXITSCOPE_RUN=FD:NAME:ROOT:EACH:CLIFD:DIR (DIR last: it may hold a ':') */
void xs_run_config(const char *env, bool after_exec)
{
	if (!env || g_config.no_records)
		return;
	long fd, root, each, cli;
	const char *p = env_number(env, &fd), *colon = p ? strchr(p, ':') : NULL;
	if (!p || !colon || (size_t)(colon - p) >= sizeof(g_run_name))
		return;
	memcpy(g_run_name, p, (size_t)(colon - p));
	g_run_name[colon - p] = 0;
	p = env_number(colon + 1, &root);
	p = p ? env_number(p, &each) : NULL;
	p = p ? env_number(p, &cli) : NULL;
	if (!p || strlen(p) >= sizeof(g_run_dir))
		return;
	strcpy(g_run_dir, p);
	g_run_root = (int)root;
	g_run_log_each = each != 0;
	xs_runtime_fd_adopt(fd, &g_run_fd, XS_FD_FORK_SHARED);
	if (cli > 2)	/* 0: none */
		xs_runtime_fd_adopt(cli, &g_run_cli_fd, XS_FD_FORK_SHARED);
	g_run_after_exec = after_exec;
}

void xs_run_env(struct xs_buf *b)
{
	int run_fd = xs_runtime_fd_here(g_run_fd), cli_fd = xs_runtime_fd_here(g_run_cli_fd);
	if (run_fd < 0)
		return;
	xs_buf_add(b, "EXITSCOPE_RUN=");
	xs_buf_u64(b, (uint64_t)run_fd, 0);
	xs_buf_addc(b, ':');
	xs_buf_add(b, g_run_name);
	xs_buf_addc(b, ':');
	xs_buf_u64(b, (uint64_t)g_run_root, 0);
	xs_buf_add(b, g_run_log_each ? ":1:" : ":0:");
	xs_buf_u64(b, (uint64_t)(cli_fd < 0 ? 0 : cli_fd), 0);
	xs_buf_addc(b, ':');
	xs_buf_add(b, g_run_dir);
	xs_buf_addc(b, 0);
}

void xs_run_comm(char comm[17])
{
	long n = xs_read_proc("/proc/self/comm", comm, 16);
	comm[n > 0 ? n : 0] = 0;
	if (n > 0 && comm[n - 1] == '\n')
		comm[n - 1] = 0;
}

/* "comm": ..., "title": ... (the first string of cmdline, which ps shows
 * and programs such as postgres rewrite) */
static void add_names(struct xs_buf *b)
{
	char comm[17], cmd[256];
	xs_run_comm(comm);
	xs_buf_add(b, ", \"comm\": ");
	xs_buf_json_str(b, comm);
	long n = xs_read_proc("/proc/self/cmdline", cmd, sizeof(cmd) - 1);
	cmd[n > 0 ? n : 0] = 0;
	xs_buf_add(b, ", \"title\": ");
	xs_buf_json_str(b, cmd);
}

static void write_line(struct xs_buf *b)
{
	if (!b->failed && b->len <= LINE_MAX_SIZE + 1)
		xs_write_all(g_run_fd, b->data, b->len);
}

/* A start or exec line: pid, parent, time, names, the image and its argv. */
static void say_image(const char *event)
{
	char line[LINE_MAX_SIZE + 64], exe[1024];
	struct xs_buf b = { line, 0, sizeof(line), false, NULL };
	xs_buf_add(&b, "{\"event\": \"");
	xs_buf_add(&b, event);
	xs_buf_add(&b, "\", \"pid\": ");
	xs_buf_u64(&b, (uint64_t)xs_sys0(SYS_getpid), 0);
	xs_buf_add(&b, ", \"ppid\": ");
	xs_buf_u64(&b, (uint64_t)xs_sys0(SYS_getppid), 0);
	xs_buf_add(&b, ", \"time_ns\": ");
	xs_buf_u64(&b, xs_now_real(), 0);
	add_names(&b);
	long n = xs_self_exe(exe, sizeof(exe));
	xs_buf_add(&b, ", \"exe\": ");
	xs_buf_json_str(&b, exe);
	xs_buf_add(&b, ", \"argv\": [");
	/* the argv as the kernel holds it, cut to keep the line whole */
	char args[2048];
	n = xs_read_proc("/proc/self/cmdline", args, sizeof(args));
	bool cut = n == (long)sizeof(args);
	for (long i = 0, first = 1; i < n;) {
		long len = (long)strnlen(args + i, (size_t)(n - i));
		if (i + len >= n && cut)
			break;	/* the last one, cut short by the buffer */
		args[i + len < n ? i + len : n - 1] = 0;
		if (!first)
			xs_buf_add(&b, ", ");
		first = 0;
		xs_buf_json_str(&b, args + i);
		i += len + 1;
	}
	xs_buf_add(&b, "], \"argv_cut\": ");
	xs_buf_add(&b, cut ? "true" : "false");
	xs_buf_add(&b, "}\n");
	write_line(&b);
}

void xs_run_process_start(void)
{
	if (g_run_fd < 0)
		return;
	/* the first image of a process says "start", a later one "exec"; a
	 * fork child inherits g_run_image_said and says "start" */
	say_image(g_run_after_exec && !g_run_image_said ? "exec" : "start");
	g_run_image_said = true;
}

void xs_run_note_signal(int sig)
{
	g_exit_signal = sig;
}

void xs_run_note_exit(long status)
{
	g_exit_status = (int)(status & 0xff);
}

/* The run file for reading, in a description of our own (through
 * /proc/self/fd: the inherited one is write-only). */
static long open_run_file(void)
{
	char path[64];
	struct xs_buf p = { path, 0, sizeof(path), false, NULL };
	xs_buf_add(&p, "/proc/self/fd/");
	xs_buf_u64(&p, (uint64_t)g_run_fd, 0);
	xs_buf_addc(&p, 0);
	return xs_fd_make(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
}

/* Did any process other than the first one join the run? (a start or
 * exec line of another pid in the run file) */
static bool run_has_others(void)
{
	long fd = open_run_file();
	if (fd < 0)
		return false;
	struct stat st;
	bool others = false;
	if (xs_sys2(SYS_fstat, fd, &st) == 0 && st.st_size > 0) {
		long m = xs_syscall6(SYS_mmap, 0, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m >= 0 || m < -4095) {
			const char *data = (const char *)m, *end = data + st.st_size;
			static const char start[] = "{\"event\": \"start\", \"pid\": ",
					  exec[] = "{\"event\": \"exec\", \"pid\": ";
			for (const char *line = data; line < end && !others;) {
				const char *nl = memchr(line, '\n', (size_t)(end - line));
				const char *next = nl ? nl + 1 : end, *q = NULL;
				if ((size_t)(next - line) > sizeof(start) && !memcmp(line, start, sizeof(start) - 1))
					q = line + sizeof(start) - 1;
				else if ((size_t)(next - line) > sizeof(exec) && !memcmp(line, exec, sizeof(exec) - 1))
					q = line + sizeof(exec) - 1;
				long pid = 0;
				while (q && q < next && *q >= '0' && *q <= '9')
					pid = pid * 10 + (*q++ - '0');
				others = q && pid != g_run_root;
				line = next;
			}
			xs_sys2(SYS_munmap, m, st.st_size);
		}
	}
	xs_sys1(SYS_close, fd);
	return others;
}

/*
 * The run's summary on the log (DESIGN.md §3.11): `exitscope report
 * --summary DIR`, run by the first process as it ends, in a child of its
 * own that execs the exitscope binary kept open since the start (so that
 * the summary reads the records with the command's own code, and works
 * after a chroot or a change of PATH). The child's output goes to the log.
 * True when it printed the summary.
 */
static bool print_summary(void)
{
	if (g_run_cli_fd < 0 || !g_run_dir[0] || g_config.log_fd < 0)
		return false;
	/* the run file, not the directory: with -o DIR it is run-PID.jsonl */
	char file[PATH_MAX + sizeof(g_run_name) + 2];
	struct xs_buf f = { file, 0, sizeof(file), false, NULL };
	xs_buf_add(&f, g_run_dir);
	xs_buf_addc(&f, '/');
	xs_buf_add(&f, g_run_name);
	xs_buf_addc(&f, 0);
	if (f.failed)
		return false;
	char *argv[] = { "exitscope", "report", "--summary", file, NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	long pid = xs_sys5(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (pid < 0)
		return false;
	if (pid == 0) {
		xs_sys2(SYS_dup2, g_config.log_fd, 1);
		xs_sys2(SYS_dup2, g_config.log_fd, 2);
		xs_sys5(SYS_execveat, g_run_cli_fd, "", argv, envp, AT_EMPTY_PATH);
		xs_sys1(SYS_exit_group, 127);
	}
	int status = 0;
	long r;
	do
		r = xs_sys4(SYS_wait4, pid, &status, __WALL, 0);
	while (r == -EINTR);
	return r == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool xs_run_logs_blocks_of(int pid)
{
	return g_run_fd < 0 || g_config.format != XS_FORMAT_TEXT || g_run_log_each || pid == g_run_root;
}

/* Its end line, then what the log shows of it. */
static bool end_line_and_own_block(const struct xs_window *w, bool whole);

void xs_run_process_end(const struct xs_window *w, bool whole, const struct xs_buf *text)
{
	bool summary = false;
	bool own = end_line_and_own_block(w, whole);
	if (own == false && g_run_fd >= 0 && w->pid == g_run_root && g_config.format == XS_FORMAT_TEXT)
		summary = true;
	if ((own || g_run_log_each) && text->len)
		xs_log_buf(text->data, text->len);
	if (summary && !print_summary() && !g_run_log_each && text->len)
		xs_log_buf(text->data, text->len);	/* no summary: its own block, as before */
}

static bool end_line_and_own_block(const struct xs_window *w, bool whole)
{
	if (g_run_fd < 0)
		return true;
	char line[1024];
	struct xs_buf b = { line, 0, sizeof(line), false, NULL };
	int status = g_exit_status, sig = g_exit_signal;
	g_exit_status = -1;	/* a vfork child shares it with its parent */
	g_exit_signal = 0;
	if (!whole) {
		/* a vfork child that ends without exec: no runtime of its own
		 * said its start */
		xs_buf_add(&b, "{\"event\": \"start\", \"pid\": ");
		xs_buf_u64(&b, (uint64_t)w->pid, 0);
		xs_buf_add(&b, ", \"ppid\": ");
		xs_buf_u64(&b, (uint64_t)xs_sys0(SYS_getppid), 0);
		xs_buf_add(&b, ", \"time_ns\": ");
		xs_buf_u64(&b, w->start_ns, 0);
		add_names(&b);
		xs_buf_add(&b, ", \"vfork\": true}\n");
	}
	xs_buf_add(&b, "{\"event\": \"end\", \"pid\": ");
	xs_buf_u64(&b, (uint64_t)w->pid, 0);
	xs_buf_add(&b, ", \"time_ns\": ");
	xs_buf_u64(&b, w->end_ns, 0);
	/* how: exit (status), signal (the process was killed: its number is
	 * the parent's to see), exec (into an image the runtime cannot
	 * enter: the process goes on unobserved) */
	bool exec = strcmp(w->reason, "exec") == 0;
	xs_buf_add(&b, ", \"how\": ");
	xs_buf_add(&b, exec ? "\"exec\"" : status >= 0 ? "\"exit\"" : "\"signal\"");
	xs_buf_add(&b, ", \"status\": ");
	if (status >= 0 && !exec)
		xs_buf_u64(&b, (uint64_t)status, 0);
	else if (status < 0 && !exec && sig > 0)
		xs_buf_u64(&b, (uint64_t)sig, 0);	/* how "signal": its number */
	else
		xs_buf_add(&b, "null");
	add_names(&b);
	xs_buf_add(&b, ", \"exits\": ");
	xs_buf_u64(&b, w->total.exits, 0);
	xs_buf_add(&b, ", \"windows\": ");
	xs_buf_u64(&b, (uint64_t)w->seq + 1, 0);
	xs_buf_add(&b, "}\n");
	write_line(&b);
	/* the log at exit (DESIGN.md §3.11): one summary for the run, by its
	 * first process; the others' blocks only with --log-each. The first
	 * process's own blocks as before when it is the whole run, or at an
	 * exec, or when the summary could not be printed. */
	if (g_config.format != XS_FORMAT_TEXT)
		return true;
	if (!xs_run_logs_blocks_of(w->pid) || w->pid != g_run_root)
		return false;
	return exec || !run_has_others();
}

/* ---- run-wide windows from inside ---- */

static long rt_sys(long nr, long a1, long a2, long a3, long a4, long a5)
{
	return xs_syscall6(nr, a1, a2, a3, a4, a5, 0);
}

struct self_close {
	const char *label;
	bool reset;
	const char *reason;
	enum xs_show show;
};

static int close_self(uint32_t run_window, void *arg)
{
	struct self_close *s = arg;
	uint32_t seq = g_proc->seq;
	int r = xs_window_close_run(s->reason, s->reset ? NULL : s->label, run_window, s->show);
	return r < 0 ? r : (int)seq;
}

static int run_window(const char *label, bool reset, bool by_signal)
{
	/* a description of our own for the lock: the inherited one is shared
	 * by every process of the run, and flock is per description */
	int lock_fd;
	if (xs_runtime_fd_adopt(open_run_file(), &lock_fd, 0) < 0)
		return lock_fd;
	struct xs_buf results = { .grow = xs_buf_pool_grow };
	int r = xs_buf_pool_grow(&results, XS_RUNWIN_MAX * sizeof(struct xs_runwin_result));
	/* by the control signal: its block on the log as a signal's always was */
	struct self_close self = { label, reset, by_signal ? "signal" : "app", by_signal ? XS_SHOW_LOG : XS_SHOW_NONE };
	if (r == 0) {
		struct xs_runwin rw = {
			.sys = rt_sys, .grow = xs_buf_pool_grow, .release = xs_buf_pool_release,
			.lock_fd = lock_fd, .append_fd = g_run_fd, .label = label, .reset = reset,
			.try_lock = by_signal, .reason = self.reason, .self_pid = g_proc->pid,
			.close_self = close_self, .arg = &self,
			.results = (struct xs_runwin_result *)results.data,
		};
		r = xs_runwin_close(&rw);
	}
	xs_buf_pool_release(&results);
	xs_runtime_fd_close(&lock_fd);
	return r;
}

int xs_run_window(const char *label, bool reset)
{
	if (g_run_fd < 0)
		return -ENOENT;
	return run_window(label, reset, false);
}

int xs_run_signal_window(void)
{
	if (g_run_fd < 0 || g_run_root != g_proc->pid)
		return -ENOENT;
	return run_window(NULL, false, true);
}
