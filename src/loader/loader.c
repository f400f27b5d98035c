/*
 * exitscope-ld runs a statically linked program behind the boundary, where
 * LD_PRELOAD cannot reach (DESIGN.md §4.8). `exitscope run`, or the runtime
 * at an exec, executes it with the program's own argv and environment plus
 * EXITSCOPE_EXE (the path as the caller gave it) and maybe EXITSCOPE_EXE_FD
 * (the file the caller checked), so the pid, the parent, job control and
 * /proc/PID/cmdline stay the program's. It then:
 *   - follows "#!" lines as the kernel would (argv becomes interpreter,
 *     its argument, script path, the rest);
 *   - maps the program (load.c) and names the process after it;
 *   - starts the runtime, the same code as libexitscope.so's, linked in;
 *   - rebuilds the initial stack: argv, the environment without exitscope's
 *     variables (its strings too, for /proc/PID/environ), the auxv of the
 *     program (AT_PHDR, AT_ENTRY, AT_BASE 0: musl's static-pie start code
 *     takes a nonzero AT_BASE for its own base), and hands the kernel the
 *     new bounds with PR_SET_MM_MAP (no privilege needed without exe_fd);
 *   - jumps to the program's entry.
 * It runs on its own stack (start.S), so the program's is free to rebuild.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/prctl.h>
#include "common/shebang.h"
#include "loader/loader.h"
#include "runtime/freestanding.h"
#include "runtime/runtime.h"

#define ENV_EXE "EXITSCOPE_EXE="
#define ENV_EXE_FD "EXITSCOPE_EXE_FD="
#define MAX_INTERP_DEPTH 4		/* as `exitscope run` and the runtime follow */

/* exit statuses as a shell gives them */
#define STATUS_NOEXEC 126
#define STATUS_NOTFOUND 127

char xs_ld_stack[65536] __attribute__((aligned(16)));
void xs_loader_enter(uintptr_t entry, uintptr_t sp) __attribute__((noreturn));
__attribute__((noreturn)) void xs_loader_main(long *sp);

/* exit_group from outside the allowed region: with the runtime on, it
 * traps, and the runtime ends the process with its records. */
__attribute__((noreturn)) static void exit_as_program(int status)
{
	__asm__ __volatile__("syscall" : : "a"(SYS_exit_group), "D"((long)status) : "rcx", "r11", "memory");
	__builtin_unreachable();
}

/* ---- before anything else: our own relocations ---- */

extern const Elf64_Dyn _DYNAMIC[] __attribute__((visibility("hidden")));
extern const Elf64_Ehdr __ehdr_start __attribute__((visibility("hidden")));

/* The kernel maps a static-pie without relocating it. Only PC-relative
 * addressing works until this has run: no pointer in data may be used. */
static void relocate_self(void)
{
	uintptr_t base = (uintptr_t)&__ehdr_start;
	const Elf64_Rela *rela = NULL;
	size_t size = 0;
	for (const Elf64_Dyn *d = _DYNAMIC; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_RELA)
			rela = (const Elf64_Rela *)(base + d->d_un.d_ptr);
		else if (d->d_tag == DT_RELASZ)
			size = d->d_un.d_val;
	}
	for (size_t i = 0; rela && i < size / sizeof(*rela); i++) {
		if (ELF64_R_TYPE(rela[i].r_info) != R_X86_64_RELATIVE)
			exit_as_program(STATUS_NOEXEC);	/* the build makes none */
		*(uint64_t *)(base + rela[i].r_offset) = base + (uint64_t)rela[i].r_addend;
	}
	/* then what the linker meant to be read-only after relocation is */
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + __ehdr_start.e_phoff);
	for (int i = 0; i < __ehdr_start.e_phnum; i++)
		if (ph[i].p_type == PT_GNU_RELRO)
			xs_sys3(SYS_mprotect, (base + ph[i].p_vaddr) & ~4095UL,
				((base + ph[i].p_vaddr + ph[i].p_memsz) & ~4095UL) - ((base + ph[i].p_vaddr) & ~4095UL),
				PROT_READ);
}

/* ---- messages ---- */

