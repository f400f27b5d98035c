/*
 * Closing a run-wide window (DESIGN.md §3.3): one window, with one run-wide
 * number and label, in every live process of a run. One copy for both
 * sides: `exitscope dump RUN` / `reset RUN` in the command, and the runtime
 * of a process that writes "run-dump" or "run-reset" to /dev/exitscope.
 *
 * Under an exclusive flock of the run file (so that two closers number
 * their windows one after the other): read the run file, take the next
 * number N, close the caller's own window (close_self, if the caller is a
 * process of the run), ask every other live process through its control
 * socket for "run-dump N [LABEL]" or "run-reset N", wait until each has
 * answered (its record is written), and append the window line to the run
 * file. System calls go through sys; memory through grow (see buf.h).
 */
#ifndef XS_COMMON_RUNWIN_H
#define XS_COMMON_RUNWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/buf.h"
#include "common/ctlsock.h"

#define XS_RUNWIN_MAX 4096	/* processes of a run reached at once */

struct xs_runwin_result {
	int pid;
	int err;		/* 0: its record is written; else a negative errno */
	uint32_t seq;		/* its window number, when err is 0 */
	char why[160];		/* for a refused control socket */
};

struct xs_runwin {
	xs_sys_fn sys;
	int (*grow)(struct xs_buf *b, size_t need);
	void (*release)(struct xs_buf *b);	/* frees what grow gave */
	int lock_fd;		/* the run file, opened for reading by the caller (its own
				 * open file description: flock is per description) */
	int append_fd;		/* the run file, O_APPEND */
	const char *label;	/* NULL: none */
	bool reset;
	bool try_lock;		/* -EWOULDBLOCK rather than wait while another closer holds the
				 * run file (a closer that must keep answering its socket) */
	const char *reason;	/* what asked: "command", "app", "signal" */
	int self_pid;		/* 0, or the caller's pid when it is a process of the run */
	int (*close_self)(uint32_t run_window, void *arg);	/* its own window: its seq or -errno */
	void *arg;
	/* out */
	uint32_t run_window;
	struct xs_runwin_result *results;	/* XS_RUNWIN_MAX entries, from the caller */
	size_t count;
	size_t dropped;		/* live processes beyond XS_RUNWIN_MAX, not reached */
};

/* 0 (per-process outcomes in results) or a negative errno (nothing was
 * closed: the run file could not be locked or read). */
int xs_runwin_close(struct xs_runwin *rw);

#endif
