/*
 * exitscope dump [--json] PID [LABEL] / exitscope reset PID: ask the
 * runtime inside process PID, through its control socket, to close a
 * window. The runtime answers with the closed window's text block (dump),
 * its record line (dump --json) or nothing (reset), and a last line
 * "ok window N" or "error: ...". The command returns once the record is
 * written.
 *
 * exitscope is often run as root, and any user can bind any abstract
 * socket name, so nothing is trusted by its name (see the top of
 * src/runtime/control.c for the rendezvous): the candidates are the names
 * "@exitscope-PID-<16 hex digits>" (and "@exitscope-PID" of older
 * runtimes) listed in /proc/net/unix, and the command talks only to the one
 * whose listener is process PID itself. Whatever comes back is printed only
 * if it has the shape of the expected answer, bounded in size, with every
 * control character escaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "common/ctlsock.h"
#include "common/json.h"
#include "common/runwin.h"
#include "cli/records.h"
#include "cli/tree.h"

#define ANSWER_MAX (64u << 20)		/* a record of 4096 threads fits */
#define ANSWER_WAIT_MS 30000		/* without a byte of answer */
#define CANDIDATES_MAX 4096		/* names of the form we look for */
#define REFUSED_SHOWN 3

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > 0x3fffffff)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

/* ---- finding and checking the runtime's socket ---- */

/* The listening abstract sockets named as pid's runtime names its socket,
 * from /proc/net/unix ("Num RefCount Protocol Flags Type St Inode Path",
 * abstract paths with a leading '@'). Returns their count; names[i] are
 * malloc'd (without the '@'); -1 if the list cannot be read. */
static int find_candidates(pid_t pid, char ***out)
{
	FILE *f = fopen("/proc/net/unix", "re");
	if (!f)
		return -1;
	char line[512];
	char **names = NULL;
	int count = 0;
	while (fgets(line, sizeof(line), f)) {
		char name[XS_CTL_NAME_MAX];
		int owner;
		if (!xs_ctl_unix_line(line, &owner, name) || owner != pid || count >= CANDIDATES_MAX)
			continue;
		bool dup = false;
		for (int i = 0; i < count && !dup; i++)
			dup = !strcmp(names[i], name);
		if (dup)
			continue;
		char **grown = realloc(names, sizeof(*names) * (size_t)(count + 1));
		if (!grown || !(grown[count] = strdup(name))) {
			names = grown ? grown : names;
			break;
		}
		names = grown;
		count++;
	}
	fclose(f);
	*out = names;
	return count;
}

/* The command's system calls for the shared rules (common/ctlsock.c). */
long xs_cli_sys(long nr, long a1, long a2, long a3, long a4, long a5)
{
	long r = syscall(nr, a1, a2, a3, a4, a5);
	return r < 0 ? -errno : r;
}

/* Does pid have the runtime mapped (when its maps can be read): the
 * preloaded library, or exitscope-ld for a static program? */
static bool runs_exitscope(pid_t pid)
{
	char path[64], line[4096];
	bool found = false;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libexitscope.so") != NULL || strstr(line, "/exitscope-ld") != NULL;
	fclose(f);
	return found;
}

/* Connect to pid's runtime: the socket, or -1 after saying why not.
 * *pidfd: a pidfd of pid (or -1), the caller's to close. */
static int connect_runtime(pid_t pid, int *pidfd)
{
	int target_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	*pidfd = target_pidfd;
	if (target_pidfd < 0 && errno == ESRCH) {
		xs_error("process %d: no such process", (int)pid);
		return -1;
	}
	char **names = NULL;
	int count = find_candidates(pid, &names);
	int fd = -1, refused = 0, connect_err = 0;
	for (int i = 0; i < count && fd < 0; i++) {
		long c = xs_ctl_connect(xs_cli_sys, names[i]);
		if (c < 0) {
			connect_err = (int)-c;
			continue;
		}
		char why[160];
		if (xs_ctl_listener_is(xs_cli_sys, (int)c, pid, target_pidfd, why, sizeof(why))) {
			fd = (int)c;
			break;
		}
		close(c);
		if (refused++ < REFUSED_SHOWN)
			xs_error("process %d: refusing the control socket '@%s': %s", (int)pid, names[i], why);
	}
	for (int i = 0; i < count; i++)
		free(names[i]);
	free(names);
	if (fd >= 0)
		return fd;
	if (refused > REFUSED_SHOWN)
		xs_error("process %d: ... and %d more sockets of that name refused", (int)pid, refused - REFUSED_SHOWN);
	if (count < 0)
		xs_error("process %d: cannot read /proc/net/unix to find its control socket", (int)pid);
	else if (runs_exitscope(pid))
		xs_error("process %d has no control socket (its log says why)%s%s; close a window with the control "
			 "signal (kill -USR1 %d, or the --signal it was run with), a write to /dev/exitscope "
			 "from inside, or run it with --interval",
			 (int)pid, connect_err ? ": " : "", connect_err ? strerror(connect_err) : "", (int)pid);
	else
		xs_error("process %d: no exitscope runtime answers; is it running under 'exitscope run'?", (int)pid);
	return -1;
}

