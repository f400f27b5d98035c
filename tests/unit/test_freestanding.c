/*
 * Unit tests for the runtime's own C library functions (src/runtime/
 * freestanding.c) and its environment, auxiliary vector and vDSO lookup
 * (src/runtime/procenv.c): compiled in here without XS_RUNTIME, so they
 * keep their xs_ names beside glibc's, which they are compared with.
 */
#include <elf.h>
#include <limits.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <time.h>
#include "runtime/freestanding.c"
#include "runtime/procenv.c"
#include "unit.h"

extern char **environ;

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

static void test_copies(void)
{
	char src[300], dst[300], want[300];
	for (int i = 0; i < 300; i++)
		src[i] = (char)(i * 7 + 1);
	for (size_t off = 0; off < 9; off++) {
		for (size_t n = 0; n < 280; n += 13) {
			memset(dst, 'x', sizeof(dst));
			memset(want, 'x', sizeof(want));
			memcpy(want + off, src + 3, n);
			CHECK(xs_memcpy(dst + off, src + 3, n) == dst + off);
			CHECK(memcmp(dst, want, sizeof(dst)) == 0);
		}
	}
	memset(want, 'x', sizeof(want));
	memset(want + 5, 0x80, 200);
	memset(dst, 'x', sizeof(dst));
	CHECK(xs_memset(dst + 5, 0x180, 200) == dst + 5);	/* (converted to unsigned char) */
	CHECK(memcmp(dst, want, sizeof(dst)) == 0);
	CHECK(xs_memset(dst, 0, 0) == dst && dst[0] == 'x');
}

static void test_memmove_overlaps(void)
{
	char buf[64], want[64];
	for (int shift = -9; shift <= 9; shift++) {
		for (int i = 0; i < 64; i++)
			buf[i] = want[i] = (char)('A' + i % 50);
		memmove(want + 20 + shift, want + 20, 30);
		CHECK(xs_memmove(buf + 20 + shift, buf + 20, 30) == buf + 20 + shift);
		if (memcmp(buf, want, sizeof(buf)) != 0) {
			unit_fail(__FILE__, __LINE__, "memmove");
			fprintf(stderr, "    shift %d\n", shift);
		}
	}
	/* a backward move leaves the direction flag clear: a copy after it
	 * goes forward */
	xs_memmove(buf + 1, buf, 10);
	CHECK(xs_memcpy(buf + 40, "0123456789", 10) == buf + 40);
	CHECK(memcmp(buf + 40, "0123456789", 10) == 0);
}

static void test_compare_and_search(void)
{
	CHECK(xs_memcmp("abc", "abd", 3) < 0 && xs_memcmp("abd", "abc", 3) > 0);
	CHECK(xs_memcmp("ab\x80", "ab\x01", 3) > 0);	/* unsigned bytes */
	CHECK(xs_memcmp("x", "y", 0) == 0);
	const char *s = "hello, world";
	CHECK(xs_memchr(s, 'o', 12) == s + 4 && xs_memchr(s, 'o', 4) == NULL && xs_memchr(s, 0, 13) == s + 12);
	CHECK(xs_strlen("") == 0 && xs_strlen(s) == 12);
	CHECK(xs_strnlen(s, 5) == 5 && xs_strnlen(s, 100) == 12 && xs_strnlen(s, 0) == 0);
	static const char *const pairs[][2] = {
		{ "", "" }, { "a", "" }, { "", "a" }, { "abc", "abd" }, { "abc", "ab" },
		{ "\x80", "a" }, { "EXITSCOPE_X", "EXITSCOPE_" }, { "same", "same" },
	};
	for (size_t i = 0; i < UNIT_COUNT(pairs); i++) {
		CHECK(sign(xs_strcmp(pairs[i][0], pairs[i][1])) == sign(strcmp(pairs[i][0], pairs[i][1])));
		for (size_t n = 0; n < 12; n++)
			CHECK(sign(xs_strncmp(pairs[i][0], pairs[i][1], n)) ==
			      sign(strncmp(pairs[i][0], pairs[i][1], n)));
	}
	CHECK(xs_strchr(s, 'o') == s + 4 && xs_strchr(s, 'z') == NULL && xs_strchr(s, 0) == s + 12);
	CHECK(xs_strrchr(s, 'o') == s + 8 && xs_strrchr(s, 'z') == NULL && xs_strrchr(s, 0) == s + 12);
	CHECK(xs_strcspn(s, ",d") == 5 && xs_strcspn(s, "") == 12 && xs_strcspn("", "a") == 0);
	CHECK(xs_strstr(s, "world") == s + 7 && xs_strstr(s, "worlds") == NULL && xs_strstr(s, "") == s);
	const char *h = "aaab";
	CHECK(xs_strstr(h, "aab") == h + 1 && xs_strstr(h, "b") == h + 3 && xs_strstr("", "a") == NULL);
}

