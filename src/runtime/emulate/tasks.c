/*
 * Tasks: the clone family, exec and exit.
 *
 * Dispatch is not inherited, so every new task must turn it on itself before
 * it runs program code. A fork-like child without a new stack continues
 * inside the SIGSYS handler (its copy of it) and sets itself up there. Any
 * child with a new stack, and any child sharing our memory, must continue
 * in the program's context: the handler rewrites the saved context so that
 * after its sigreturn the thread runs a stub in the allowed region
 * (boundary.S) that issues the call with the program's registers.
 *
 * Process end (exit_group, the last thread's exit, a fatal signal) and exec
 * stop the world, so the record holds every thread's final counts.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <asm/prctl.h>
#include "common/shebang.h"
#include "runtime/call.h"

struct handoff {
	void *rip;
	struct xs_thread *child;
	int kind;
	bool ctl_view;
	unsigned long program_gs;	/* what the child's %gs must be */
};
#define HANDOFF_OFFSET 152	/* below the child's sp; see boundary.S */
_Static_assert(sizeof(struct handoff) <= HANDOFF_OFFSET - 112, "the stub writes below sp-112");

void *xs_child_start_handoff(struct handoff *h);
void *xs_child_start_shared(void);
struct xs_ret2 { long ret; void *rip; };
struct xs_ret2 xs_redirect_parent(long ret);

static void *child_start(void *rip, struct xs_thread *child, long kind, bool ctl_view)
{
	if (kind == XS_KIND_PROC)
		xs_fork_child_reset(ctl_view, xs_slot_index(xs_self()));	/* %gs: the parent's */
	else if (child)
		xs_thread_activate(child);
	return rip;
}

/* Once the stub's C half is done with %gs (see xs_self), the child's base
 * is its own block, or the program's base if the program had set one. */
void *xs_child_start_handoff(struct handoff *h)
{
	unsigned long gs = h->program_gs;
	/* a fork-like child takes its parent's slot, found through %gs */
	struct xs_thread *self = h->kind == XS_KIND_PROC ? xs_self() : h->child;
	void *rip = child_start(h->rip, h->child, h->kind, h->ctl_view);
	xs_gs_claim(self, gs);
	return rip;
}

void *xs_child_start_shared(void)
{
	struct xs_thread *parent = xs_self();
	struct xs_redirect *e = &parent->redirect[parent->redirect_depth - 1];
	void *rip = child_start(e->rip, e->child, e->kind, parent->ctl_view_blocked);
	xs_gs_claim(e->kind == XS_KIND_PROC ? parent : e->child, e->program_gs);
	return rip;
}

struct xs_ret2 xs_redirect_parent(long ret)
{
	struct xs_thread *t = xs_self();
	struct xs_redirect *e = &t->redirect[t->redirect_depth - 1];
	struct xs_ret2 out = { ret, e->rip };

	/* A child that never started, or a vfork child that has exec'd or
	 * exited by now, no longer needs its block. */
	if (e->child && ((unsigned long)ret > -4096UL || (e->flags & CLONE_VFORK)))
		xs_thread_free(e->child);
	if ((e->flags & CLONE_VFORK) && (long)ret > 0)
		xs_runtime_fds_vm_end((int)ret);
	long slot = (unsigned long)e->nr < XS_NR_SYSCALLS ? e->nr : XS_NR_OTHER;
	xs_count_return(t, slot, ret, e->t0);
	xs_sys2(SYS_arch_prctl, ARCH_SET_GS, e->program_gs);	/* the parent's, as it was */
	t->redirect_depth--;	/* last: until here a sample is the program's call (profile/sampler.c) */
	return out;
}

