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

void xs_buf_json_str(struct xs_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	xs_buf_addc(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			xs_buf_addc(b, '\\');
			xs_buf_addc(b, (char)c);
		} else if (c < 0x20 || c == 0x7f) {
			char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			xs_buf_addn(b, esc, 6);
		} else {
			xs_buf_addc(b, (char)c);
		}
	}
	xs_buf_addc(b, '"');
}

size_t xs_utf8_char(const char *s, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n;
	uint32_t c = u[0], min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2, c &= 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, c &= 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		c = c << 6 | (u[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}