static void say(const char *s)
{
	xs_sys3(SYS_write, 2, s, strlen(s));
}

/* A path as data: a control byte (a program's file name may hold any)
 * reaches the terminal as \xNN. */
static void say_path(const char *path)
{
	char out[256];
	size_t n = 0;
	for (; *path; path++) {
		unsigned char c = (unsigned char)*path;
		if (n + 4 >= sizeof(out)) {
			xs_sys3(SYS_write, 2, out, n);
			n = 0;
		}
		if (c < 0x20 || c == 0x7f) {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = "0123456789abcdef"[c >> 4];
			out[n++] = "0123456789abcdef"[c & 15];
		} else {
			out[n++] = (char)c;
		}
	}
	xs_sys3(SYS_write, 2, out, n);
}

static char **runtime_variables(char **envp, size_t *size);
static char **g_initial_envp;
static void *g_initial_auxv;

/*
 * The program cannot be run: say why, and exit as exec's caller would see
 * it. When exitscope's runtime sent us (an exec in a run), it starts first,
 * so that what the previous image handed over (its last window) is written
 * and the process's end is on record.
 */
__attribute__((noreturn)) static void refuse(const char *path, const char *why, int status)
{
	static bool refusing;
	say("exitscope-ld: '");
	say_path(path);
	say("': ");
	say(why);
	say("\n");
	if (!refusing && g_initial_envp) {
		refusing = true;
		size_t size;
		char **config = runtime_variables(g_initial_envp, &size);
		struct xs_launch launch = { .exe_fd = -1, .auxv = g_initial_auxv };
		if (config[0])
			xs_runtime_start(config, &launch);
	}
	exit_as_program(status);
}

/* ---- the initial stack as the kernel made it ---- */

struct initial_stack {
	long argc;
	char **argv, **envp;
	Elf64_auxv_t *auxv;
	size_t nauxv;			/* pairs, AT_NULL included */
	char *top;			/* just past the AT_NULL pair */
};

static void parse_stack(long *sp, struct initial_stack *in)
{
	in->argc = sp[0];
	in->argv = (char **)(sp + 1);
	in->envp = in->argv + in->argc + 1;
	char **e = in->envp;
	while (*e)
		e++;
	in->auxv = (Elf64_auxv_t *)(e + 1);
	in->nauxv = 0;
	while (in->auxv[in->nauxv++].a_type != AT_NULL)
		;
	in->top = (char *)(in->auxv + in->nauxv);
}

static const char *env_value(char **envp, const char *name_eq)
{
	size_t n = strlen(name_eq);
	for (; *envp; envp++)
		if (!strncmp(*envp, name_eq, n))
			return *envp + n;
	return NULL;
}

static bool is_runtime_var(const char *s)
{
	return !strncmp(s, XS_ENV_PREFIX, strlen(XS_ENV_PREFIX));
}

/* ---- "#!" lines ---- */

/*
 * The argv the program gets, as a prefix of new strings followed by the
 * caller's argv[1..]: without scripts the caller's argv[0] alone; each
 * script level replaces argv[0] by the script's path and puts its
 * interpreter (and the line's argument) in front, as binfmt_script does.
 */
struct args_prefix {
	const char *s[1 + 3 * MAX_INTERP_DEPTH];
	int n;
	char lines[MAX_INTERP_DEPTH + 1][XS_SHEBANG_MAX];	/* the last: one level too many */
};

/* The interpreter line of the file at fd, split in place: true if it is one. */
static bool script_line(int fd, char *line, const char **interp, const char **arg, const char *path)
{
	long got = xs_sys4(SYS_pread64, fd, line, XS_SHEBANG_MAX - 1, 0);
	char *i, *a;
	bool complete;
	if (got < 0 || !xs_shebang(line, (size_t)got, &i, &a, &complete))
		return false;
	if (!complete && got == XS_SHEBANG_MAX - 1)
		refuse(path, "its \"#!\" line is too long", STATUS_NOEXEC);
	if (!*i)
		refuse(path, "bad interpreter line", STATUS_NOEXEC);
	*interp = i;
	*arg = a;
	return true;
}

