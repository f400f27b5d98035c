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
#define N_COMMANDS (sizeof(g_commands) / sizeof(g_commands[0]))

void xs_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("exitscope: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int xs_bad_option(const char *cmd, char **argv, const char *shortopts, const struct option *longopts)
{
	const char *arg = argv[optind - 1];
	if (!strncmp(arg, "--", 2)) {
		/* getopt_long leaves optopt 0 for an unknown or ambiguous name,
		 * and the option's value for a known one used wrongly */
		size_t len = strcspn(arg + 2, "=");
		int matches = 0;
		for (const struct option *o = longopts; o && o->name; o++)
			matches += !strncmp(o->name, arg + 2, len);
		if (optopt && arg[2 + len] == '=')
			xs_error("option '%.*s' doesn't allow an argument", (int)(len + 2), arg);
		else if (optopt)
			xs_error("option '%s' requires an argument", arg);
		else if (matches > 1)
			xs_error("option '%s' is ambiguous", arg);
		else
			xs_error("unrecognized option '%s'", arg);
	} else {
		const char *known = optopt > 0 && optopt < 256 && optopt != ':' && optopt != '+'
					    ? strchr(shortopts, optopt) : NULL;
		if (known && known[1] == ':')
			xs_error("option requires an argument -- '%c'", optopt);
		else
			xs_error("invalid option -- '%c'", optopt);
	}
	fprintf(stderr, "Try 'exitscope %s --help'.\n", cmd);
	return XS_EXIT_USAGE;
}

static int usage(FILE *out, int status)
{
	fprintf(out, "usage: exitscope COMMAND [ARGS]\n"
		     "       exitscope help COMMAND | --help | --version\n\ncommands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %s\n", g_commands[i].help);
	fprintf(out, "\n'exitscope help COMMAND' or 'exitscope COMMAND --help' shows a command's options;\n"
		     "'man exitscope' the whole manual.\n");
	return status;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(name, g_commands[i].name))
			return &g_commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr, XS_EXIT_USAGE);
	const char *first = argv[1];
	if (!strcmp(first, "--version")) {
		printf("exitscope %s\n", XS_VERSION);
		return XS_EXIT_OK;
	}
	if (!strcmp(first, "--help") || !strcmp(first, "-h") || (!strcmp(first, "help") && argc == 2))
		return usage(stdout, XS_EXIT_OK);
	if (!strcmp(first, "help")) {
		/* help CMD: the command's own --help text, from the command */
		const struct command *c = find_command(argv[2]);
		if (!c || argc > 3) {
			if (c)
				xs_error("help takes one command");
			else
				xs_error("'%s' is not a command", argv[2]);
			fprintf(stderr, "Try 'exitscope --help'.\n");
			return XS_EXIT_USAGE;
		}
		char *help_argv[] = { argv[2], "--help", NULL };
		return c->fn(2, help_argv);
	}
	const struct command *c = find_command(first);
	if (c)
		return c->fn(argc - 1, argv + 1);
	if (first[0] == '-' && first[1] == '-')
		xs_error("unrecognized option '%s'", first);
	else if (first[0] == '-' && first[1])
		xs_error("invalid option -- '%c'", first[1]);
	else
		xs_error("'%s' is not a command", first);
	fprintf(stderr, "Try 'exitscope --help'.\n");
	return XS_EXIT_USAGE;
}