static void test_copy_strings(void)
{
	char buf[32];
	memset(buf, 'x', sizeof(buf));
	CHECK(xs_strcpy(buf, "LD_PRELOAD=") == buf);
	CHECK_STR(buf, "LD_PRELOAD=");
	CHECK(xs_strcat(buf, "/a/b.so") == buf);
	CHECK_STR(buf, "LD_PRELOAD=/a/b.so");
	CHECK(buf[18] == 0 && buf[19] == 'x');
	xs_strcpy(buf, "");
	CHECK(buf[0] == 0 && buf[1] == 'D');
}

/* Each string and base: the value and end that glibc gives. */
static void test_numbers_as_glibc(void)
{
	static const char *const inputs[] = {
		"0", "42", "  \t\n+17", "-5", "-0", "12abc", "abc", "", "-", "+", " ", "0x", "0x1f", "0X1G",
		"0777", "0778", "z", "Zz", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"-9223372036854775809", "18446744073709551615", "18446744073709551616", "99999999999999999999999",
		"-18446744073709551615", "-18446744073709551616", "0x7fffffffffffffff", "0xffffffffffffffff1",
		"1_000", "34", "6000\n",
	};
	static const int bases[] = { 10, 0, 8, 16, 2, 36, 1, 37, -1 };
	for (size_t i = 0; i < UNIT_COUNT(inputs); i++) {
		for (size_t k = 0; k < UNIT_COUNT(bases); k++) {
			const char *s = inputs[i];
			int base = bases[k];
			char *e1 = NULL, *e2 = NULL;
			long l1 = xs_strtol(s, &e1, base), l2 = strtol(s, &e2, base);
			/* (glibc leaves *end alone for a base it refuses) */
			bool valid = base == 0 || (base >= 2 && base <= 36);
			bool ok = l1 == l2 && (e1 == e2 || !valid);
			unsigned long u1 = xs_strtoul(s, &e1, base), u2 = strtoul(s, &e2, base);
			ok = ok && u1 == u2 && (e1 == e2 || !valid);
			unsigned long long q1 = xs_strtoull(s, &e1, base), q2 = strtoull(s, &e2, base);
			ok = ok && q1 == q2 && (e1 == e2 || !valid);
			if (!valid)
				e2 = e1;
			if (!ok) {
				unit_fail(__FILE__, __LINE__, "strtol/strtoul/strtoull as glibc's");
				fprintf(stderr, "    \"%s\" base %d: ours %ld %lu %llu end +%td, glibc's %ld %lu %llu end +%td\n",
					s, base, l1, u1, q1, e1 - s, l2, u2, q2, e2 - s);
			}
		}
	}
	CHECK(xs_strtol("123", NULL, 10) == 123);	/* no end pointer */
}

static void test_env_and_auxv_from_array(void)
{
	/* an initial stack's shape: environment, NULL, (type, value) pairs */
	char *stack[] = {
		"A=1", "AB=2", "B", "C=", "=x", NULL,
		(char *)AT_PAGESZ, (char *)4096, (char *)AT_HWCAP2, (char *)2, (char *)AT_NULL, (char *)99,
	};
	xs_env_capture(stack, NULL);
	CHECK(g_envp == stack);
	CHECK(xs_getenv("A") && !strcmp(xs_getenv("A"), "1"));
	CHECK(xs_getenv("AB") && !strcmp(xs_getenv("AB"), "2"));
	CHECK(xs_getenv("B") == NULL);		/* no '=' */
	CHECK(xs_getenv("C") && !strcmp(xs_getenv("C"), ""));
	CHECK(xs_getenv("") == NULL && xs_getenv("D") == NULL && xs_getenv("A=") == NULL);
	CHECK(xs_getauxval(AT_PAGESZ) == 4096 && xs_getauxval(AT_HWCAP2) == 2);
	CHECK(xs_getauxval(AT_NULL) == 0 && xs_getauxval(AT_ENTRY) == 0);
	stack[0] = NULL;	/* edited later (clean_environment): the copy stays */
	CHECK(xs_getauxval(AT_PAGESZ) == 4096);
	xs_env_capture(NULL, NULL);
	CHECK(xs_getenv("AB") == NULL && xs_getauxval(AT_PAGESZ) == 0);
}

/* An environment array that is not the initial one (environ after setenv)
 * has no auxiliary vector after it: words that do not look like one give
 * none, not stray values. */