static int open_executable(const char *path)
{
	long fd = xs_sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		refuse(path, fd == -ENOENT ? "no such file" : fd == -EACCES ? "permission denied" : "cannot open it",
		       fd == -ENOENT ? STATUS_NOTFOUND : STATUS_NOEXEC);
	long access = xs_sys4(SYS_faccessat2, AT_FDCWD, path, X_OK, AT_EACCESS);
	if (access < 0 && access != -ENOSYS)
		refuse(path, "permission denied", STATUS_NOEXEC);
	return (int)fd;
}

/* Follow the "#!" lines from the file at fd (given as path) to the ELF
 * program: its descriptor, with the argv prefix filled in. */
static int resolve_scripts(int fd, const char *path, const char *argv0, struct args_prefix *pre, const char **prog)
{
	pre->s[0] = argv0;
	pre->n = 1;
	*prog = path;
	for (int depth = 0;; depth++) {
		const char *interp, *arg;
		if (!script_line(fd, pre->lines[depth], &interp, &arg, *prog))
			return fd;
		if (depth == MAX_INTERP_DEPTH)
			refuse(path, "too many levels of interpreters", STATUS_NOEXEC);
		const char *rest[3 * MAX_INTERP_DEPTH];
		int k = 0;
		for (int i = 1; i < pre->n; i++)
			rest[k++] = pre->s[i];
		pre->n = 0;
		pre->s[pre->n++] = interp;
		if (arg)
			pre->s[pre->n++] = arg;
		pre->s[pre->n++] = *prog;
		for (int i = 0; i < k; i++)
			pre->s[pre->n++] = rest[i];
		xs_sys1(SYS_close, fd);
		fd = open_executable(interp);
		*prog = interp;
	}
}

/* ---- the program's initial stack ---- */

/* A copy of exitscope's variables, for the runtime's start-up: the
 * environment the program gets has none. *size: the mapping's. */