/* ---- printing what came back ---- */

/* The length of the valid UTF-8 sequence at p (at most n bytes), its code
 * point in *cp; 0 if invalid (overlong, surrogate, beyond U+10FFFF, cut). */
static size_t utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c, min;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	} else if ((p[0] & 0xe0) == 0xc0) {
		len = 2, c = p[0] & 0x1f, min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3, c = p[0] & 0x0f, min = 0x800;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4, c = p[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* Print text for a terminal: newlines and valid UTF-8 as they are; control
 * characters (C0 but newline, DEL, C1) and bytes of invalid UTF-8 as \xHH,
 * so that nothing in it can drive the terminal. */
static void print_text(FILE *out, const char *data, size_t size)
{
	const unsigned char *p = (const unsigned char *)data;
	for (size_t i = 0; i < size;) {
		uint32_t cp;
		size_t len = utf8_seq(p + i, size - i, &cp);
		if (len == 0 || (cp < 0x20 && cp != '\n') || (cp >= 0x7f && cp < 0xa0)) {
			for (size_t k = 0; k < (len ? len : 1); k++)
				fprintf(out, "\\x%02x", p[i + k]);
			i += len ? len : 1;
			continue;
		}
		fwrite(p + i, 1, len, out);
		i += len;
	}
}

/* Print a JSON line that parsed: raw bytes below 0x20 can only be
 * whitespace there, and DEL, C1 characters and invalid UTF-8 only inside
 * strings, where \u escapes (U+FFFD for invalid bytes) keep it valid. */
static void print_json(const char *data, size_t size)
{
	const unsigned char *p = (const unsigned char *)data;
	for (size_t i = 0; i < size;) {
		uint32_t cp;
		size_t len = utf8_seq(p + i, size - i, &cp);
		if (len == 0) {
			fputs("\\ufffd", stdout);
			i++;
		} else if (cp < 0x20) {
			putchar(' ');
			i++;
		} else if (cp >= 0x7f && cp < 0xa0) {
			printf("\\u%04x", (unsigned)cp);
			i += len;
		} else {
			fwrite(p + i, 1, len, stdout);
			i += len;
		}
	}
	putchar('\n');
}

enum answer_kind { ANSWER_TEXT, ANSWER_JSON, ANSWER_NONE };

/* Read the whole answer (at most ANSWER_MAX bytes): malloc'd, or NULL
 * after saying why. */
static char *read_answer(int fd, pid_t pid, size_t *size)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (len == cap) {
			if (cap >= ANSWER_MAX) {
				xs_error("process %d: the answer is larger than %u MiB; nothing printed", (int)pid,
					 ANSWER_MAX >> 20);
				free(buf);
				return NULL;
			}
			char *grown = realloc(buf, cap * 2);
			if (!grown)
				break;
			buf = grown;
			cap *= 2;
		}
		/* a window close takes seconds at worst (hundreds of busy
		 * threads); a runtime that cannot even accept (the program
		 * holds every descriptor) never answers */
		struct pollfd p = { fd, POLLIN, 0 };
		int ready = poll(&p, 1, ANSWER_WAIT_MS);
		if (ready == 0) {
			xs_error("process %d: no answer within %d s (its log says more: does the program hold every "
				 "file descriptor?)", (int)pid, ANSWER_WAIT_MS / 1000);
			free(buf);
			return NULL;
		}
		ssize_t got = ready < 0 ? -1 : read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		/* a refusal closes without reading the request: the kernel
		 * then resets the connection after the answer */
		if (got < 0 && errno == ECONNRESET)
			got = 0;
		if (got < 0) {
			xs_error("process %d: reading the answer: %s", (int)pid, strerror(errno));
			free(buf);
			return NULL;
		}
		if (got == 0) {
			*size = len;
			return buf;
		}
		len += (size_t)got;
	}
	xs_error("process %d: out of memory for the answer", (int)pid);
	free(buf);
	return NULL;
}

/* Has the process of pidfd ended (within a moment: its descriptors,
 * the control connection among them, close just before it does)? */
static bool ended(int pidfd)
{
	struct pollfd p = { pidfd, POLLIN, 0 };
	return pidfd >= 0 && poll(&p, 1, 1000) == 1;
}

