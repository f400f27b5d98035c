/*
 * exitscope.h: mark the phases of a program from the inside.
 *
 * Under `exitscope run`, the runtime emulates the file /dev/exitscope:
 * writing "dump LABEL\n" closes a window with that label (its counters are
 * printed on the log and appended to exitscope-PID.jsonl), "reset\n" closes
 * one silently, and reading returns the live counters as JSON. The window
 * holds exactly the system calls the program issued before the write; the
 * file's own traffic is not counted.
 *
 * Without exitscope the file does not exist: both functions do nothing and
 * return -1, so a program can keep the calls in its production build.
 * Header only; no library to link.
 */
#ifndef EXITSCOPE_H
#define EXITSCOPE_H

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static inline int exitscope__command(const char *verb, const char *label)
{
	char line[160];
	size_t n = strlen(verb), l = label ? strlen(label) : 0;
	if (n + 1 + l + 1 >= sizeof(line) || (label && memchr(label, '\n', l)))
		return -1;
	memcpy(line, verb, n);
	if (l) {
		line[n++] = ' ';
		memcpy(line + n, label, l);
		n += l;
	}
	line[n++] = '\n';
	int fd = open("/dev/exitscope", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t written = write(fd, line, n);
	close(fd);
	return written == (ssize_t)n ? 0 : -1;
}

/* Close a window labelled label (NULL: no label). 0, or -1 without exitscope. */
static inline int exitscope_dump(const char *label)
{
	return exitscope__command("dump", label);
}

/* Close a window silently: a new one starts now. 0, or -1 without exitscope. */
static inline int exitscope_reset(void)
{
	return exitscope__command("reset", NULL);
}

#endif