static void test_no_auxv_after_other_arrays(void)
{
	char *no_pagesz[] = { "A=1", NULL, (char *)AT_SYSINFO_EHDR, (char *)0x1234, (char *)AT_NULL, NULL };
	xs_env_capture(no_pagesz, NULL);
	CHECK(xs_getauxval(AT_SYSINFO_EHDR) == 0 && xs_vdso_sym("__vdso_clock_gettime") == NULL);
	CHECK(xs_getenv("A") != NULL);
	char *bad_pagesz[] = { NULL, (char *)AT_PAGESZ, (char *)1000, (char *)AT_NULL, NULL };
	xs_env_capture(bad_pagesz, NULL);
	CHECK(xs_getauxval(AT_PAGESZ) == 0);
	static char *unended[1 + 2 * 70];	/* no AT_NULL in 64 entries */
	for (int i = 0; i < 70; i++) {
		unended[1 + 2 * i] = (char *)(uintptr_t)(i % 2 ? AT_PAGESZ : AT_SYSINFO_EHDR);
		unended[2 + 2 * i] = (char *)4096;
	}
	xs_env_capture(unended, NULL);
	CHECK(xs_getauxval(AT_PAGESZ) == 0 && xs_getauxval(AT_SYSINFO_EHDR) == 0);
}

/* environ of a process that has not run setenv is its initial array.
 * (Not AT_HWCAP: glibc's getauxval gives its own x86-64 value for it.) */
static void test_env_and_auxv_of_this_process(void)
{
	static const unsigned long types[] = { AT_PAGESZ, AT_HWCAP2, AT_SYSINFO_EHDR, AT_ENTRY,
					       AT_PHDR, AT_RANDOM, AT_MINSIGSTKSZ, AT_UID };
	xs_env_capture(environ, NULL);
	for (size_t i = 0; i < UNIT_COUNT(types); i++) {
		if (xs_getauxval(types[i]) != getauxval(types[i])) {
			unit_fail(__FILE__, __LINE__, "xs_getauxval as getauxval");
			fprintf(stderr, "    type %lu: ours %#lx, glibc's %#lx\n", types[i], xs_getauxval(types[i]),
				getauxval(types[i]));
		}
	}
	CHECK(xs_getauxval(AT_PAGESZ) == 4096);
	CHECK(xs_getenv("PATH") == getenv("PATH"));
}

static uint64_t ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

static void test_vdso_clock(void)
{
	xs_env_capture(environ, NULL);
	int (*fn)(clockid_t, struct timespec *) =
		(int (*)(clockid_t, struct timespec *))xs_vdso_sym("__vdso_clock_gettime");
	CHECK(fn != NULL);
	if (!fn)
		return;
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_REALTIME };
	for (size_t i = 0; i < UNIT_COUNT(clocks); i++) {
		struct timespec before, ours, after;
		clock_gettime(clocks[i], &before);
		CHECK(fn(clocks[i], &ours) == 0);
		clock_gettime(clocks[i], &after);
		CHECK(ns(&before) <= ns(&ours) && ns(&ours) <= ns(&after));
	}
	/* the function is inside the vDSO's image */
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	CHECK((uintptr_t)fn > base && (uintptr_t)fn < base + (1u << 16));
	CHECK(xs_vdso_sym("__vdso_getcpu") != NULL);
	CHECK(xs_vdso_sym("__vdso_no_such_function") == NULL && xs_vdso_sym("") == NULL);
	xs_env_capture(NULL, NULL);	/* no auxv: no vDSO */
	CHECK(xs_vdso_sym("__vdso_clock_gettime") == NULL);
}

/* The symbol count from the GNU hash table (for a vDSO without DT_HASH)
 * is DT_HASH's nchain, on this kernel's vDSO that has both. */
static void test_vdso_gnu_hash_count(void)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	uintptr_t bias = 0, dynv = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !bias)
			bias = base + ph[i].p_offset - ph[i].p_vaddr;
		if (ph[i].p_type == PT_DYNAMIC)
			dynv = ph[i].p_vaddr;
	}
	const uint32_t *hash = NULL, *gnu = NULL;
	for (const Elf64_Dyn *d = (const Elf64_Dyn *)(dynv + bias); d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_HASH)
			hash = (const uint32_t *)(d->d_un.d_ptr + bias);
		if (d->d_tag == DT_GNU_HASH)
			gnu = (const uint32_t *)(d->d_un.d_ptr + bias);
	}
	CHECK(gnu != NULL);
	if (!hash || !gnu) {
		fprintf(stderr, "    (this vDSO has %s)\n", hash ? "no DT_GNU_HASH" : "no DT_HASH");
		return;
	}
	CHECK(gnu_hash_symbols(gnu) == hash[1]);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "memcpy and memset, every alignment", test_copies },
		{ "memmove both ways, then forward again", test_memmove_overlaps },
		{ "comparisons and searches as glibc's", test_compare_and_search },
		{ "strcpy and strcat", test_copy_strings },
		{ "strtol, strtoul, strtoull as glibc's", test_numbers_as_glibc },
		{ "environment and auxv from an initial-stack array", test_env_and_auxv_from_array },
		{ "no auxv after an array that is not the initial one", test_no_auxv_after_other_arrays },
		{ "auxv of this process as getauxval's", test_env_and_auxv_of_this_process },
		{ "vDSO clock_gettime found and agrees", test_vdso_clock },
		{ "vDSO GNU hash symbol count", test_vdso_gnu_hash_count },
	};
	return unit_run_all(tests, UNIT_COUNT(tests));
}
