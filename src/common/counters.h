/*
 * The counters of one thread, one process or one window: the layout the
 * runtime keeps per thread and folds into windows and totals.
 */
#ifndef XS_COMMON_COUNTERS_H
#define XS_COMMON_COUNTERS_H

#include <stdint.h>
#include "common/syscalls.h"

struct xs_syscall_count {
	uint64_t calls;		/* issued (counted when the call leaves) */
	uint64_t errors;	/* returned -4095..-1 */
	uint64_t ticks;		/* from leaving to returning, in TSC ticks (the
				 * runtime converts them to ns when it writes) */
};

struct xs_counters {
	uint64_t exits;		/* system calls issued: each leaves the program */
	uint64_t exits_fast;	/* ...of which through a trampoline, not a trap */
	uint64_t enters;	/* system calls that returned into the program */
	uint64_t sync_signals;	/* faults the thread's own instruction caused */
	uint64_t async_signals;
	uint64_t minor_faults;
	uint64_t major_faults;
	uint64_t preemptions;	/* involuntary context switches */
	struct xs_syscall_count sys[XS_NR_SYSCALLS];
};

/* dst += src, every field. */
void xs_counters_add(struct xs_counters *dst, const struct xs_counters *src);

#endif