enum xs_outcome xs_task_clone(struct xs_thread *t, long nr, const long *a, ucontext_t *uc, uint64_t t0,
			      long *ret)
{
	static int warned_depth;
	greg_t *r = uc->uc_mcontext.gregs;
	unsigned long flags;
	unsigned long stack = 0;

	switch (nr) {
	case SYS_fork:
		flags = SIGCHLD;
		break;
	case SYS_vfork:
		flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
		break;
	case SYS_clone:
		flags = (unsigned long)a[0];
		stack = (unsigned long)a[1];
		break;
	default: {	/* clone3 */
		struct clone_args args;
		memset(&args, 0, sizeof(args));
		if ((unsigned long)a[1] < 64 || xs_copy_user(&args, (void *)a[0], 64) < 0) {
			/* the kernel will refuse it the same way */
			*ret = xs_syscall6(nr, a[0], a[1], 0, 0, 0, 0);
			return XS_RETURNED;
		}
		flags = args.flags;
		if (args.stack)
			stack = args.stack + args.stack_size;
		break;
	}
	}

	bool view = t->ctl_view_blocked;	/* the child's block starts wiped */
	if (!(flags & CLONE_VM) && !stack) {
		/* fork-like: the child continues here, in its own copy. */
		*ret = xs_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		if (*ret == 0) {
			if (flags & CLONE_CLEAR_SIGHAND)
				xs_signals_init();	/* our handlers went too */
			xs_fork_child_reset(view, xs_slot_index(t));
			return XS_NEW_PROCESS;
		}
		return XS_RETURNED;
	}

	long kind = !(flags & CLONE_VM) ? XS_KIND_PROC
		  : (flags & CLONE_THREAD) ? XS_KIND_THREAD : XS_KIND_VMPROC;
	if (t->redirect_depth == XS_REDIRECT_DEPTH) {
		xs_warn_once(&warned_depth, "exitscope: clone nested too deeply in signal handlers; "
					    "running it unredirected\n");
		*ret = xs_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		return XS_RETURNED;
	}
	struct xs_thread *child = NULL;
	if (kind != XS_KIND_PROC)
		child = xs_thread_alloc((enum xs_task_kind)kind, kind == XS_KIND_THREAD ? t->pid : 0);
	if (child) {
		child->ctl_view_blocked = t->ctl_view_blocked;
		child->ctl_epoch = t->ctl_epoch;
		/* the kernel resets a new thread's sigaltstack; a vfork child
		 * keeps its parent's */
		xs_sig_altstack_task(xs_slot_index(child), t, (flags & CLONE_VFORK) != 0);
	}
	struct xs_redirect *e = &t->redirect[t->redirect_depth];
	e->rip = (void *)r[REG_RIP];
	e->rsp = (unsigned long)r[REG_RSP];
	e->rbp = (unsigned long)r[REG_RBP];
	e->nr = nr;
	e->t0 = t0;
	e->child = child;
	e->kind = kind;
	e->flags = flags;
	/* the stubs find the block through %gs until they put this back */
	xs_sys2(SYS_arch_prctl, ARCH_GET_GS, &e->program_gs);
	if (stack) {
		struct handoff h = { e->rip, child, (int)kind, t->ctl_view_blocked, e->program_gs };
		if (xs_copy_user((char *)stack - HANDOFF_OFFSET, &h, sizeof(h)) < 0) {
			if (child)
				xs_thread_free(child);
			*ret = -EFAULT;
			return XS_RETURNED;
		}
		r[REG_RIP] = (greg_t)xs_stub_clone_newstack;
	} else {
		r[REG_RIP] = (greg_t)xs_stub_clone_samestack;
	}
	xs_sys2(SYS_arch_prctl, ARCH_SET_GS, t);
	t->redirect_depth++;
	r[REG_RAX] = nr;
	return XS_ELSEWHERE;
}

/* ---- exec ---- */

/* The record of the window that exec closes goes to the new image in a
 * memfd; the new image appends it only once it runs, i.e. if exec worked. */
static long make_handoff(void *arg)
{
	struct xs_thread *t = arg;
	struct xs_buf json = { .grow = xs_buf_mmap_grow }, text = { .grow = xs_buf_mmap_grow };
	struct xs_window *w = xs_window_collect(t, "exec", NULL, NULL);
	long fd = -ENOMEM;

	if (!w)
		return (int)fd;
	if (t->kind == XS_KIND_THREAD) {
		xs_window_take_unwritten(&json);
		w->has_profile = xs_profile_close_window(w->profile_file, &w->profile_samples);
	}
	xs_window_format(w, &json, &text);
	if (json.failed || text.failed)
		goto out;
	fd = xs_fd_make(SYS_memfd_create, "exitscope-handoff", 0, 0, 0);
	if (fd < 0)
		goto out;
	/* out of the way of the new image's loader and program */
	fd = xs_fd_out_of_reach(fd, false);
	struct xs_handoff_header hdr = { XS_HANDOFF_MAGIC, json.len, text.len, w->seq + 1 };
	const void *parts[4] = { &hdr, &w->total, json.data, text.data };
	size_t sizes[4] = { sizeof(hdr), sizeof(w->total), json.len, text.len };
	for (int i = 0; i < 4; i++)
		if (xs_write_all((int)fd, parts[i], sizes[i]) < 0) {
			xs_sys1(SYS_close, fd);
			fd = -EIO;
			break;
		}
out:
	xs_window_free(w);
	xs_buf_mmap_free(&json);
	xs_buf_mmap_free(&text);
	return fd;
}