/* Check the answer's shape and print it; the exit status. */
static int show_answer(pid_t pid, int pidfd, const char *buf, size_t size, enum answer_kind kind, int send_err)
{
	if (size == 0 || buf[size - 1] != '\n') {
		if (ended(pidfd))
			xs_error("process %d ended before it answered: the window that was open closes with "
				 "its exit record (none after SIGKILL)", (int)pid);
		else if (send_err)
			xs_error("process %d: %s", (int)pid, strerror(send_err));
		else
			xs_error("process %d: the runtime closed the connection without an answer", (int)pid);
		return XS_EXIT_DATA;
	}
	/* the last line says how it went */
	size_t body = size - 1;
	while (body > 0 && buf[body - 1] != '\n')
		body--;
	const char *status = buf + body;
	size_t status_size = size - 1 - body;
	if (status_size > 7 && !strncmp(status, "error: ", 7)) {
		/* the runtime's own words, made harmless like the rest */
		fprintf(stderr, "exitscope: process %d: ", (int)pid);
		print_text(stderr, status + 7, status_size - 7 + 1);
		return XS_EXIT_DATA;
	}
	bool ok = status_size > 10 && !strncmp(status, "ok window ", 10) &&
		  strspn(status + 10, "0123456789") == status_size - 10;
	bool shape = ok;
	struct xs_json_doc *doc = NULL;
	if (ok && kind == ANSWER_NONE) {
		shape = body == 0;
	} else if (ok && kind == ANSWER_TEXT) {
		char head[64];
		int n = snprintf(head, sizeof(head), "----- exitscope stats for process %d ", (int)pid);
		shape = body > (size_t)n && !strncmp(buf, head, (size_t)n);
	} else if (ok && kind == ANSWER_JSON) {
		struct xs_json_error err;
		const char *nl = memchr(buf, '\n', body);
		shape = body > 1 && nl == buf + body - 1 && xs_json_parse(buf, body - 1, &doc, &err) == 0 &&
			xs_json_root(doc)->type == XS_JSON_OBJECT;
		xs_json_free(doc);
	}
	if (!shape) {
		xs_error("process %d: the answer is not a record and a status line; nothing printed", (int)pid);
		return XS_EXIT_DATA;
	}
	if (kind == ANSWER_TEXT)
		print_text(stdout, buf, body);
	else if (kind == ANSWER_JSON)
		print_json(buf, body - 1);
	return fflush(stdout) == 0 && !ferror(stdout) ? XS_EXIT_OK : XS_EXIT_DATA;
}

static int send_command(pid_t pid, const char *line, enum answer_kind kind)
{
	int pidfd;
	int fd = connect_runtime(pid, &pidfd);
	if (fd < 0) {
		if (pidfd >= 0)
			close(pidfd);
		return XS_EXIT_DATA;
	}
	/* a refusal may close the socket before the request is read: read the
	 * answer whatever the send says */
	size_t size = strlen(line);
	ssize_t sent = send(fd, line, size, MSG_NOSIGNAL);
	int send_err = sent < 0 ? errno : 0;
	shutdown(fd, SHUT_WR);
	size_t got;
	char *buf = read_answer(fd, pid, &got);
	close(fd);
	int r = buf ? show_answer(pid, pidfd, buf, got, kind, send_err) : XS_EXIT_DATA;
	free(buf);
	if (pidfd >= 0)
		close(pidfd);
	return r;
}

/*
 * dump RUN / reset RUN: one run-wide window in every live process of the
 * run (common/runwin.c), numbered in the run file. Prints one line per
 * process and returns once every record is written; status 1 when a live
 * process could not be reached (one that exited meanwhile is not an
 * error: its exit record is in this window).
 */
