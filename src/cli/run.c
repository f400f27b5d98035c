/*
 * exitscope run: check that the program can run behind the boundary, set
 * up the runtime's environment, and become the program (exec). Because
 * exitscope becomes the program, the program keeps exitscope's pid, its
 * parent, its job control, and its exit status or death by signal (which a
 * shell shows as 128+N); `kill -USR1 $!` reaches the program itself.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/prctl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "cli/cli.h"
#include "common/runfile.h"
#include "common/shebang.h"

static const char g_run_usage[] =
	"usage: exitscope run [OPTIONS] [--] PROGRAM [ARG...]\n"
	"  -o, --output-dir DIR   put the run's files in DIR, an existing, real, writable directory\n"
	"                         (default: a new run directory ./exitscope-PID/)\n"
	"  -n, --no-records       write no files: the windows go to the log only (not with -o or -p)\n"
	"  -p, --profile          sample a CPU profile into exitscope-PID-N.data (perf.data) per window\n"
	"  -F, --frequency HZ     samples per second of each thread's CPU time (default 199, at most 1000)\n"
	"  -g, --call-graph MODE  dwarf (default: unwinds through Debian's libc) | fp | none\n"
	"  -s, --signal SIG       control signal: USR1 (default), USR2, RTMIN+N, a number, or none\n"
	"  -i, --interval MS      also close a window every MS milliseconds\n"
	"      --format FMT       text (default) | gramine | none: what the log shows\n"
	"      --log FILE         write the log to FILE instead of the program's stderr\n"
	"      --log-each         each process's blocks on the log at its exit, not only the\n"
	"                         run's summary (a run of one process shows its block anyway)\n"
	"      --no-fast-path     every call traps (Syscall User Dispatch); no site is rewritten\n"
	"                         (also EXITSCOPE_FAST_PATH=off in exitscope's environment)\n"
	"  -h, --help             this text\n"
	"The status is the program's own. exitscope's own refusals are 2 (usage) and 121-127,\n"
	"each with one line 'exitscope: ...' on stderr before the program would start.\n";

/* The control signal by name (USR1, SIGUSR1, RTMIN+3), number, or "none"
 * (0); -1 when it cannot be the runtime's. */
static int parse_signal(const char *s)
{
	static const struct { const char *name; int sig; } names[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "USR1", SIGUSR1 },
		{ "USR2", SIGUSR2 }, { "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
		{ "URG", SIGURG }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM },
		{ "PROF", SIGPROF }, { "WINCH", SIGWINCH }, { "IO", SIGIO }, { "PWR", SIGPWR },
	};
	if (!strcmp(s, "none"))
		return 0;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	char *end;
	long v;
	if (!strncmp(s, "RTMIN+", 6)) {
		v = strtol(s + 6, &end, 10);
		v = *end || end == s + 6 ? -1 : SIGRTMIN + v;
	} else if (*s >= '0' && *s <= '9') {
		v = strtol(s, &end, 10);
		if (*end)
			v = -1;
	} else {
		v = -1;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(s, names[i].name))
				v = names[i].sig;
	}
	if (v <= 0 || v > SIGRTMAX || v == SIGKILL || v == SIGSTOP || v == SIGSYS || v == SIGSEGV ||
	    v == SIGBUS || v == SIGFPE || v == SIGILL || v == SIGCHLD)
		return -1;
	return (int)v;
}

/* Find PROGRAM as execvp would: a name with a slash as is, else on PATH. */
static int resolve_program(const char *name, char *path, size_t size)
{
	if (strchr(name, '/')) {
		if (snprintf(path, size, "%s", name) >= (int)size)
			return -ENAMETOOLONG;
		return access(path, F_OK) == 0 ? 0 : -errno;
	}
	const char *p = getenv("PATH");
	if (!p)
		p = "/usr/local/bin:/usr/bin:/bin";
	int err = -ENOENT;
	while (*p) {
		size_t len = strcspn(p, ":");
		if (snprintf(path, size, "%.*s%s%s", (int)len, p, len ? "/" : "", name) < (int)size) {
			struct stat st;
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				if (access(path, X_OK) == 0)
					return 0;
				err = -EACCES;
			}
		}
		p += len;
		if (*p == ':')
			p++;
	}
	return err;
}

/*
 * Can exitscope run path? 0 when yes, else an exit status after printing
 * the reason. *is_static: no PT_INTERP, so exitscope-ld loads it rather than
 * the dynamic loader with LD_PRELOAD. Scripts are judged by their
 * interpreter.
 */