/* How the runtime follows the image an exec starts. */
enum exec_route {
	EXEC_UNFOLLOWED,	/* setuid/setgid, not x86-64: the record ends here */
	EXEC_PRELOAD,		/* dynamically linked: LD_PRELOAD */
	EXEC_LOADER,		/* statically linked: exitscope-ld */
};

/*
 * Which route for the image that path starts? A script goes the way of its
 * interpreter (exitscope-ld follows the "#!" lines itself). When unsure,
 * and when the kernel will refuse the exec anyway (no permission, a noexec
 * mount), the preload route: the exec as the program made it. For the
 * loader, *exe_fd is the file, open for the new image.
 */
static enum exec_route exec_route(int dirfd, const char *user_path, int flags, int depth, long *exe_fd)
{
	char head[XS_SHEBANG_MAX], first = 0;
	/* the kernel reads the program's path itself: no copy on this stack */
	xs_copy_user(&first, user_path, 1);
	long fd;
	bool self = depth == 0 && g_config.exe_fd >= 0 && xs_self_exe_path(user_path);
	if (self)	/* exitscope-ld to the kernel: the program we loaded */
		fd = xs_sys3(SYS_fcntl, g_config.exe_fd, F_DUPFD_CLOEXEC, 0);
	else if (!first && (flags & AT_EMPTY_PATH))
		fd = xs_sys3(SYS_fcntl, dirfd, F_DUPFD_CLOEXEC, 0);
	else
		fd = xs_sys4(SYS_openat, dirfd, user_path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return EXEC_PRELOAD;
	enum exec_route route = EXEC_UNFOLLOWED;
	struct stat st;
	struct statfs sfs;
	long got = xs_sys4(SYS_pread64, fd, head, sizeof(head) - 1, 0);
	if (xs_sys2(SYS_fstat, fd, &st) < 0 || got < 4)
		goto out;
	if (((st.st_mode & S_ISUID) && st.st_uid != (uid_t)xs_sys0(SYS_geteuid)) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != (gid_t)xs_sys0(SYS_getegid)))
		goto out;
	long access = self ? 0 : xs_sys4(SYS_faccessat2, dirfd, user_path, X_OK, AT_EACCESS | (flags & AT_EMPTY_PATH));
	if ((access < 0 && access != -ENOSYS) || (xs_sys2(SYS_fstatfs, fd, &sfs) == 0 && (sfs.f_flags & ST_NOEXEC))) {
		route = EXEC_PRELOAD;
		goto out;
	}
	char *interp, *arg;
	bool complete;
	if (xs_shebang(head, (size_t)got, &interp, &arg, &complete)) {
		route = depth < 4 && *interp ? exec_route(AT_FDCWD, interp, 0, depth + 1, NULL) : EXEC_UNFOLLOWED;
		goto out;
	}
	Elf64_Ehdr eh;
	if ((size_t)got < sizeof(eh) || memcmp(head, ELFMAG, SELFMAG))
		goto out;
	memcpy(&eh, head, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		goto out;
	/* what binfmt_elf itself refuses with ENOEXEC (type, program header
	 * size and count, headers cut short): the exec as the program made it,
	 * so the caller's execve fails as natively */
	size_t phsize = (size_t)eh.e_phnum * sizeof(Elf64_Phdr);
	if ((eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || eh.e_phentsize != sizeof(Elf64_Phdr) || phsize == 0 ||
	    phsize > 65536) {
		route = EXEC_PRELOAD;
		goto out;
	}
	route = g_config.loader[0] ? EXEC_LOADER : EXEC_UNFOLLOWED;
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (xs_sys4(SYS_pread64, fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)) != sizeof(ph)) {
			route = EXEC_PRELOAD;
			break;
		}
		if (ph.p_type == PT_INTERP) {
			route = EXEC_PRELOAD;
			break;
		}
	}
out:
	if (route == EXEC_LOADER && exe_fd) {
		/* inherited by the new image only: high, out of the way */
		*exe_fd = xs_sys3(SYS_fcntl, fd, F_DUPFD, 3);
		*exe_fd = xs_fd_out_of_reach(*exe_fd, false);
		if (*exe_fd < 0)
			route = EXEC_UNFOLLOWED;
	}
	xs_sys1(SYS_close, fd);
	return route;
}

