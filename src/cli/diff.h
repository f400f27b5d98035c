/*
 * Comparing two window records, as `exitscope diff` prints it; `exitscope
 * report --compare` prints the same block for two windows of one run.
 */
#ifndef XS_CLI_DIFF_H
#define XS_CLI_DIFF_H

#include <stdbool.h>
#include "cli/records.h"

/* Append the text comparison of ra and rb (their window counters, or with
 * total their total counters); path_a and path_b name their files.
 * 0, or -ENOMEM. */
int xs_diff_print_text(struct xs_buf *out, bool total, const char *path_a, const struct xs_record *ra,
		       const char *path_b, const struct xs_record *rb);

#endif
