/*
 * The environment an exec passes on: the program's, cleaned of exitscope's
 * variables, plus the runtime's, so that the runtime follows the program
 * into every image even when the program drops LD_PRELOAD.
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

#define ENV_PREFIX XS_ENV_PREFIX

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
 * Build the environment for an exec: the program's, without any EXITSCOPE_
 * variable, plus ours. For an image the runtime is preloaded into,
 * LD_PRELOAD names it first (the program's own LD_PRELOAD follows it, and
 * comes back in the new image); exitscope-ld gets the program's LD_PRELOAD
 * as it is, and the program to load. *out points into store (pointer array
 * first, then our strings); the program's strings are used in place.
 */
int xs_exec_env(const long *envp_user, char ***out, struct xs_buf *store, int handoff_fd, uint64_t sigmask,
		const struct xs_exec_target *target)
{
	enum { OURS = 21 };
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
	if (target->loader) {
		offs[k++] = store->len;
		xs_buf_add(store, ENV_PREFIX "EXE=");
		if (user_append(store, target->exe_path) < 0)
			return -EFAULT;
		xs_buf_addc(store, 0);
		offs[k++] = store->len;
		add_var_u64(store, ENV_PREFIX "EXE_FD", (uint64_t)target->exe_fd);
	} else {
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
	}
	offs[k++] = store->len;
	add_var(store, ENV_PREFIX "LIB", g_config.lib);
	offs[k++] = store->len;
	add_var(store, ENV_PREFIX "LD", g_config.loader);
	offs[k++] = store->len;
	add_var(store, ENV_PREFIX "DIR", g_config.dir);
	offs[k++] = store->len;
	add_var(store, ENV_PREFIX "FORMAT",
		g_config.format == XS_FORMAT_TEXT ? "text" : g_config.format == XS_FORMAT_GRAMINE ? "gramine" : "none");
	offs[k++] = store->len;
	/* (the numbers in this process: see xs_runtime_fd_here) */
	int log_fd = xs_runtime_fd_here(g_config.log_fd), dir_fd = xs_runtime_fd_here(g_dir_fd);
	int record_fd = xs_record_fd_is_callers() ? xs_runtime_fd_here(g_record_fd) : -1;
	if (log_fd >= 0)
		add_var_u64(store, ENV_PREFIX "LOG_FD", (uint64_t)log_fd);
	else
		add_var(store, ENV_PREFIX "LOG_FD", "none");
	offs[k++] = store->len;
	if (g_config.no_records)
		add_var(store, ENV_PREFIX "RECORDS", "off");
	else if (dir_fd >= 0)
		add_var_u64(store, ENV_PREFIX "DIR_FD", (uint64_t)dir_fd);
	else	/* the new image opens the directory by its name */
		store->len = offs[--k];
	if (record_fd >= 0) {
		offs[k++] = store->len;
		add_var_u64(store, ENV_PREFIX "RECORD_FD", (uint64_t)record_fd);
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
	offs[k++] = store->len;
	add_var(store, ENV_PREFIX "FAST_PATH", g_config.fast_path ? "on" : "off");
	offs[k++] = store->len;
	xs_ticks_to_ns(0);	/* fixes the scale now if it is not yet */
	add_var_u64(store, ENV_PREFIX "TICK_SCALE", xs_clock_scale());
	if (g_run_fd >= 0) {
		offs[k++] = store->len;
		xs_run_env(store);
	}
	if (store->failed)
		return -ENOMEM;

	char **env = (char **)store->data;
	long j = 0;
	for (long i = 0; i < n; i++) {
		xs_copy_user(&ptr, envp_user + i, sizeof(ptr));
		const char *s = (const char *)ptr;
		if ((!target->loader && user_has_prefix(s, "LD_PRELOAD=")) || user_has_prefix(s, ENV_PREFIX))
			continue;
		env[j++] = (char *)s;
	}
	for (int i = 0; i < k; i++)
		env[j++] = store->data + offs[i];
	env[j] = NULL;
	*out = env;
	return 0;
}