/*
 * exec: the world stays stopped and every signal blocked through the call,
 * as natively no handler of the old image runs once execve is issued. A
 * followed image gets the closing window through a memfd and restores the
 * program's signal mask itself; for an image the runtime cannot enter
 * (static, setuid) the record is written now and the mask restored first.
 */
long xs_task_exec(struct xs_thread *t, long nr, const long *a, ucontext_t *uc)
{
	const long *envp = (const long *)(nr == SYS_execve ? a[2] : a[3]);
	const char *path = (const char *)(nr == SYS_execve ? a[0] : a[1]);
	long argv = nr == SYS_execve ? a[1] : a[2];
	uint64_t program_mask;
	struct xs_buf store = { .grow = xs_buf_mmap_grow };
	char **env = (char **)envp;
	sigset_t old;
	long ret, exe_fd = -1;
	int fd = -1;

	memcpy(&program_mask, &uc->uc_sigmask, sizeof(program_mask));
	program_mask = xs_sig_program_view(t, program_mask);
	enum exec_route route = nr == SYS_execve ? exec_route(AT_FDCWD, path, 0, 0, &exe_fd)
						 : exec_route((int)a[0], path, (int)a[4], 0, &exe_fd);
	bool followed = route != EXEC_UNFOLLOWED;
	/* the name the kernel would give the new image (AT_EXECFN, comm) */
	char fd_name[32] = "/dev/fd/";
	char first = 0;
	xs_copy_user(&first, path, 1);
	if (route == EXEC_LOADER && nr == SYS_execveat && !first && (a[4] & AT_EMPTY_PATH)) {
		struct xs_buf b = { fd_name, strlen(fd_name), sizeof(fd_name), false, NULL };
		xs_buf_u64(&b, (uint64_t)a[0], 0);
		xs_buf_addc(&b, 0);
		path = fd_name;
	}
	struct xs_exec_target target = { .loader = route == EXEC_LOADER, .exe_path = path, .exe_fd = (int)exe_fd };
	xs_world_stop(t, &old);
	if (t->kind == XS_KIND_THREAD)
		xs_window_lock();	/* released only if exec fails */
	if (followed) {
		fd = (int)(t->kind == XS_KIND_THREAD ? xs_on_boundary_stack(make_handoff, t) : make_handoff(t));
		if (xs_exec_env(envp, &env, &store, fd, program_mask, &target) < 0)
			env = (char **)envp;	/* unreadable: the kernel will say so */
		xs_runtime_fds_for_exec(true);
	} else {
		xs_process_end(t, "exec");
		xs_world_resume(&old);
		xs_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &program_mask, NULL, 8);
	}
	if (route == EXEC_LOADER)
		ret = xs_sys3(SYS_execve, g_config.loader, argv, env);
	else if (nr == SYS_execve)
		ret = xs_sys3(SYS_execve, a[0], a[1], env);
	else
		ret = xs_sys5(SYS_execveat, a[0], a[1], a[2], env, a[4]);
	/* still here: exec failed */
	if (exe_fd >= 0)
		xs_sys1(SYS_close, exe_fd);
	if (followed) {
		xs_runtime_fds_for_exec(false);
		if (fd >= 0)
			xs_sys1(SYS_close, fd);
		xs_buf_mmap_free(&store);
		xs_world_resume(&old);
	}
	if (t->kind == XS_KIND_THREAD)
		xs_window_unlock();
	return ret;
}

/* ---- exit ---- */

struct end_args {
	struct xs_thread *t;
	const char *reason;
};

/* The last window. t: the thread that ends the process, or NULL for the
 * service thread when no program thread is left. */