static int check_program(const char *shown, const char *path, int depth, bool *is_static)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		xs_error("'%s': %s", shown, strerror(errno));
		return errno == ENOENT ? XS_EXIT_NOTFOUND : XS_EXIT_NOEXEC;
	}
	if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0) {
		xs_error("'%s': not an executable file", shown);
		return XS_EXIT_NOEXEC;
	}
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		xs_error("'%s' is setuid/setgid: exitscope would run it without its privileges, so it does not run it",
			 shown);
		return XS_EXIT_SETUID;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		xs_error("'%s': %s", shown, strerror(errno));
		return XS_EXIT_NOEXEC;
	}
	unsigned char head[XS_SHEBANG_MAX];
	ssize_t n = pread(fd, head, sizeof(head) - 1, 0);
	char *interp, *arg;
	bool complete;
	if (n >= 0 && xs_shebang((char *)head, (size_t)n, &interp, &arg, &complete)) {
		close(fd);
		if (depth > 4 || !*interp) {
			xs_error("'%s': bad interpreter line", shown);
			return XS_EXIT_NOEXEC;
		}
		return check_program(interp, interp, depth + 1, is_static);
	}
	Elf64_Ehdr eh;
	if (n < (ssize_t)sizeof(eh) || memcmp(head, ELFMAG, SELFMAG) != 0) {
		close(fd);
		xs_error("'%s': not an ELF executable or script", shown);
		return XS_EXIT_NOEXEC;
	}
	memcpy(&eh, head, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		close(fd);
		xs_error("'%s': not an x86-64 program; exitscope runs x86-64 programs only", shown);
		return XS_EXIT_NOEXEC;
	}
	bool dynamic = false;
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			dynamic = true;
	}
	close(fd);
	*is_static = !dynamic;
	return 0;
}

/* The runtime beside this binary: build tree (lib/) or installed tree.
 * exitscope-ld is beside it. */
static int find_runtime(char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return -1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	*slash = 0;
	const char *candidates[] = { "/lib/libexitscope.so", "/../lib/exitscope/libexitscope.so" };
	for (size_t i = 0; i < 2; i++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof(path), "%s%s", self, candidates[i]);
		if (realpath(path, out) && access(out, R_OK) == 0 && strlen(out) < size)
			return 0;
	}
	return -1;
}

/*
 * Open --log FILE for the runtime, which gets the descriptor (not the path:
 * it keeps writing after the program drops privileges or runs out of
 * descriptors, and all processes of the run append to one file). The path
 * may be in a shared directory: a symlink is refused, and so is an existing
 * regular file that is not the user's own with one link. A character device
 * (/dev/tty, /dev/null) or the user's own FIFO is taken as it is. The
 * descriptor, or -1 after saying why.
 */
static int open_log(const char *log)
{
	int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
	if (fd < 0) {
		xs_error("cannot open log '%s': %s", log,
			 errno == ELOOP ? "it is a symbolic link (give the file it points to)"
			 : errno == ENXIO ? "a FIFO with no reader" : strerror(errno));
		return -1;
	}
	struct stat st;
	const char *why = NULL;
	if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (S_ISREG(st.st_mode) && st.st_uid != geteuid())
		why = "it belongs to another user";
	else if (S_ISREG(st.st_mode) && st.st_nlink != 1)
		why = "it has more than one link";
	else if (S_ISFIFO(st.st_mode) && st.st_uid != geteuid())
		why = "a FIFO of another user";
	else if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
		why = "not a file, a FIFO or a terminal";
	if (why) {
		xs_error("cannot use log '%s': %s", log, why);
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);
	return fd;
}

/*
 * Pseudo filesystems take a directory's checks (a root shell may write to
 * /proc) and then lose every record: refuse them by the kind of filesystem.
 */
