/*
 * Start-up: the runtime's configuration (environment variables set by
 * `exitscope run`, removed before the program sees its environment), the
 * window an exec hands over, and the order in which the parts start.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <asm/prctl.h>
#include <linux/prctl.h>
#include <sys/prctl.h>
#include "runtime/runtime.h"
#include "runtime/profile/maps.h"

struct xs_config g_config = { .log_fd = -1, .exe_fd = -1 };

#define ENV_PREFIX XS_ENV_PREFIX

/* ---- start-up ---- */

static void copy_env(char *dst, size_t size, const char *name)
{
	const char *v = xs_getenv(name);
	dst[0] = 0;
	if (v && strlen(v) < size)
		strcpy(dst, v);
}

struct own_file {
	char *out;
	size_t size;
};

static int own_file_one(const struct xs_map *m, void *arg)
{
	struct own_file *f = arg;
	uintptr_t self = (uintptr_t)own_file_one;
	if (self < m->start || self >= m->end)
		return 0;
	if (m->path[0] == '/' && strlen(m->path) < f->size)
		strcpy(f->out, m->path);
	return 1;
}

/* The path of the file mapping that holds the runtime's code (the one
 * dladdr would name, but absolute), into out; unchanged when not found. */
static void find_own_file(char *out, size_t size)
{
	struct own_file f = { out, size };
	struct xs_buf scratch = { .grow = xs_buf_mmap_grow };
	if (xs_buf_mmap_grow(&scratch, 8192) < 0)
		return;
	xs_maps_walk(own_file_one, &f, scratch.data, scratch.cap);
	xs_buf_mmap_free(&scratch);
}

static void read_config(void)
{
	const char *v;
	copy_env(g_config.lib, sizeof(g_config.lib), ENV_PREFIX "LIB");
	copy_env(g_config.loader, sizeof(g_config.loader), ENV_PREFIX "LD");
	copy_env(g_config.dir, sizeof(g_config.dir), ENV_PREFIX "DIR");
	copy_env(g_config.preload_orig, sizeof(g_config.preload_orig), ENV_PREFIX "PRELOAD_ORIG");
	g_config.have_preload_orig = xs_getenv(ENV_PREFIX "PRELOAD_ORIG") != NULL;
	/* (the call says "(unreachable)/..." for a directory outside our root) */
	if (!g_config.dir[0] && (xs_sys2(SYS_getcwd, g_config.dir, sizeof(g_config.dir)) < 0 ||
				 g_config.dir[0] != '/'))
		strcpy(g_config.dir, ".");
	v = xs_getenv(ENV_PREFIX "FAST_PATH");
	g_config.fast_path = !v || strcmp(v, "off") != 0;
	xs_clock_init();
	v = xs_getenv(ENV_PREFIX "SIGNAL");
	g_config.signal = v ? (int)xs_strtol(v, NULL, 10) : SIGUSR1;
	if (g_config.signal < 0 || g_config.signal > 64 || g_config.signal == SIGKILL ||
	    g_config.signal == SIGSTOP || g_config.signal == SIGSYS)
		g_config.signal = 0;
	g_ctl_sig = g_config.signal;
	v = xs_getenv(ENV_PREFIX "PROFILE");
	g_config.profile = !v || !*v || !strcmp(v, "off") ? XS_PROFILE_OFF
			 : !strcmp(v, "fp")		  ? XS_PROFILE_FP
			 : !strcmp(v, "none")		  ? XS_PROFILE_NONE : XS_PROFILE_DWARF;
	v = xs_getenv(ENV_PREFIX "FREQUENCY");
	g_config.frequency = v ? (uint32_t)xs_strtoul(v, NULL, 10) : 0;
	if (g_config.frequency < 1 || g_config.frequency > 100000)
		g_config.frequency = XS_DEFAULT_FREQUENCY;
	v = xs_getenv(ENV_PREFIX "INTERVAL");
	g_config.interval_ms = v ? xs_strtoull(v, NULL, 10) : 0;
	v = xs_getenv(ENV_PREFIX "FORMAT");
	g_config.format = !v || !strcmp(v, "text") ? XS_FORMAT_TEXT
			: !strcmp(v, "gramine")     ? XS_FORMAT_GRAMINE : XS_FORMAT_NONE;
	/* the log: stderr as the program starts, or a descriptor that
	 * `exitscope run --log` or the previous image opened */
	v = xs_getenv(ENV_PREFIX "LOG_FD");
	if (!v || strcmp(v, "none") != 0) {
		long fd = v ? xs_strtol(v, NULL, 10) : 2;
		/* stderr stays the program's: the runtime takes a copy */
		if (!v || fd == 2)
			fd = xs_sys3(SYS_fcntl, 2, F_DUPFD_CLOEXEC, 3);
		xs_runtime_fd_adopt(fd, &g_config.log_fd, XS_FD_FORK_SHARED);
	}
	v = xs_getenv(ENV_PREFIX "RECORDS");
	g_config.no_records = v && !strcmp(v, "off");
	if (g_config.no_records)
		g_config.profile = XS_PROFILE_OFF;	/* profiles are files too */
	v = xs_getenv(ENV_PREFIX "DIR_FD");
	if (v && !g_config.no_records)
		xs_runtime_fd_adopt(xs_strtol(v, NULL, 10), &g_dir_fd, XS_FD_FORK_SHARED);
	else if (!g_config.no_records)
		xs_runtime_fd_adopt(xs_fd_make(SYS_openat, AT_FDCWD, g_config.dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0),
				    &g_dir_fd, XS_FD_FORK_SHARED);
	xs_run_config(xs_getenv(ENV_PREFIX "RUN"), xs_getenv(ENV_PREFIX "HANDOFF") != NULL);
	v = xs_getenv(ENV_PREFIX "RECORD_FD");
	if (v) {
		/* same pid: the previous image's file (see xs_record_open) */
		xs_runtime_fd_adopt(xs_strtol(v, NULL, 10), &g_record_fd, 0);
		g_record_pid = (int)xs_sys0(SYS_getpid);
	}
	if (!g_config.lib[0] && !g_config.loader[0]) {
		/* preloaded by hand: find ourselves, to follow execs */
		find_own_file(g_config.lib, sizeof(g_config.lib));
	}
}

