/*
 * exitscope report's HTML page (report_html.c): one self-contained file
 * with the windows table, per-window system call charts, the per-thread
 * breakdown, flame graphs of the windows' profiles, an exits-per-second
 * time series for --interval runs, and a comparison of any two windows.
 */
#ifndef XS_CLI_REPORT_H
#define XS_CLI_REPORT_H

#include "cli/records.h"

/* Write run's page to output (NULL: the record file's name with .html;
 * "-": standard output). XS_EXIT_OK, or XS_EXIT_DATA after saying why. */
int xs_report_html(const struct xs_run *run, const char *output);

/* Shared with the run's page (report_tree_html.c). */
/* v with thousands separators. */
void xs_html_count(struct xs_buf *out, uint64_t v);
/* The profile file of record r (of the record file record_path), opened
 * only as the name exitscope gives it, beside the record file, a regular
 * file of a bounded size: the fd, or -1 with *why set. */
int xs_html_profile_open(const char *record_path, const struct xs_record *r, const char *file, const char **why,
			 char *msg, size_t msg_size);
/* Write the page out to output (NULL: jsonl's name with .html; "-":
 * standard output) and say where. XS_EXIT_OK or XS_EXIT_DATA. */
int xs_html_write(struct xs_buf *out, const char *output, const char *jsonl);

#endif
