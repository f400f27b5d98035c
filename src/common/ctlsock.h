/*
 * Finding and checking a runtime's control socket, for both sides: the
 * command (exitscope dump/reset) and the runtime itself, which reaches the
 * other processes of its run for a run-wide window closed from inside
 * (/dev/exitscope "run-dump"). One copy of the rules of DESIGN.md §3.6 and
 * §5: candidates are the listening abstract names "@exitscope-PID-<16 hex
 * digits>" (and "@exitscope-PID" of older runtimes) in /proc/net/unix, and a
 * candidate is talked to only if its listener is process PID itself.
 *
 * Neither side's system calls are the other's (the runtime may only use its
 * own raw calls), so every call goes through the xs_sys_fn the caller
 * passes: it returns the result or a negative errno. Nothing here allocates.
 */
#ifndef XS_COMMON_CTLSOCK_H
#define XS_COMMON_CTLSOCK_H

#include <stdbool.h>
#include <stddef.h>

typedef long (*xs_sys_fn)(long nr, long a1, long a2, long a3, long a4, long a5);

#define XS_CTL_NAME_MAX 108

/* Is the abstract name (without its '@') one the runtime of pid binds? */
bool xs_ctl_name_matches(const char *name, int pid);

/*
 * One line of /proc/net/unix ("Num RefCount Protocol Flags Type St Inode
 * Path"), NUL-terminated, newline or not: true if it is a listening,
 * unconnected stream socket with an abstract name of the runtime's shape;
 * then *pid is the pid in the name and name (XS_CTL_NAME_MAX bytes) the name
 * without its '@'.
 */
bool xs_ctl_unix_line(const char *line, int *pid, char *name);

/*
 * Is the listener at the other end of the connected socket fd process pid
 * itself? target_pidfd: pidfd_open(pid) taken before the candidates were
 * looked up, or -1. With SO_PEERPIDFD on pidfs the listener must be the
 * same pidfs inode (the same process even if the number was reused);
 * otherwise the pid number must match and the listener's uid be pid's
 * current euid. False with the reason in why (lowercase, no period).
 */
bool xs_ctl_listener_is(xs_sys_fn sys, int fd, int pid, int target_pidfd, char *why, size_t size);

#endif

#ifndef XS_COMMON_CTLSOCK_CONNECT
#define XS_COMMON_CTLSOCK_CONNECT
/* Connect to the abstract name (without '@'), waiting at most about a
 * second behind a full backlog: the connected socket (blocking,
 * close-on-exec) or a negative errno. */
long xs_ctl_connect(xs_sys_fn sys, const char *name);
/* Read /proc/PID/FILE (one read) into text, NUL-terminated: the bytes read
 * or -errno. */
long xs_ctl_read_proc(xs_sys_fn sys, int pid, const char *file, char *text, size_t size);
#endif
