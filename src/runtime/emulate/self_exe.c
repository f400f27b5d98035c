/*
 * What a program that exitscope-ld loaded sees of itself. To the kernel
 * /proc/PID/exe is exitscope-ld; the program asks for its own path (Go's
 * os.Executable, busybox re-running its applets) and gets it: readlink of
 * /proc/self/exe, /proc/thread-self/exe and /proc/<own pid or tid>/exe
 * answers with the link of the program's file, kept open by the runtime
 * (so a deleted or renamed program reads as the kernel would show it), and
 * an exec of those paths loads the program again (emulate/tasks.c). Other
 * processes, and paths relative to a /proc directory, still see
 * exitscope-ld (DESIGN.md §4.8).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include "runtime/runtime.h"

/* "/proc/self/fd/N" for the program's file. */
static void exe_link_path(char *buf, size_t size)
{
	struct xs_buf b = { buf, 0, size, false, NULL };
	xs_buf_add(&b, "/proc/self/fd/");
	xs_buf_u64(&b, (uint64_t)g_config.exe_fd, 0);
	xs_buf_addc(&b, 0);
}

static bool is_number(const char *s, size_t len, long *value)
{
	*value = 0;
	if (!len || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*value = *value * 10 + (s[i] - '0');
	}
	return true;
}

bool xs_self_exe_path(const char *user_path)
{
	char p[40];
	size_t n = 0;
	/* the program's string, byte by byte: it may end at a page's end */
	for (; n < sizeof(p); n++)
		if (xs_copy_user(&p[n], user_path + n, 1) < 0 || !p[n])
			break;
	if (n == sizeof(p) || strncmp(p, "/proc/", 6) != 0 || n < 10 || strcmp(p + n - 4, "/exe") != 0)
		return false;
	const char *dir = p + 6;
	size_t len = n - 10;
	long id;
	if ((len == 4 && !strncmp(dir, "self", 4)) || (len == 11 && !strncmp(dir, "thread-self", 11)))
		return true;
	return is_number(dir, len, &id) && (id == xs_sys0(SYS_getpid) || id == xs_sys0(SYS_gettid));
}

bool xs_self_exe_readlink(long nr, const long *a, long *ret)
{
	const char *path = (const char *)(nr == SYS_readlink ? a[0] : a[1]);
	if (g_config.exe_fd < 0 || !xs_self_exe_path(path))
		return false;
	char link[48];
	exe_link_path(link, sizeof(link));
	/* into the program's buffer, as the kernel writes it (EFAULT too) */
	*ret = nr == SYS_readlink ? xs_sys3(SYS_readlink, link, a[1], a[2])
				  : xs_sys4(SYS_readlinkat, AT_FDCWD, link, a[2], a[3]);
	return true;
}

long xs_self_exe(char *buf, size_t size)
{
	char link[48];
	if (g_config.exe_fd >= 0)
		exe_link_path(link, sizeof(link));
	long n = xs_sys3(SYS_readlink, g_config.exe_fd >= 0 ? link : "/proc/self/exe", buf, size - 1);
	buf[n > 0 ? n : 0] = 0;
	return n;
}
