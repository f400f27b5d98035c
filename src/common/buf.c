/*
 * Text buffer formatting without stdio, so that the same code serves the
 * runtime (inside signal handlers) and the command-line tool.
 */
#include <string.h>
#include "common/buf.h"

static bool buf_reserve(struct xs_buf *b, size_t extra)
{
	if (b->failed)
		return false;
	if (b->len + extra <= b->cap)
		return true;
	if (!b->grow || b->grow(b, b->len + extra) < 0 || b->len + extra > b->cap) {
		b->failed = true;
		return false;
	}
	return true;
}

void xs_buf_addn(struct xs_buf *b, const char *s, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

void xs_buf_add(struct xs_buf *b, const char *s)
{
	xs_buf_addn(b, s, strlen(s));
}

void xs_buf_addc(struct xs_buf *b, char c)
{
	xs_buf_addn(b, &c, 1);
}

static void buf_spaces(struct xs_buf *b, int n)
{
	while (n-- > 0)
		xs_buf_addc(b, ' ');
}

void xs_buf_u64(struct xs_buf *b, uint64_t v, int width)
{
	char tmp[24];
	int i = sizeof(tmp);
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	buf_spaces(b, width - ((int)sizeof(tmp) - i));
	xs_buf_addn(b, tmp + i, sizeof(tmp) - i);
}

void xs_buf_i64(struct xs_buf *b, int64_t v, int width)
{
	char tmp[24];
	int i = sizeof(tmp);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--i] = '-';
	buf_spaces(b, width - ((int)sizeof(tmp) - i));
	xs_buf_addn(b, tmp + i, sizeof(tmp) - i);
}

void xs_buf_fixed(struct xs_buf *b, uint64_t value, int decimals, int width)
{
	char tmp[32];
	int i = sizeof(tmp);
	for (int d = 0; d < decimals; d++) {
		tmp[--i] = (char)('0' + value % 10);
		value /= 10;
	}
	if (decimals)
		tmp[--i] = '.';
	do {
		tmp[--i] = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	buf_spaces(b, width - ((int)sizeof(tmp) - i));
	xs_buf_addn(b, tmp + i, sizeof(tmp) - i);
}

void xs_buf_pad(struct xs_buf *b, const char *s, int width)
{
	size_t n = strlen(s);
	xs_buf_addn(b, s, n);
	buf_spaces(b, width - (int)n);
}

size_t xs_utf8_char_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	if (n == 0)
		return 0;
	if (u[0] < 0x80)
		return 1;
	/* the lead byte gives the length and the range of the second byte;
	 * the ranges leave out overlong forms (C0, C1, E0 80-9F, F0 80-8F),
	 * surrogates (ED A0-BF) and code points above U+10FFFF (F4 90-BF, F5-FF) */
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		len = 2;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		len = 3;
		if (u[0] == 0xe0)
			lo = 0xa0;
		else if (u[0] == 0xed)
			hi = 0x9f;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		len = 4;
		if (u[0] == 0xf0)
			lo = 0x90;
		else if (u[0] == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len || u[1] < lo || u[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((u[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/*
 * Every line exitscope writes must load in strict JSON parsers, and labels
 * and thread names are whatever bytes a program chose. Valid UTF-8 is
 * copied as it is; a byte that does not start a valid character becomes
 * \u00XX, the character of the same number (what a Latin-1 reading shows),
 * rather than U+FFFD: the label stays recognisable ("dump \xff\xfe" reads
 * "\u00ff\u00fe") and a reader who knows the rule can recover the bytes.
 * Not a lone surrogate \udcXX (Python's surrogateescape), which strict
 * parsers reject.
 */
void xs_buf_json_str(struct xs_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(s);
	xs_buf_addc(b, '"');
	while (n > 0) {
		unsigned char c = (unsigned char)*s;
		size_t len = xs_utf8_char_len(s, n);
		if (c == '"' || c == '\\') {
			xs_buf_addc(b, '\\');
			xs_buf_addc(b, (char)c);
		} else if (c < 0x20 || c == 0x7f || len == 0) {
			char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			xs_buf_addn(b, esc, 6);
			len = 1;
		} else {
			xs_buf_addn(b, s, len);
		}
		s += len;
		n -= len;
	}
	xs_buf_addc(b, '"');
}

size_t xs_utf8_char(const char *s, uint32_t *cp)
{
	static const unsigned char lead_bits[5] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	size_t n = xs_utf8_char_len(s, strnlen(s, 4));	/* a NUL is never a continuation */
	if (!n)
		return 0;
	uint32_t c = (unsigned char)s[0] & lead_bits[n];
	for (size_t i = 1; i < n; i++)
		c = c << 6 | ((unsigned char)s[i] & 0x3f);
	*cp = c;
	return n;
}
