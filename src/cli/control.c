/*
 * exitscope dump PID [LABEL] / exitscope reset PID: ask the runtime inside
 * process PID, through its control socket (the abstract unix socket
 * "@exitscope-PID", same user only), to close a window. The runtime answers
 * with the closed window's text block (dump) and a last line
 * "ok window N" or "error: ...". The command returns once the record is
 * written.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "cli/cli.h"

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > 0x3fffffff)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

static int send_command(pid_t pid, const char *line)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		xs_error("socket: %s", strerror(errno));
		return XS_EXIT_DATA;
	}
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int n = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "exitscope-%d", (int)pid);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	if (connect(fd, (struct sockaddr *)&addr, len) < 0) {
		xs_error("process %d: no exitscope runtime answers (%s); is it running under 'exitscope run'?",
			 (int)pid, strerror(errno));
		close(fd);
		return XS_EXIT_DATA;
	}
	/* a refusal may close the socket before the request is read: read the
	 * answer whatever the send says */
	size_t size = strlen(line);
	ssize_t sent = send(fd, line, size, MSG_NOSIGNAL);
	int send_err = sent < 0 ? errno : 0;
	shutdown(fd, SHUT_WR);

	/* print the answer; its last line says how it went */
	char buf[65536], last[512] = "";
	size_t lastlen = 0;
	ssize_t got;
	while ((got = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] == '\n') {
				last[lastlen] = 0;
				if (strncmp(last, "ok window ", 10) && strncmp(last, "error: ", 7))
					printf("%s\n", last);
				else if (!strncmp(last, "error: ", 7))
					xs_error("process %d: %s", (int)pid, last + 7);
				if (!strncmp(last, "ok window ", 10) || !strncmp(last, "error: ", 7)) {
					close(fd);
					if (fflush(stdout) != 0)
						return XS_EXIT_DATA;
					return last[0] == 'o' ? XS_EXIT_OK : XS_EXIT_DATA;
				}
				lastlen = 0;
			} else if (lastlen < sizeof(last) - 1) {
				last[lastlen++] = buf[i];
			}
		}
	}
	close(fd);
	if (send_err)
		xs_error("process %d: %s", (int)pid, strerror(send_err));
	else
		xs_error("process %d: the runtime closed the connection without an answer", (int)pid);
	return XS_EXIT_DATA;
}

static bool wants_help(int argc, char **argv)
{
	return argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"));
}

static const char g_dump_usage[] =
	"usage: exitscope dump PID [LABEL]\n"
	"  close a window in process PID (running under exitscope), print it, and return\n"
	"  once its record is written to exitscope-PID.jsonl\n";
static const char g_reset_usage[] =
	"usage: exitscope reset PID\n"
	"  close a window in process PID silently: a new window starts now\n";

int cmd_dump(int argc, char **argv)
{
	pid_t pid;
	if (wants_help(argc, argv)) {
		fputs(g_dump_usage, stdout);
		return XS_EXIT_OK;
	}
	if (argc < 2 || argc > 3 || parse_pid(argv[1], &pid) < 0) {
		fputs(g_dump_usage, stderr);
		return XS_EXIT_USAGE;
	}
	char line[300];
	if (argc == 3 && (strlen(argv[2]) > 120 || strchr(argv[2], '\n'))) {
		xs_error("dump: a label is one line of at most 120 bytes");
		return XS_EXIT_USAGE;
	}
	snprintf(line, sizeof(line), "dump%s%s\n", argc == 3 ? " " : "", argc == 3 ? argv[2] : "");
	return send_command(pid, line);
}

int cmd_reset(int argc, char **argv)
{
	pid_t pid;
	if (wants_help(argc, argv)) {
		fputs(g_reset_usage, stdout);
		return XS_EXIT_OK;
	}
	if (argc != 2 || parse_pid(argv[1], &pid) < 0) {
		fputs(g_reset_usage, stderr);
		return XS_EXIT_USAGE;
	}
	return send_command(pid, "reset\n");
}