static const char *pseudo_fs(long type)
{
	static const struct { long magic; const char *name; } kinds[] = {
		{ 0x9fa0, "proc" }, { 0x62656572, "sysfs" }, { 0x64626720, "debugfs" },
		{ 0x74726163, "tracefs" }, { 0x27e0eb, "cgroup" }, { 0x63677270, "cgroup2" },
		{ 0x73636673, "securityfs" }, { 0xcafe4a11, "bpf" }, { 0x1cd1, "devpts" },
		{ 0x6165676c, "pstore" }, { 0x62656570, "configfs" }, { 0x65735543, "fusectl" },
		{ 0xf97cff8c, "selinuxfs" }, { 0xde5e81e4, "efivarfs" }, { 0x19800202, "mqueue" },
		{ 0x6e736673, "nsfs" }, { 0x42494e4d, "binfmt_misc" }, { 0x50495045, "pipefs" },
		{ 0x534f434b, "sockfs" }, { 0x958458f6, "hugetlbfs" },
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((unsigned long)type == (unsigned long)kinds[i].magic)
			return kinds[i].name;
	return NULL;
}

/* DIR as an absolute path in absdir if records can be written there; else
 * -1 after saying which path and why. */
static int check_output_dir(const char *dir, char *absdir)
{
	struct stat st;
	struct statfs fs;
	if (!realpath(dir, absdir)) {
		xs_error("output directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (stat(absdir, &st) < 0 || statfs(absdir, &fs) < 0) {
		xs_error("output directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		xs_error("output directory '%s': not a directory%s", dir,
			 S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? " but a device" : "");
		return -1;
	}
	const char *pseudo = pseudo_fs((long)fs.f_type);
	if (pseudo) {
		xs_error("output directory '%s': on a %s filesystem, which holds no record files; "
			 "give a real, writable directory", dir, pseudo);
		return -1;
	}
	if (access(absdir, W_OK | X_OK) < 0) {
		xs_error("output directory '%s' is not writable: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The run's place (DESIGN.md §3.10). Without -o, a new run directory
 * ./exitscope-PID/ (PID: the program's, which is ours since we exec it),
 * created here with mkdir, so that a name that exists, whatever it is
 * (an earlier run, a planted symlink), is never written into; with -o DIR,
 * the run file run-PID.jsonl beside the records in DIR. The run
 * file is created O_EXCL and handed down as a descriptor, and so is the
 * directory (opened without following a link): absdir becomes the run
 * directory's path. 0, or -1 after saying why.
 */
static int open_run(const char *dir, char *absdir, int *dir_fd, int *run_fd, char *run_name, size_t size)
{
	int pid = (int)getpid();
	char shown[PATH_MAX + 80];
	if (!dir) {
		char run_dir[64];
		snprintf(run_dir, sizeof(run_dir), "exitscope-%d", pid);
		snprintf(shown, sizeof(shown), "%s/%s", absdir, run_dir);
		if (mkdir(run_dir, 0777) < 0) {
			xs_error("run directory '%s': %s", run_dir,
				 errno == EEXIST ? "it exists already (exitscope never writes into an existing name; "
						   "move it away or give -o DIR)" : strerror(errno));
			return -1;
		}
		*dir_fd = open(run_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW);
		if (*dir_fd < 0) {
			xs_error("run directory '%s': %s", run_dir, strerror(errno));
			return -1;
		}
		if (strlen(shown) >= PATH_MAX) {
			xs_error("run directory '%s': the path is too long", run_dir);
			return -1;
		}
		strcpy(absdir, shown);
		snprintf(run_name, size, "%s", XS_RUN_FILE);
	} else {
		*dir_fd = open(absdir, O_PATH | O_DIRECTORY);
		if (*dir_fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			fprintf(stderr, "exitscope: run file '%s/run-%d.jsonl': %s; this run has no run file\n", dir,
				pid, strerror(errno));
			return 0;
		}
		if (*dir_fd < 0) {
			xs_error("output directory '%s': %s", dir, strerror(errno));
			return -1;
		}
		snprintf(run_name, size, "run-%d.jsonl", pid);
	}
	*run_fd = openat(*dir_fd, run_name, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY, 0644);
	if (*run_fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		/* no descriptor to spare (ulimit -n): the program runs, its
		 * records go by path as before the run file, without one */
		fprintf(stderr, "exitscope: run file '%s/%s': %s; this run has no run file\n", dir ? dir : shown,
			run_name, strerror(errno));
		close(*dir_fd);
		*dir_fd = -1;
		return 0;
	}
	if (*run_fd < 0) {
		xs_error("run file '%s/%s': %s", dir ? dir : shown, run_name,
			 errno == EEXIST ? "it exists already (exitscope never overwrites a file)" : strerror(errno));
		return -1;
	}
	return 0;
}

static int set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) < 0) {
		xs_error("cannot set %s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output-dir", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'l' },
		{ "signal", required_argument, NULL, 's' },
		{ "profile", no_argument, NULL, 'p' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "call-graph", required_argument, NULL, 'g' },
		{ "interval", required_argument, NULL, 'i' },
		{ "no-records", no_argument, NULL, 'n' },
		{ "no-fast-path", no_argument, NULL, 'N' },
		{ "log-each", no_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *dir = NULL, *format = "text", *log = NULL;
	int ctl_signal = SIGUSR1;
	bool profile = false, records = true, log_each = false;
	/* the default can come from the environment, so that a whole test
	 * suite runs once with the fast path and once without */
	const char *fast_env = getenv("EXITSCOPE_FAST_PATH");
	bool fast_path = !fast_env || strcmp(fast_env, "off") != 0;
	const char *call_graph = "dwarf";
	unsigned long frequency = 199;
	unsigned long interval = 0;
	int c;

	static const char shortopts[] = "+o:s:i:pnF:g:h";
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			dir = optarg;
			break;
		case 'f':
			format = optarg;
			if (strcmp(format, "text") && strcmp(format, "gramine") && strcmp(format, "none")) {
				xs_error("unknown --format '%s' (text, gramine or none)", format);
				return XS_EXIT_USAGE;
			}
			break;
		case 'l':
			log = optarg;
			break;
		case 's':
			ctl_signal = parse_signal(optarg);
			if (ctl_signal < 0) {
				xs_error("--signal '%s': not a signal the runtime can use "
					 "(USR1, USR2, HUP, RTMIN+N, a number, or none)", optarg);
				return XS_EXIT_USAGE;
			}
			break;
		case 'p':
			profile = true;
			break;
		case 'n':
			records = false;
			break;
		case 'N':
			fast_path = false;
			break;
		case 'E':
			log_each = true;
			break;
		case 'F': {
			char *end;
			errno = 0;
			frequency = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || frequency < 1 || frequency > 1000) {
				xs_error("--frequency '%s': samples per second from 1 to 1000 (thread CPU-time "
					 "timers fire on scheduler ticks)", optarg);
				return XS_EXIT_USAGE;
			}
			break;
		}
		case 'g':
			call_graph = optarg;
			if (strcmp(call_graph, "dwarf") && strcmp(call_graph, "fp") && strcmp(call_graph, "none")) {
				xs_error("unknown --call-graph '%s' (dwarf, fp or none)", call_graph);
				return XS_EXIT_USAGE;
			}
			break;
		case 'i': {
			char *end;
			errno = 0;
			interval = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || interval == 0 || interval > 86400000UL) {
				xs_error("--interval '%s': milliseconds from 1 to 86400000", optarg);
				return XS_EXIT_USAGE;
			}
			break;
		}
		case 'h':
			fputs(g_run_usage, stdout);
			return XS_EXIT_OK;
		default:
			return xs_bad_option("run", argv, shortopts, opts);
		}
	}
	if (!records && (profile || dir)) {
		xs_error("--no-records writes no files, so it does not go with %s",
			 profile ? "--profile" : "--output-dir");
		fprintf(stderr, "Try 'exitscope run --help'.\n");
		return XS_EXIT_USAGE;
	}
	if (optind >= argc) {
		xs_error("run: no program given");
		fprintf(stderr, "Try 'exitscope run --help'.\n");
		return XS_EXIT_USAGE;
	}
	char **prog_argv = argv + optind;

	char path[PATH_MAX];
	int r = resolve_program(prog_argv[0], path, sizeof(path));
	if (r < 0) {
		xs_error("'%s': %s", prog_argv[0], r == -ENOENT ? "no such program" : strerror(-r));
		return r == -ENOENT ? XS_EXIT_NOTFOUND : XS_EXIT_NOEXEC;
	}
	bool is_static = false;
	int status = check_program(prog_argv[0], path, 0, &is_static);
	if (status)
		return status;

	if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0) < 0) {
		xs_error("this kernel has no Syscall User Dispatch (Linux 5.11+ with CONFIG_GENERIC_ENTRY): %s",
			 strerror(errno));
		return XS_EXIT_NO_DISPATCH;
	}

	char absdir[PATH_MAX];
	if (records && check_output_dir(dir ? dir : ".", absdir) < 0)
		return XS_EXIT_OUTPUT;
	/* the log first: a refused --log leaves no run directory behind */
	int log_fd = -1;
	if (log && (log_fd = open_log(log)) < 0)
		return XS_EXIT_OUTPUT;
	int dir_fd = -1, run_fd = -1;
	char run_name[64];
	if (records && open_run(dir, absdir, &dir_fd, &run_fd, run_name, sizeof(run_name)) < 0)
		return XS_EXIT_OUTPUT;

	char lib[PATH_MAX];
	if (find_runtime(lib, sizeof(lib)) < 0) {
		xs_error("cannot find libexitscope.so next to this exitscope binary");
		return XS_EXIT_INTERNAL;
	}
	char loader[PATH_MAX + 16];
	snprintf(loader, sizeof(loader), "%.*s/exitscope-ld", (int)(strrchr(lib, '/') - lib), lib);
	if (access(loader, X_OK) < 0) {
		if (is_static) {
			xs_error("cannot find exitscope-ld next to %s, which runs statically linked programs", lib);
			return XS_EXIT_INTERNAL;
		}
		loader[0] = 0;	/* the static programs it execs run unobserved */
	}
	const char *user_preload = getenv("LD_PRELOAD");
	char preload[2 * PATH_MAX + 2];
	snprintf(preload, sizeof(preload), "%s%s%s", lib, user_preload && *user_preload ? ":" : "",
		 user_preload ? user_preload : "");
	/* a static program keeps the user's LD_PRELOAD as it is: its dynamic
	 * children get the runtime in front of it */
	if ((!is_static && user_preload && set_env("EXITSCOPE_PRELOAD_ORIG", user_preload)) ||
	    (!is_static && set_env("LD_PRELOAD", preload)) || (is_static && set_env("EXITSCOPE_EXE", path)) ||
	    set_env("EXITSCOPE_LIB", lib) || set_env("EXITSCOPE_LD", loader) ||
	    (records && set_env("EXITSCOPE_DIR", absdir)) || set_env("EXITSCOPE_FORMAT", format) ||
	    set_env("EXITSCOPE_RECORDS", records ? "on" : "off") ||
	    set_env("EXITSCOPE_FAST_PATH", fast_path ? "on" : "off"))
		return XS_EXIT_INTERNAL;
	if (!records)
		unsetenv("EXITSCOPE_DIR");
	char num[32];
	if (log_fd >= 0) {
		snprintf(num, sizeof(num), "%d", log_fd);
		if (set_env("EXITSCOPE_LOG_FD", num))
			return XS_EXIT_INTERNAL;
	} else {
		unsetenv("EXITSCOPE_LOG_FD");	/* the runtime takes fd 2 as it finds it */
	}
	snprintf(num, sizeof(num), "%d", ctl_signal);
	if (set_env("EXITSCOPE_SIGNAL", num))
		return XS_EXIT_INTERNAL;
	snprintf(num, sizeof(num), "%lu", interval);
	if (set_env("EXITSCOPE_INTERVAL", num))
		return XS_EXIT_INTERNAL;
	snprintf(num, sizeof(num), "%lu", frequency);
	if (set_env("EXITSCOPE_PROFILE", profile ? call_graph : "off") || set_env("EXITSCOPE_FREQUENCY", num))
		return XS_EXIT_INTERNAL;
	static const char *const inner[] = { "EXITSCOPE_HANDOFF", "EXITSCOPE_DIR_FD", "EXITSCOPE_RECORD_FD",
					     "EXITSCOPE_SIGMASK", "EXITSCOPE_TICK_SCALE", "EXITSCOPE_RUN",
					     "EXITSCOPE_EXE_FD", NULL };
	for (int i = 0; inner[i]; i++)
		unsetenv(inner[i]);	/* the runtime's own, between images */
	if (run_fd >= 0) {
		/* the binary, for the run's summary at the first process's end
		 * (DESIGN.md §3.11): kept open, since the program may chroot */
		int cli_fd = open("/proc/self/exe", O_PATH);
		if (cli_fd >= 0 && cli_fd < 3) {	/* 0 says "none" to the runtime */
			int high = fcntl(cli_fd, F_DUPFD, 3);
			close(cli_fd);
			cli_fd = high;
		}
		char run[PATH_MAX + 200];
		snprintf(run, sizeof(run), "%d:%s:%d:%d:%d:%s", run_fd, run_name, (int)getpid(), log_each ? 1 : 0,
			 cli_fd < 0 ? 0 : cli_fd, absdir);
		snprintf(num, sizeof(num), "%d", dir_fd);
		if (set_env("EXITSCOPE_RUN", run) || set_env("EXITSCOPE_DIR_FD", num))
			return XS_EXIT_INTERNAL;
	}

	unsetenv(is_static ? "EXITSCOPE_PRELOAD_ORIG" : "EXITSCOPE_EXE");
	execv(is_static ? loader : path, prog_argv);
	int err = errno;
	xs_error("cannot run '%s': %s", prog_argv[0], strerror(err));
	return err == ENOENT ? XS_EXIT_NOTFOUND : err == ENOEXEC || err == EACCES ? XS_EXIT_NOEXEC
								      : XS_EXIT_INTERNAL;
}
