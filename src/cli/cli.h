/*
 * The exitscope command: one file per subcommand, dispatched from the
 * table in main.c. Exit statuses are part of the user contract.
 */
#ifndef XS_CLI_H
#define XS_CLI_H

#include <getopt.h>

#define XS_VERSION "0.1.0"

enum xs_status {
	XS_EXIT_OK = 0,
	XS_EXIT_DATA = 1,		/* diff/report: unreadable or corrupt record file,
					   no such record, output error */
	XS_EXIT_USAGE = 2,
	XS_EXIT_NO_DISPATCH = 121,	/* kernel without Syscall User Dispatch */
	XS_EXIT_SETUID = 122,		/* setuid/setgid program */
	XS_EXIT_STATIC = 123,		/* statically linked program */
	XS_EXIT_OUTPUT = 124,		/* unusable --output-dir or --log */
	XS_EXIT_INTERNAL = 125,		/* runtime missing, exec failed */
	XS_EXIT_NOEXEC = 126,		/* not executable, or not x86-64 */
	XS_EXIT_NOTFOUND = 127,		/* no such program */
};

int cmd_run(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_flame(int argc, char **argv);

/* The command's system calls for common/ctlsock.c: the result or a
 * negative errno. */
long xs_cli_sys(long nr, long a1, long a2, long a3, long a4, long a5);

/* Print "exitscope: MSG" to stderr. */
void xs_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * After getopt_long (with opterr = 0) returned '?' in command CMD: say what
 * was wrong the way GNU tools do ("unrecognized option '--foo'", "invalid
 * option -- 'x'", "option requires an argument -- 'o'") and point at
 * 'exitscope CMD --help'. Returns XS_EXIT_USAGE.
 */
int xs_bad_option(const char *cmd, char **argv, const char *shortopts, const struct option *longopts);

#endif
