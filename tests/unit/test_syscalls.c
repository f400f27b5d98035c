/*
 * Unit tests for src/common/syscalls.c: the generated x86-64 name table in
 * both directions, and the edges (unassigned numbers, out of range, the
 * "other" bucket).
 */
#include "common/syscalls.h"
#include "unit.h"

static void test_known_numbers_have_names(void)
{
	CHECK(xs_syscall_name(0) && !strcmp(xs_syscall_name(0), "read"));
	CHECK(xs_syscall_name(1) && !strcmp(xs_syscall_name(1), "write"));
	CHECK(xs_syscall_name(110) && !strcmp(xs_syscall_name(110), "getppid"));
	CHECK(xs_syscall_name(231) && !strcmp(xs_syscall_name(231), "exit_group"));
	CHECK(xs_syscall_name(257) && !strcmp(xs_syscall_name(257), "openat"));
	CHECK(xs_syscall_name(435) && !strcmp(xs_syscall_name(435), "clone3"));
}

static void test_known_names_have_numbers(void)
{
	CHECK(xs_syscall_number("read") == 0);
	CHECK(xs_syscall_number("write") == 1);
	CHECK(xs_syscall_number("getppid") == 110);
	CHECK(xs_syscall_number("clone3") == 435);
	CHECK(xs_syscall_number("other") == XS_NR_OTHER);
}

static void test_unknown_numbers_are_null(void)
{
	CHECK(xs_syscall_name(-1) == NULL);
	CHECK(xs_syscall_name(400) == NULL);	/* the unassigned gap 335..423 */
	CHECK(xs_syscall_name(XS_NR_SYSCALLS) == NULL);
	CHECK(xs_syscall_name(100000) == NULL);
	CHECK(xs_syscall_name(XS_NR_OTHER) && !strcmp(xs_syscall_name(XS_NR_OTHER), "other"));
}

static void test_unknown_names_are_minus_one(void)
{
	CHECK(xs_syscall_number("no_such_call") == -1);
	CHECK(xs_syscall_number("") == -1);
	CHECK(xs_syscall_number("READ") == -1);
}

static void test_every_name_round_trips(void)
{
	int named = 0;
	for (long nr = 0; nr < XS_NR_SYSCALLS; nr++) {
		const char *name = xs_syscall_name(nr);
		if (!name)
			continue;
		named++;
		if (xs_syscall_number(name) != nr) {
			unit_fail(__FILE__, __LINE__, "round trip");
			fprintf(stderr, "    %ld -> %s -> %ld\n", nr, name, xs_syscall_number(name));
		}
	}
	CHECK(named > 300);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "known numbers have names", test_known_numbers_have_names },
		{ "known names have numbers", test_known_names_have_numbers },
		{ "unknown numbers give NULL", test_unknown_numbers_are_null },
		{ "unknown names give -1", test_unknown_names_are_minus_one },
		{ "every name round-trips", test_every_name_round_trips },
	};
	return unit_run_all(tests, UNIT_COUNT(tests));
}