static long end_locked(void *arg)
{
	struct end_args *e = arg;
	struct xs_thread *t = e->t;
	bool whole = !t || t->kind == XS_KIND_THREAD;
	struct xs_buf json = { .grow = xs_buf_mmap_grow }, text = { .grow = xs_buf_mmap_grow };
	static int warned;
	struct xs_window *w = xs_window_collect(t, e->reason, NULL, NULL);
	if (!w) {
		xs_warn_once(&warned, "exitscope: out of memory for the stats record\n");
		return -ENOMEM;
	}
	if (whole)
		w->has_profile = xs_profile_close_window(w->profile_file, &w->profile_samples);
	xs_window_format(w, &json, &text);
	int r = whole ? xs_window_write_record(w->pid, &json) : xs_append_record(w->pid, json.data, json.len);
	if (json.failed || r < 0)
		xs_warn_once(&warned, "exitscope: cannot write the stats record; it is lost with the process\n");
	xs_run_process_end(w, whole, &text);	/* the end line; the block or the run's summary */
	xs_window_commit(w);
	xs_window_free(w);
	xs_buf_mmap_free(&json);
	xs_buf_mmap_free(&text);
	return 0;
}

/* The last window: written with the world stopped and the window lock
 * held for good, so no boundary can follow it. (exec's caller holds the
 * lock already; taking it is reentrant for that case.) A vfork child,
 * which shares the parent's memory but not its lock, writes its own record
 * on the stack it has. */
void xs_process_end(struct xs_thread *t, const char *reason)
{
	struct end_args e = { t, reason };
	sigset_t old;

	xs_world_stop(t, &old);
	if (t->kind != XS_KIND_THREAD) {
		end_locked(&e);
		return;
	}
	if (strcmp(reason, "exec") != 0)
		xs_window_lock();
	xs_on_boundary_stack(end_locked, &e);
}

/* Wait (up to about 2 s) until the kernel is done with thread tid: gone,
 * or a zombie (a thread group's leader stays one while others live). */
static bool wait_task_gone(int tid)
{
	for (int i = 0; i < 2000; i++) {
		char state = xs_task_state(tid);
		if (!state || state == 'Z' || state == 'X')
			return true;
		struct timespec ts = { 0, 1000 * 1000 };
		xs_sys2(SYS_nanosleep, &ts, NULL);
	}
	return false;
}

void xs_reap_fated(void)
{
	for (uint32_t i = 0; i < g_proc->slots_used; i++) {
		struct xs_thread *t = xs_slot(i);
		uint8_t fate = __atomic_load_n(&t->fate, __ATOMIC_ACQUIRE);
		if (t->kind != XS_KIND_THREAD || t->state != XS_SLOT_LIVE || !fate || !wait_task_gone(t->tid))
			continue;
		sigset_t old;
		xs_registry_lock(&old);
		t->state = XS_SLOT_DEAD;
		uint32_t live = --g_proc->live;
		g_proc->dead++;
		xs_registry_unlock(&old);
		if (live)
			continue;
		/* The last program thread: the process ends now, as natively. */
		struct end_args e = { NULL, "exit" };
		xs_window_lock();	/* for good */
		xs_on_boundary_stack(end_locked, &e);
		if (fate == XS_FATE_EXIT)
			for (;;)
				xs_sys1(SYS_exit_group, t->fate_status);
		for (;;)
			xs_sys2(SYS_kill, xs_sys0(SYS_getpid), SIGKILL);
	}
}

void xs_task_exit_thread(struct xs_thread *t, long status)
{
	sigset_t old;
	xs_block_all_signals(&old);
	xs_profile_thread_stop(t);
	if (t->kind != XS_KIND_THREAD) {
		xs_run_note_exit(status);
		xs_process_end(t, "exit");	/* a vfork child */
	} else if (xs_thread_retire(t) == 0) {
		/* The last program thread: the process ends here, as it would
		 * natively; exit_group also takes the service thread along. */
		xs_run_note_exit(status);
		xs_process_end(t, "exit");
		for (;;)
			xs_sys1(SYS_exit_group, status);
	}
	for (;;)
		xs_sys1(SYS_exit, status);
}


void xs_task_exit_group(struct xs_thread *t, long status)
{
	xs_run_note_exit(status);
	xs_process_end(t, "exit");
	for (;;)
		xs_sys1(SYS_exit_group, status);
}