static int run_window(const char *run_file, const char *label, bool reset)
{
	int lock_fd = open(run_file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int append_fd = open(run_file, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	if (lock_fd < 0 || append_fd < 0 || fstat(append_fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		xs_error("run file '%s': %s", run_file, lock_fd < 0 || append_fd < 0 ? strerror(errno) : "not a file");
		if (lock_fd >= 0)
			close(lock_fd);
		if (append_fd >= 0)
			close(append_fd);
		return XS_EXIT_DATA;
	}
	struct xs_runwin_result *results = calloc(XS_RUNWIN_MAX, sizeof(*results));
	struct xs_runwin rw = {
		.sys = xs_cli_sys, .grow = xs_cli_buf_grow, .release = xs_cli_buf_release,
		.lock_fd = lock_fd, .append_fd = append_fd, .label = label, .reset = reset,
		.reason = "command", .results = results,
	};
	int r = results ? xs_runwin_close(&rw) : -ENOMEM;
	close(lock_fd);
	close(append_fd);
	if (r < 0) {
		xs_error("run file '%s': %s", run_file, strerror(-r));
		free(results);
		return XS_EXIT_DATA;
	}
	int status = XS_EXIT_OK;
	size_t closed = 0;
	for (size_t i = 0; i < rw.count; i++) {
		struct xs_runwin_result *res = &results[i];
		if (!res->err) {
			closed++;
			printf("process %d: window #%u\n", res->pid, res->seq);
		} else if (res->err == -ESRCH) {
			printf("process %d: exited before the window reached it\n", res->pid);
		} else {
			status = XS_EXIT_DATA;
			xs_error("process %d: %s", res->pid,
				 res->err == -EPERM ? res->why : res->err == -ECONNREFUSED ? "no control socket answers"
				 : strerror(-res->err));
		}
	}
	if (rw.dropped) {
		xs_error("%zu more processes of the run were not reached (at most %d at once)", rw.dropped,
			 XS_RUNWIN_MAX);
		status = XS_EXIT_DATA;
	}
	printf("ok run window %u: %zu processes\n", rw.run_window, closed);
	free(results);
	int out = xs_cli_finish_stdout();
	return status ? status : out;
}

/*
 * A pid is always the per-pid form, even that of a run's first process:
 * were it a run when ./exitscope-PID/ is in the current directory, the
 * same command would close one window or the whole tree's depending on
 * where it is typed. A run is named by its directory or run file.
 */
static bool is_pid(const char *arg)
{
	return arg[0] && strspn(arg, "0123456789") == strlen(arg);
}

static bool wants_help(int argc, char **argv)
{
	return argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"));
}

/* An option dump or reset does not know (a pid is never negative): the
 * conventional message, or 0 when argv[1] is no option. */
static int bad_option(const char *cmd, int argc, char **argv)
{
	if (argc < 2 || argv[1][0] != '-' || !argv[1][1])
		return 0;
	if (argv[1][1] == '-')
		xs_error("unrecognized option '%s'", argv[1]);
	else
		xs_error("invalid option -- '%c'", argv[1][1]);
	fprintf(stderr, "Try 'exitscope %s --help'.\n", cmd);
	return XS_EXIT_USAGE;
}

static const char g_dump_usage[] =
	"usage: exitscope dump [--json] PID [LABEL] | exitscope dump RUN [LABEL]\n"
	"  close a window in process PID (running under exitscope), print it, and return\n"
	"  once its record is written to exitscope-PID.jsonl; it prints the text block,\n"
	"  whatever --format the program runs with, or with --json the record line\n"
	"  RUN (a run directory such as exitscope-PID/, or its run file): one run-wide window\n"
	"  in every live process of the run, returned once every record is written (a PID\n"
	"  is always the one process, even the run's first)\n";
static const char g_reset_usage[] =
	"usage: exitscope reset PID | RUN\n"
	"  close a window in process PID (or in every live process of RUN) silently:\n"
	"  a new window starts now\n";

int cmd_dump(int argc, char **argv)
{
	pid_t pid;
	bool json = argc >= 2 && !strcmp(argv[1], "--json");
	if (wants_help(argc, argv)) {
		fputs(g_dump_usage, stdout);
		return XS_EXIT_OK;
	}
	if (json) {
		argc--;
		argv++;
	}
	int bad = bad_option("dump", argc, argv);
	if (bad)
		return bad;
	char run_file[8192];
	bool run = argc >= 2 && argc <= 3 && !json && !is_pid(argv[1]) && xs_tree_find(argv[1], run_file, sizeof(run_file));
	if (argc < 2 || argc > 3 || (!run && parse_pid(argv[1], &pid) < 0)) {
		fputs(g_dump_usage, stderr);
		return XS_EXIT_USAGE;
	}
	char line[300];
	if (argc == 3 && (strlen(argv[2]) > 120 || strchr(argv[2], '\n'))) {
		xs_error("dump: a label is one line of at most 120 bytes");
		return XS_EXIT_USAGE;
	}
	if (run)
		return run_window(run_file, argc == 3 ? argv[2] : NULL, false);
	snprintf(line, sizeof(line), "%s%s%s\n", json ? "dump-json" : "dump", argc == 3 ? " " : "",
		 argc == 3 ? argv[2] : "");
	return send_command(pid, line, json ? ANSWER_JSON : ANSWER_TEXT);
}

int cmd_reset(int argc, char **argv)
{
	pid_t pid;
	if (wants_help(argc, argv)) {
		fputs(g_reset_usage, stdout);
		return XS_EXIT_OK;
	}
	int bad = bad_option("reset", argc, argv);
	if (bad)
		return bad;
	char run_file[8192];
	if (argc == 2 && !is_pid(argv[1]) && xs_tree_find(argv[1], run_file, sizeof(run_file)))
		return run_window(run_file, NULL, true);
	if (argc != 2 || parse_pid(argv[1], &pid) < 0) {
		fputs(g_reset_usage, stderr);
		return XS_EXIT_USAGE;
	}
	return send_command(pid, "reset\n", ANSWER_NONE);
}
