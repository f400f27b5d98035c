/*
 * A growable text buffer with the few formatters exitscope needs (decimal,
 * fixed point, padding, JSON strings). It never calls malloc itself: the
 * owner supplies a grow function, so the runtime can back it with mmap
 * inside a signal handler and the CLI with realloc. After a failed grow the
 * buffer stays valid, keeps what fitted, and has failed set.
 */
#ifndef XS_COMMON_BUF_H
#define XS_COMMON_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xs_buf {
	char *data;
	size_t len;
	size_t cap;
	bool failed;
	/* Make room for at least need bytes in total; 0 or a negative errno. */
	int (*grow)(struct xs_buf *b, size_t need);
};

void xs_buf_addn(struct xs_buf *b, const char *s, size_t n);
void xs_buf_add(struct xs_buf *b, const char *s);
void xs_buf_addc(struct xs_buf *b, char c);
/* Decimal, right-aligned in width columns (0: no padding). */
void xs_buf_u64(struct xs_buf *b, uint64_t v, int width);
void xs_buf_i64(struct xs_buf *b, int64_t v, int width);
/* value / 10^decimals with that many decimals, right-aligned in width. */
void xs_buf_fixed(struct xs_buf *b, uint64_t value, int decimals, int width);
/* s left-aligned, padded with spaces to width. */
void xs_buf_pad(struct xs_buf *b, const char *s, int width);
/* s as a JSON string literal, quotes included, always valid UTF-8: a byte
 * that does not start a valid UTF-8 character is written as \u00XX. */
void xs_buf_json_str(struct xs_buf *b, const char *s);
/* The length of the valid UTF-8 character at s (1 to 4 bytes, at most n),
 * or 0 if s does not start one: a stray continuation byte, an overlong
 * form, a surrogate, a code point above U+10FFFF, a sequence cut short. */
size_t xs_utf8_char_len(const char *s, size_t n);

/* xs_utf8_char_len for a NUL-terminated s, with the character's code
 * point in *cp. */
size_t xs_utf8_char(const char *s, uint32_t *cp);

#endif
