/*
 * A minimal unit-test harness shared by tests/unit/test_*.c (header only).
 * Each test runs in its own child process, so a crash or a sanitizer abort
 * fails that test alone; the binary prints "ok - NAME" / "not ok - NAME"
 * per test, then "N passed, N failed", and exits non-zero on any failure.
 * UNIT_NOFORK=1 runs the tests in-process (for a debugger).
 */
#ifndef XS_TESTS_UNIT_H
#define XS_TESTS_UNIT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

static int g_unit_failures;

__attribute__((unused)) static void unit_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	g_unit_failures++;
}

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond))                                               \
			unit_fail(__FILE__, __LINE__, #cond);              \
	} while (0)

/* Compare two byte strings of known length, showing both on failure. */
#define CHECK_MEM(actual, actual_len, expected, expected_len)                                      \
	do {                                                                                       \
		size_t al_ = (actual_len), el_ = (expected_len);                                   \
		if (al_ != el_ || memcmp((actual), (expected), el_) != 0) {                        \
			unit_fail(__FILE__, __LINE__, #actual " == " #expected);                   \
			fprintf(stderr, "    actual:   [%.*s] (%zu bytes)\n    expected: [%.*s] (%zu bytes)\n", \
				(int)al_, (const char *)(actual), al_, (int)el_, (const char *)(expected), el_); \
		}                                                                                  \
	} while (0)

#define CHECK_STR(actual, expected) CHECK_MEM((actual), strlen(actual), (expected), strlen(expected))

#define UNIT_COUNT(tests) (sizeof(tests) / sizeof((tests)[0]))

__attribute__((unused)) static int unit_run_all(const struct unit_test *tests, size_t count)
{
	bool nofork = getenv("UNIT_NOFORK") != NULL;
	int passed = 0, failed = 0;
	for (size_t i = 0; i < count; i++) {
		bool ok;
		fflush(stdout);
		fflush(stderr);
		if (nofork) {
			g_unit_failures = 0;
			tests[i].fn();
			ok = g_unit_failures == 0;
		} else {
			pid_t pid = fork();
			if (pid < 0) {
				perror("fork");
				return 1;
			}
			if (pid == 0) {
				g_unit_failures = 0;
				tests[i].fn();
				fflush(stderr);
				exit(g_unit_failures ? 1 : 0);
			}
			int st;
			if (waitpid(pid, &st, 0) < 0) {
				perror("waitpid");
				return 1;
			}
			ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
			if (WIFSIGNALED(st))
				fprintf(stderr, "%s: killed by signal %d\n", tests[i].name, WTERMSIG(st));
			else if (!ok && WEXITSTATUS(st) != 1)
				fprintf(stderr, "%s: exit status %d\n", tests[i].name, WEXITSTATUS(st));
		}
		printf("%s - %s\n", ok ? "ok" : "not ok", tests[i].name);
		if (ok)
			passed++;
		else
			failed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif
