/* The "#!" line as binfmt_script reads it (src/common/shebang.c). */
#include "common/shebang.h"
#include "unit.h"

/* Parse s; interp/arg as strings ("-" for NULL), complete. */
static bool parse(const char *s, char *out_interp, char *out_arg, bool *complete)
{
	char head[XS_SHEBANG_MAX];
	char *i, *a;
	size_t n = strlen(s);
	memcpy(head, s, n);
	if (!xs_shebang(head, n, &i, &a, complete))
		return false;
	strcpy(out_interp, i);
	strcpy(out_arg, a ? a : "-");
	return true;
}

static void test_not_a_script(void)
{
	char i[256], a[256];
	bool c;
	CHECK(!parse("\x7f" "ELF", i, a, &c));
	CHECK(!parse("#", i, a, &c));
	CHECK(!parse("# !/bin/sh\n", i, a, &c));
}

static void test_interpreter_and_argument(void)
{
	char i[256], a[256];
	bool c;
	CHECK(parse("#!/bin/sh\necho hi\n", i, a, &c));
	CHECK_STR(i, "/bin/sh");
	CHECK_STR(a, "-");
	CHECK(c);
	CHECK(parse("#! \t/usr/bin/env  python3 -u \t\nx", i, a, &c));
	CHECK_STR(i, "/usr/bin/env");
	CHECK_STR(a, "python3 -u");	/* one argument, blanks inside kept */
	CHECK(parse("#!/bin/busybox sh", i, a, &c));	/* no newline in what was read */
	CHECK_STR(i, "/bin/busybox");
	CHECK_STR(a, "sh");
	CHECK(!c);
	CHECK(parse("#!   \n", i, a, &c));
	CHECK_STR(i, "");
	CHECK_STR(a, "-");
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "not a script", test_not_a_script },
		{ "interpreter and its one argument", test_interpreter_and_argument },
	};
	return unit_run_all(tests, UNIT_COUNT(tests));
}
