/*
 * The C library's string and number functions that the runtime uses, so
 * that it imports none (see freestanding.h). Simple loops: the runtime's
 * strings are short (names, paths, control commands); the copies and fills
 * that can be large (stack copies of the profiler, snapshots) use the
 * string instructions, which also keeps gcc from turning a copy loop into a
 * call to memcpy, that is to itself (the Makefile adds
 * -fno-tree-loop-distribute-patterns for the loops that are left).
 *
 * No <string.h> here: the standard names are defined below, as aliases.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include "runtime/freestanding.h"

void *xs_memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;
	__asm__ __volatile__("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
	return dst;
}

void *xs_memmove(void *dst, const void *src, size_t n)
{
	if ((uintptr_t)dst - (uintptr_t)src >= n)
		return xs_memcpy(dst, src, n);	/* dst below src, or no overlap */
	/* dst inside [src, src + n): copy from the end down (the kernel
	 * clears the direction flag for a signal handler, and cld puts it
	 * back for ours) */
	char *d = (char *)dst + n - 1;
	const char *s = (const char *)src + n - 1;
	__asm__ __volatile__("std\n\trep movsb\n\tcld" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	return dst;
}

void *xs_memset(void *dst, int c, size_t n)
{
	void *d = dst;
	__asm__ __volatile__("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return dst;
}

int xs_memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;
	for (; n; n--, p++, q++)
		if (*p != *q)
			return *p - *q;
	return 0;
}

void *xs_memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;
	for (; n; n--, p++)
		if (*p == (unsigned char)c)
			return (void *)p;
	return NULL;
}

size_t xs_strlen(const char *s)
{
	const char *p = s;
	while (*p)
		p++;
	return (size_t)(p - s);
}

size_t xs_strnlen(const char *s, size_t max)
{
	size_t n = 0;
	while (n < max && s[n])
		n++;
	return n;
}

int xs_strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

int xs_strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			break;
	}
	return 0;
}

char *xs_strcpy(char *dst, const char *src)
{
	char *d = dst;
	while ((*d++ = *src++))
		;
	return dst;
}

char *xs_strcat(char *dst, const char *src)
{
	xs_strcpy(dst + xs_strlen(dst), src);
	return dst;
}

char *xs_strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

char *xs_strrchr(const char *s, int c)
{
	const char *found = NULL;
	for (;; s++) {
		if (*s == (char)c)
			found = s;
		if (!*s)
			return (char *)found;
	}
}

size_t xs_strcspn(const char *s, const char *reject)
{
	size_t n = 0;
	for (; s[n]; n++)
		for (const char *r = reject; *r; r++)
			if (s[n] == *r)
				return n;
	return n;
}

char *xs_strstr(const char *haystack, const char *needle)
{
	size_t n = xs_strlen(needle);
	for (; *haystack; haystack++)
		if (!xs_strncmp(haystack, needle, n))
			return (char *)haystack;
	return n ? NULL : (char *)haystack;
}

/* ---- numbers ---- */

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	return 99;
}

/* The magnitude of the number at s and its sign; *over when it does not
 * fit 64 bits. *end as strtoull sets it. */
static unsigned long long scan_number(const char *s, char **end, int base, bool *neg, bool *over)
{
	const char *p = s, *first;
	unsigned long long v = 0;

	*neg = *over = false;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (*p == '+' || *p == '-')
		*neg = *p++ == '-';
	if ((base == 0 || base == 16) && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    digit_value(p[2]) < 16) {
		p += 2;
		base = 16;
	} else if (base == 0) {
		base = p[0] == '0' ? 8 : 10;
	}
	if (base < 2 || base > 36) {
		if (end)
			*end = (char *)s;
		return 0;
	}
	first = p;
	for (int d; (d = digit_value(*p)) < base; p++) {
		if (v > (ULLONG_MAX - (unsigned)d) / (unsigned)base)
			*over = true;
		else
			v = v * (unsigned)base + (unsigned)d;
	}
	if (end)
		*end = (char *)(p == first ? s : p);
	return v;
}

unsigned long long xs_strtoull(const char *s, char **end, int base)
{
	bool neg, over;
	unsigned long long v = scan_number(s, end, base, &neg, &over);
	if (over)
		return ULLONG_MAX;
	return neg ? 0 - v : v;
}

unsigned long xs_strtoul(const char *s, char **end, int base)
{
	return xs_strtoull(s, end, base);	/* (the same width on x86-64) */
}

long xs_strtol(const char *s, char **end, int base)
{
	bool neg, over;
	unsigned long long v = scan_number(s, end, base, &neg, &over);
	if (neg)
		return over || v > (unsigned long long)LONG_MAX + 1 ? LONG_MIN : (long)(0 - v);
	return over || v > LONG_MAX ? LONG_MAX : (long)v;
}

#ifdef XS_RUNTIME
/* The <string.h> names, hidden like everything in the runtime: the
 * callers' and gcc's own calls bind to these at link time. (The numbers
 * keep their xs_ names: only start-up uses them.) */
#define XS_STD_NAME(std, ours) __typeof__(ours) std __attribute__((alias(#ours)));
XS_STD_NAME(memcpy, xs_memcpy)
XS_STD_NAME(memmove, xs_memmove)
XS_STD_NAME(memset, xs_memset)
XS_STD_NAME(memcmp, xs_memcmp)
XS_STD_NAME(memchr, xs_memchr)
XS_STD_NAME(strlen, xs_strlen)
XS_STD_NAME(strnlen, xs_strnlen)
XS_STD_NAME(strcmp, xs_strcmp)
XS_STD_NAME(strncmp, xs_strncmp)
XS_STD_NAME(strcpy, xs_strcpy)
XS_STD_NAME(strcat, xs_strcat)
XS_STD_NAME(strchr, xs_strchr)
XS_STD_NAME(strrchr, xs_strrchr)
XS_STD_NAME(strcspn, xs_strcspn)
XS_STD_NAME(strstr, xs_strstr)
#endif
