/*
 * The control socket's rendezvous rules, shared by the command and the
 * runtime (see ctlsock.h). Only the caller's system calls, no libc calls
 * that could allocate or take a lock: the runtime calls this inside the
 * program.
 */
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include "common/buf.h"
#include "common/ctlsock.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#define PIDFS_MAGIC 0x50494446

static bool parse_uint(const char **p, unsigned long *v, int base)
{
	const char *s = *p;
	unsigned long x = 0;
	int digits = 0;
	for (;; s++, digits++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		x = x * (unsigned long)base + (unsigned long)d;
	}
	*p = s;
	*v = x;
	return digits > 0;
}

bool xs_ctl_name_matches(const char *name, int pid)
{
	static const char prefix[] = "exitscope-";
	if (strncmp(name, prefix, sizeof(prefix) - 1))
		return false;
	const char *p = name + sizeof(prefix) - 1;
	unsigned long v;
	if (*p == '0' || !parse_uint(&p, &v, 10) || v != (unsigned long)pid)
		return false;
	if (!*p)
		return true;	/* an older runtime's fixed name */
	if (*p++ != '-' || strlen(p) != 16)
		return false;
	for (; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

static const char *skip_field(const char *p)
{
	while (*p == ' ')
		p++;
	while (*p && *p != ' ' && *p != '\n')
		p++;
	while (*p == ' ')
		p++;
	return p;
}

bool xs_ctl_unix_line(const char *line, int *pid, char *name)
{
	unsigned long flags, type, state;
	const char *p = skip_field(line);	/* Num */
	p = skip_field(p);			/* RefCount */
	p = skip_field(p);			/* Protocol */
	if (!parse_uint(&p, &flags, 16) || *p != ' ')
		return false;
	while (*p == ' ')
		p++;
	if (!parse_uint(&p, &type, 16) || *p != ' ')
		return false;
	while (*p == ' ')
		p++;
	if (!parse_uint(&p, &state, 16) || *p != ' ')
		return false;
	p = skip_field(p);			/* Inode */
	/* listening (__SO_ACCEPTCON), stream, unconnected, abstract */
	if (!(flags & 0x10000) || type != SOCK_STREAM || state != 1 || *p != '@')
		return false;
	p++;
	size_t n = strcspn(p, " \n");
	if (n == 0 || n >= XS_CTL_NAME_MAX || n < 11)
		return false;
	memcpy(name, p, n);
	name[n] = 0;
	const char *q = name + 10;
	unsigned long v;
	if (strncmp(name, "exitscope-", 10) || !parse_uint(&q, &v, 10) || v == 0 || v > 0x3fffffff)
		return false;
	*pid = (int)v;
	return xs_ctl_name_matches(name, *pid);
}

static bool on_pidfs(xs_sys_fn sys, long fd, struct stat *st)
{
	struct statfs sfs;
	return sys(SYS_fstatfs, fd, (long)&sfs, 0, 0, 0) == 0 && sfs.f_type == PIDFS_MAGIC &&
	       sys(SYS_fstat, fd, (long)st, 0, 0, 0) == 0;
}

long xs_ctl_read_proc(xs_sys_fn sys, int pid, const char *file, char *text, size_t size)
{
	char path[64];
	struct xs_buf b = { path, 0, sizeof(path), false, NULL };
	xs_buf_add(&b, "/proc/");
	xs_buf_u64(&b, (uint64_t)pid, 0);
	xs_buf_addc(&b, '/');
	xs_buf_add(&b, file);
	xs_buf_addc(&b, 0);
	long fd = sys(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0);
	if (fd < 0)
		return fd;
	long n = sys(SYS_read, fd, (long)text, (long)size - 1, 0, 0);
	sys(SYS_close, fd, 0, 0, 0, 0);
	if (n >= 0)
		text[n] = 0;
	return n;
}

/* The effective uid of pid now, or -1. */
static long current_euid(xs_sys_fn sys, int pid)
{
	char text[2048];
	if (xs_ctl_read_proc(sys, pid, "status", text, sizeof(text)) <= 0)
		return -1;
	const char *p = strstr(text, "\nUid:");
	unsigned long real, eff;
	if (!p)
		return -1;
	p += 5;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!parse_uint(&p, &real, 10))
		return -1;
	while (*p == ' ' || *p == '\t')
		p++;
	return parse_uint(&p, &eff, 10) ? (long)eff : -1;
}

static void why_held(char *why, size_t size, const char *earlier, unsigned long by_pid, unsigned long uid, int pid)
{
	struct xs_buf b = { why, 0, size, false, NULL };
	xs_buf_add(&b, "it is held by ");
	xs_buf_add(&b, earlier);
	xs_buf_add(&b, "process ");
	xs_buf_u64(&b, by_pid, 0);
	xs_buf_add(&b, " (uid ");
	xs_buf_u64(&b, uid, 0);
	xs_buf_add(&b, "), not by process ");
	xs_buf_u64(&b, (uint64_t)pid, 0);
	if (b.len < size)
		why[b.len] = 0;
	else if (size)
		why[size - 1] = 0;
}

bool xs_ctl_listener_is(xs_sys_fn sys, int fd, int pid, int target_pidfd, char *why, size_t size)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct xs_buf b = { why, 0, size, false, NULL };
	long r = sys(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, (long)&cred, (long)&len);
	if (r < 0) {
		xs_buf_add(&b, "its listener is unknown (errno ");
		xs_buf_u64(&b, (uint64_t)-r, 0);
		xs_buf_addc(&b, ')');
		xs_buf_addc(&b, 0);
		if (size)
			why[size - 1] = 0;
		return false;
	}
	if (cred.pid != pid) {
		why_held(why, size, "", (unsigned long)cred.pid, cred.uid, pid);
		return false;
	}
	bool proven = false;
	int peer_pidfd;
	len = sizeof(peer_pidfd);
	if (target_pidfd >= 0 &&
	    sys(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERPIDFD, (long)&peer_pidfd, (long)&len) == 0) {
		struct stat a, c;
		if (on_pidfs(sys, peer_pidfd, &a) && on_pidfs(sys, target_pidfd, &c)) {
			if (a.st_dev != c.st_dev || a.st_ino != c.st_ino) {
				sys(SYS_close, peer_pidfd, 0, 0, 0, 0);
				why_held(why, size, "an earlier ", (unsigned long)cred.pid, cred.uid, pid);
				return false;
			}
			proven = true;
		}
		sys(SYS_close, peer_pidfd, 0, 0, 0, 0);
	}
	long euid = current_euid(sys, pid);
	if (!proven && (euid < 0 || (unsigned long)euid != cred.uid)) {
		xs_buf_add(&b, "its listener's uid ");
		xs_buf_u64(&b, cred.uid, 0);
		xs_buf_add(&b, " is not the uid of process ");
		xs_buf_u64(&b, (uint64_t)pid, 0);
		xs_buf_add(&b, " (");
		if (euid < 0)
			xs_buf_add(&b, "-1");
		else
			xs_buf_u64(&b, (uint64_t)euid, 0);
		xs_buf_addc(&b, ')');
		xs_buf_addc(&b, 0);
		if (size)
			why[size - 1] = 0;
		return false;
	}
	return true;
}

long xs_ctl_connect(xs_sys_fn sys, const char *name)
{
	struct sockaddr_un {
		unsigned short sun_family;
		char sun_path[108];
	} addr = { AF_UNIX, { 0 } };
	size_t size = strlen(name);
	if (size >= sizeof(addr.sun_path) - 1)
		return -ENAMETOOLONG;
	memcpy(addr.sun_path + 1, name, size);
	long len = (long)(sizeof(addr.sun_family) + 1 + size);
	for (int attempt = 0; attempt < 100; attempt++) {
		long fd = sys(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, 0, 0);
		if (fd < 0)
			return fd;
		long r = sys(SYS_connect, fd, (long)&addr, len, 0, 0);
		if (r == 0) {
			long fl = sys(SYS_fcntl, fd, F_GETFL, 0, 0, 0);
			sys(SYS_fcntl, fd, F_SETFL, fl & ~O_NONBLOCK, 0, 0);
			return fd;
		}
		sys(SYS_close, fd, 0, 0, 0, 0);
		if (r != -EAGAIN)
			return r;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		sys(SYS_nanosleep, (long)&ts, 0, 0, 0, 0);
	}
	return -EAGAIN;
}