/* Leave the program the environment it would have had without us. This
 * edits the environment array in place rather than calling unsetenv/setenv,
 * which some programs (bash) replace with their own.
 *
 * g_envp is the array on the initial stack (environ: nothing has run setenv
 * before the runtime starts), and the auxiliary vector
 * follows its terminating NULL. Removing entries ends the array earlier;
 * a program that finds the auxv by walking past envp (Go does) would then
 * read the stale slots as auxv pairs and miss AT_PAGESZ ("failed to get
 * system page size"). So the freed slots are zeroed: such a reader finds
 * an empty auxv at once (Go then reads /proc/self/auxv), while glibc keeps
 * the auxv address it took at start-up. */
static void clean_environment(void)
{
	static char preload_var[sizeof("LD_PRELOAD=") + sizeof(g_config.preload_orig)];
	char **out = g_envp;
	if (!g_envp)
		return;
	for (char **e = g_envp; *e; e++) {
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

/* /proc/PID/environ reads the environment area exec left, whatever the
 * array now says: our LD_PRELOAD and exitscope's variables included. The
 * strings stay where they are (the program's libraries may hold pointers
 * into them); the kernel is pointed at a clean copy instead, with
 * PR_SET_MM_MAP (no privilege needed without exe_fd) and every other bound
 * as /proc/self/stat gives it. Only while the process has one thread: the
 * current brk is one of those bounds, and another thread could move it
 * meanwhile. Without CONFIG_CHECKPOINT_RESTORE the view stays as it was. */
static void environ_view(void)
{
	unsigned long f[52];
	size_t size = 0;
	for (char **e = g_envp; *e; e++)
		size += strlen(*e) + 1;
	if (!size || !xs_self_stat(f, 51) || f[20] != 1 || !f[50])
		return;
	long copy = xs_syscall6(SYS_mmap, 0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((unsigned long)copy > -4096UL)
		return;
	char *p = (char *)copy;
	for (char **e = g_envp; *e; e++) {
		size_t n = strlen(*e) + 1;
		memcpy(p, *e, n);
		p += n;
	}
	struct prctl_mm_map m = {
		.start_code = f[26], .end_code = f[27], .start_data = f[45], .end_data = f[46],
		.start_brk = f[47], .brk = (uint64_t)xs_sys1(SYS_brk, 0), .start_stack = f[28],
		.arg_start = f[48], .arg_end = f[49], .env_start = (uint64_t)copy, .env_end = (uint64_t)copy + size,
		.exe_fd = (uint32_t)-1,
	};
	if (xs_sys5(SYS_prctl, PR_SET_MM, PR_SET_MM_MAP, &m, sizeof(m), 0) != 0)
		xs_sys2(SYS_munmap, copy, size);
}

/* The window that the exec closed, handed over by the old image. */
static void take_handoff(void)
{
	const char *v = xs_getenv(ENV_PREFIX "HANDOFF");
	if (!v)
		return;
	int fd = (int)xs_strtol(v, NULL, 10);
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
	if (xs_run_logs_blocks_of(g_proc->pid))	/* the others' only with --log-each */
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
	uint64_t m = xs_strtoull(mask, NULL, 10) & ~XS_SIGBIT(SIGSYS);
	xs_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &m, NULL, 8);
}

/* Everything start-up does, with the process's initial environment array
 * (its auxiliary vector follows it): from xs_start when preloaded; from
 * exitscope-ld for a static program (src/loader/), with a copy of
 * exitscope's variables (the program's environment has none left) and
 * what it loaded. */
void xs_runtime_start(char **envp, const struct xs_launch *launch)
{
	xs_env_capture(envp, launch ? launch->auxv : NULL);	/* before clean_environment edits the array */
	if (launch)
		xs_runtime_fd_adopt(launch->exe_fd, &g_config.exe_fd, XS_FD_FORK_SHARED);
	const char *mask = xs_getenv(ENV_PREFIX "SIGMASK");
	const char *failure = NULL;

	read_config();
	if (xs_counters_init() < 0) {
		failure = "exitscope: cannot map the counters; the program runs unobserved\n";
		goto out;
	}
	xs_record_open();	/* a refusal is on the log; records wait in memory */
	take_handoff();
	if (!launch) {
		clean_environment();
		environ_view();
	}
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
	xs_call_init();
	xs_fast_init();
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
	unsigned long gs = 0;
	xs_sys2(SYS_arch_prctl, ARCH_GET_GS, &gs);
	xs_gs_claim(t, gs);
	if (xs_windows_init() < 0 || xs_creds_init() < 0 || xs_control_start() < 0)
		failure = "exitscope: cannot start the service thread; windows close only at exit\n";
out:
	restore_program_mask(mask);
	if (failure)
		xs_log(failure);
}

/* ld.so calls a preloaded object's constructors with argc, argv and the
 * initial envp (glibc's _dl_init), as it does DT_INIT. */
__attribute__((constructor)) static void xs_start(int argc, char **argv, char **envp)
{
	xs_runtime_start(envp, NULL);
}
