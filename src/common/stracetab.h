/*
 * strace -c's table, as the log's block (runtime/record.c) and the run's
 * report (cli/report_tree.c) print it: one copy of the row's columns, so
 * that the two stay the same byte for byte.
 */
#ifndef XS_COMMON_STRACETAB_H
#define XS_COMMON_STRACETAB_H

#include <stdint.h>
#include "common/buf.h"

/* The rule above and below the rows. */
extern const char g_xs_strace_rule[];

/* One row up to its name: "% time" (ns of all_ns), wall seconds,
 * usecs/call, calls, errors (blank when none) and the space before the
 * name, which the caller adds (each side escapes it its own way) with the
 * newline. */
void xs_strace_row(struct xs_buf *b, uint64_t ns, uint64_t all_ns, uint64_t calls, uint64_t errors);

#endif