static char **runtime_variables(char **envp, size_t *size)
{
	size_t n = 0, bytes = 0;
	for (char **e = envp; *e; e++)
		if (is_runtime_var(*e)) {
			n++;
			bytes += strlen(*e) + 1;
		}
	*size = (n + 1) * sizeof(char *) + bytes;
	char **vars = (char **)xs_syscall6(SYS_mmap, 0, (long)*size, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((unsigned long)vars > -4096UL)
		refuse(env_value(envp, ENV_EXE), "out of memory", STATUS_NOEXEC);
	char *s = (char *)(vars + n + 1);
	size_t k = 0;
	for (char **e = envp; *e; e++)
		if (is_runtime_var(*e)) {
			size_t len = strlen(*e) + 1;
			memcpy(s, *e, len);
			vars[k++] = s;
			s += len;
		}
	vars[k] = NULL;
	return vars;
}

static size_t args_size(const struct args_prefix *pre, const struct initial_stack *in)
{
	size_t n = 0;
	for (int i = 0; i < pre->n; i++)
		n += strlen(pre->s[i]) + 1;
	for (long i = 1; i < in->argc; i++)
		n += strlen(in->argv[i]) + 1;
	return n;
}

/* Drop exitscope's variables from the environment, strings and all: the
 * kept strings move down over the dropped ones (the kernel lays them out
 * one after the other, in envp's order). Returns the new end of the
 * strings, or NULL when they are not laid out so (then only the pointers
 * go). */
static char *compact_environment(char **envp, char **kept, long *nkept)
{
	char *out = envp[0], *next = envp[0];
	bool contiguous = true;
	*nkept = 0;
	for (char **e = envp; *e; e++) {
		if (*e != next)
			contiguous = false;
		size_t len = strlen(*e) + 1;
		next = *e + len;
		if (!is_runtime_var(*e))
			kept[(*nkept)++] = *e;
	}
	if (!contiguous || !envp[0])
		return NULL;
	char *end = next;
	for (long i = 0; i < *nkept; i++) {
		size_t len = strlen(kept[i]) + 1;
		memmove(out, kept[i], len);
		kept[i] = out;
		out += len;
	}
	memset(out, 0, (size_t)(end - out));
	return out;
}

struct new_stack {
	uintptr_t sp;
	uintptr_t arg_start, arg_end, env_start, env_end;
	Elf64_auxv_t *auxv;
	size_t nauxv;
};

/*
 * Lay out argc, argv, envp and the program's auxv just below where the
 * kernel's auxv ended (above it are AT_RANDOM's bytes and the strings),
 * with a block of new strings (AT_EXECFN's, and the argv of a script)
 * between. Everything is first built aside, since the new frame may cover
 * the old one.
 */
static void build_stack(const struct initial_stack *in, const struct args_prefix *pre, const char *execfn,
			const struct xs_ld_program *p, struct new_stack *out)
{
	bool script = pre->n > 1;
	size_t strings = strlen(execfn) + 1 + (script ? args_size(pre, in) : 0);
	long argc = pre->n + in->argc - 1;
	long nenv = 0;
	while (in->envp[nenv])
		nenv++;
	size_t frame = (size_t)(1 + argc + 1 + nenv + 1) * sizeof(long) + in->nauxv * sizeof(Elf64_auxv_t);
	size_t scratch_size = (frame + strings + 4095) & ~4095UL;
	char *scratch = (char *)xs_syscall6(SYS_mmap, 0, (long)scratch_size, PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((long)scratch < 0 && (long)scratch > -4096)
		refuse(execfn, "out of memory", STATUS_NOEXEC);

	/* where things go */
	uintptr_t block = ((uintptr_t)in->top - strings) & ~15UL;
	uintptr_t sp = (block - frame) & ~15UL;
	long *f = (long *)scratch;
	char *s = scratch + frame, *s_at = (char *)block;

	/* the strings: AT_EXECFN's, then a script's argv */
	size_t len = strlen(execfn) + 1;
	memcpy(s, execfn, len);
	uintptr_t execfn_at = (uintptr_t)s_at;
	s += len, s_at += len;
	f[0] = argc;
	long k = 1;
	if (script) {
		out->arg_start = (uintptr_t)s_at;
		for (long i = 0; i < argc; i++) {
			const char *a = i < pre->n ? pre->s[i] : in->argv[i - pre->n + 1];
			len = strlen(a) + 1;
			memcpy(s, a, len);
			f[k++] = (long)s_at;
			s += len, s_at += len;
		}
		out->arg_end = (uintptr_t)s_at;
	} else {
		for (long i = 0; i < argc; i++)
			f[k++] = (long)in->argv[i];
		out->arg_start = (uintptr_t)in->argv[0];
		out->arg_end = (uintptr_t)in->argv[argc - 1] + strlen(in->argv[argc - 1]) + 1;
	}
	f[k++] = 0;

	/* the environment */
	char **kept = (char **)(f + k);
	long nkept;
	char *env_end = compact_environment(in->envp, kept, &nkept);
	out->env_start = (uintptr_t)(nkept ? kept[0] : in->envp[0]);
	out->env_end = env_end ? (uintptr_t)env_end
			       : nkept ? (uintptr_t)kept[nkept - 1] + strlen(kept[nkept - 1]) + 1 : out->env_start;
	k += nkept;
	f[k++] = 0;

	/* the auxv, the program's */
	Elf64_auxv_t *av = (Elf64_auxv_t *)(f + k);
	for (size_t i = 0; i < in->nauxv; i++) {
		av[i] = in->auxv[i];
		switch (av[i].a_type) {
		case AT_PHDR: av[i].a_un.a_val = p->phdr; break;
		case AT_PHENT: av[i].a_un.a_val = sizeof(Elf64_Phdr); break;
		case AT_PHNUM: av[i].a_un.a_val = p->eh.e_phnum; break;
		case AT_ENTRY: av[i].a_un.a_val = p->entry; break;
		case AT_BASE: av[i].a_un.a_val = 0; break;
		case AT_EXECFN: av[i].a_un.a_val = execfn_at; break;
		}
	}
	size_t used = (size_t)((char *)(av + in->nauxv) - scratch);

	/* into place: the frame, zeros up to the strings, the strings */
	memmove((void *)sp, scratch, used);
	memset((void *)(sp + used), 0, block - (sp + used));
	memcpy((void *)block, scratch + frame, strings);
	xs_sys2(SYS_munmap, scratch, scratch_size);
	out->sp = sp;
	out->auxv = (Elf64_auxv_t *)(sp + ((char *)av - scratch));
	out->nauxv = in->nauxv;
}

/* Tell the kernel where the program's code, data, arguments, environment
 * and auxv are (/proc/PID/cmdline, environ, auxv, stat read them). */
static bool set_memory_map(const struct xs_ld_program *p, const struct new_stack *st)
{
	unsigned long stat[48];
	if (!xs_self_stat(stat, 47))
		stat[47] = 0;
	struct prctl_mm_map m = {
		.start_code = p->start_code,
		.end_code = p->end_code,
		.start_data = p->start_data,
		.end_data = p->end_data,
		.start_brk = stat[47],
		.brk = (uint64_t)xs_sys1(SYS_brk, 0),
		.start_stack = st->sp,
		.arg_start = st->arg_start,
		.arg_end = st->arg_end,
		.env_start = st->env_start,
		.env_end = st->env_end,
		.auxv = (__u64 *)st->auxv,
		.auxv_size = (uint32_t)(st->nauxv * sizeof(Elf64_auxv_t)),
		.exe_fd = (uint32_t)-1,
	};
	if (!m.start_brk)
		m.start_brk = m.brk;
	return xs_syscall6(SYS_prctl, PR_SET_MM, PR_SET_MM_MAP, (long)&m, sizeof(m), 0, 0) == 0;
}

void xs_loader_main(long *sp)
{
	relocate_self();
	struct initial_stack in;
	parse_stack(sp, &in);
	g_initial_envp = in.envp;
	g_initial_auxv = in.auxv;
	const char *exe = env_value(in.envp, ENV_EXE), *exe_fd = env_value(in.envp, ENV_EXE_FD);
	if (!exe || !*exe || in.argc < 1) {
		say("exitscope-ld runs statically linked programs for exitscope: "
		    "use 'exitscope run PROGRAM [ARG...]'\n");
		exit_as_program(2);
	}

	int fd;
	if (exe_fd) {
		fd = (int)xs_strtol(exe_fd, NULL, 10);
		xs_sys3(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
	} else {
		fd = open_executable(exe);
	}
	static struct args_prefix pre;
	static struct xs_ld_program prog;
	const char *path;
	prog.fd = resolve_scripts(fd, exe, in.argv[0], &pre, &path);
	const char *err = xs_ld_check(&prog);
	if (!err)
		err = xs_ld_map(&prog);
	if (err)
		refuse(path, err, STATUS_NOEXEC);

	/* the name the kernel would have given: the file's, as exec'd */
	const char *base = strrchr(exe, '/');
	char comm[16] = { 0 };
	base = base ? base + 1 : exe;
	for (size_t i = 0; i < sizeof(comm) - 1 && base[i]; i++)
		comm[i] = base[i];
	xs_sys2(SYS_prctl, PR_SET_NAME, comm);

	/* the runtime's configuration, before the environment loses it */
	size_t config_size;
	char **config = runtime_variables(in.envp, &config_size);
	struct new_stack st;
	build_stack(&in, &pre, exe, &prog, &st);
	bool mapped = set_memory_map(&prog, &st);
	if (prog.exec_stack)
		xs_sys3(SYS_mprotect, st.sp & ~4095UL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN);

	/* last, so that what it reads of /proc is the program's */
	struct xs_launch launch = { .exe_fd = prog.fd, .auxv = st.auxv };
	xs_runtime_start(config, &launch);
	g_envp = NULL;	/* the runtime read its configuration; none of the copy stays */
	xs_sys2(SYS_munmap, config, config_size);
	if (!mapped)
		xs_log("exitscope: cannot hand the kernel the program's memory map (PR_SET_MM_MAP); "
		       "/proc/PID/cmdline, environ and auxv show exitscope-ld's\n");
	xs_loader_enter(prog.entry, st.sp);
}
