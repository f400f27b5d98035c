/*
 * exitscope: the command table. Each subcommand lives in its own file and
 * exports cmd_NAME(argc, argv), argv[0] being the subcommand's name.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} g_commands[] = {
	{ "run", cmd_run, "run [OPTIONS] -- PROGRAM [ARG...]   run PROGRAM behind the boundary" },
	{ "dump", cmd_dump, "dump [--json] PID [LABEL]            close a window in process PID and print it" },
	{ "reset", cmd_reset, "reset PID                            close a window silently (a new one starts)" },
	{ "diff", cmd_diff, "diff [--total] [--json] A B          compare two records (FILE.jsonl[:SEQ])" },
	{ "report", cmd_report, "report [--json|--html] FILE.jsonl    table of all windows of a run" },
	{ "flame", cmd_flame, "flame [--diff BASE] FILE.data        flame graph (SVG) of a window's profile" },
};

void xs_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("exitscope: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int usage(FILE *out, int status)
{
	fprintf(out, "usage: exitscope COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(g_commands) / sizeof(g_commands[0]); i++)
		fprintf(out, "  %s\n", g_commands[i].help);
	fprintf(out, "\nexitscope COMMAND --help shows a command's options.\n");
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr, XS_EXIT_USAGE);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
		return usage(stdout, XS_EXIT_OK);
	for (size_t i = 0; i < sizeof(g_commands) / sizeof(g_commands[0]); i++)
		if (!strcmp(argv[1], g_commands[i].name))
			return g_commands[i].fn(argc - 1, argv + 1);
	xs_error("'%s' is not a command; see 'exitscope --help'", argv[1]);
	return XS_EXIT_USAGE;
}
