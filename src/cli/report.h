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

#endif
