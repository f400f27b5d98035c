/*
 * Unit tests for src/common/buf.c: decimal and fixed-point formatting with
 * widths, padding, JSON string escaping, UTF-8 decoding, and the grow /
 * failure contract.
 */
#include <stdint.h>
#include "common/buf.h"
#include "unit.h"

static char g_mem[512];

static struct xs_buf fixed_buf(void)
{
	return (struct xs_buf){ g_mem, 0, sizeof(g_mem), false, NULL };
}

#define CHECK_BUF(b, expected) CHECK_MEM((b).data, (b).len, (expected), strlen(expected))

static void test_u64_widths(void)
{
	struct xs_buf b = fixed_buf();
	xs_buf_u64(&b, 0, 0);
	CHECK_BUF(b, "0");
	b.len = 0;
	xs_buf_u64(&b, 42, 6);
	CHECK_BUF(b, "    42");
	b.len = 0;
	xs_buf_u64(&b, 123456, 3);	/* too wide for the column: no truncation */
	CHECK_BUF(b, "123456");
	b.len = 0;
	xs_buf_u64(&b, UINT64_MAX, 0);
	CHECK_BUF(b, "18446744073709551615");
	b.len = 0;
	xs_buf_u64(&b, UINT64_MAX, 22);
	CHECK_BUF(b, "  18446744073709551615");
	b.len = 0;
	xs_buf_u64(&b, 7, -3);		/* negative width: no padding */
	CHECK_BUF(b, "7");
}

static void test_i64_widths(void)
{
	struct xs_buf b = fixed_buf();
	xs_buf_i64(&b, 0, 0);
	CHECK_BUF(b, "0");
	b.len = 0;
	xs_buf_i64(&b, -5, 4);
	CHECK_BUF(b, "  -5");
	b.len = 0;
	xs_buf_i64(&b, 17, 4);
	CHECK_BUF(b, "  17");
	b.len = 0;
	xs_buf_i64(&b, INT64_MIN, 0);
	CHECK_BUF(b, "-9223372036854775808");
	b.len = 0;
	xs_buf_i64(&b, INT64_MAX, 0);
	CHECK_BUF(b, "9223372036854775807");
	b.len = 0;
	xs_buf_i64(&b, -1, 1);
	CHECK_BUF(b, "-1");
}

static void test_fixed_point(void)
{
	struct xs_buf b = fixed_buf();
	xs_buf_fixed(&b, 2500, 3, 0);
	CHECK_BUF(b, "2.500");
	b.len = 0;
	xs_buf_fixed(&b, 5, 3, 0);	/* leading zeros after the point */
	CHECK_BUF(b, "0.005");
	b.len = 0;
	xs_buf_fixed(&b, 0, 6, 0);
	CHECK_BUF(b, "0.000000");
	b.len = 0;
	xs_buf_fixed(&b, 123, 0, 5);	/* no decimals: no point */
	CHECK_BUF(b, "  123");
	b.len = 0;
	xs_buf_fixed(&b, 10000, 2, 8);
	CHECK_BUF(b, "  100.00");
	b.len = 0;
	xs_buf_fixed(&b, UINT64_MAX, 6, 0);
	CHECK_BUF(b, "18446744073709.551615");
	b.len = 0;
	xs_buf_fixed(&b, 1, 19, 0);
	CHECK_BUF(b, "0.0000000000000000001");
}

static void test_pad(void)
{
	struct xs_buf b = fixed_buf();
	xs_buf_pad(&b, "ab", 5);
	xs_buf_addc(&b, '|');
	CHECK_BUF(b, "ab   |");
	b.len = 0;
	xs_buf_pad(&b, "abcdef", 3);
	CHECK_BUF(b, "abcdef");
	b.len = 0;
	xs_buf_pad(&b, "", 2);
	CHECK_BUF(b, "  ");
}

static void test_json_plain_and_quotes(void)
{
	struct xs_buf b = fixed_buf();
	xs_buf_json_str(&b, "");
	CHECK_BUF(b, "\"\"");
	b.len = 0;
	xs_buf_json_str(&b, "hot");
	CHECK_BUF(b, "\"hot\"");
	b.len = 0;
	xs_buf_json_str(&b, "say \"hi\" \\o/");
	CHECK_BUF(b, "\"say \\\"hi\\\" \\\\o/\"");
}

static void test_json_control_chars(void)
{
	struct xs_buf b = fixed_buf();
	xs_buf_json_str(&b, "a\nb\tc\x01\x1f\x7f");
	CHECK_BUF(b, "\"a\\u000ab\\u0009c\\u0001\\u001f\\u007f\"");
}

static void test_json_utf8_passes_through(void)
{
	struct xs_buf b = fixed_buf();
	xs_buf_json_str(&b, "caf\xc3\xa9 \xe2\x82\xac");
	CHECK_BUF(b, "\"caf\xc3\xa9 \xe2\x82\xac\"");
}

#define CHECK_CHAR_LEN(bytes, expected) CHECK(xs_utf8_char_len((bytes), sizeof(bytes) - 1) == (expected))

static void test_utf8_valid_characters(void)
{
	CHECK_CHAR_LEN("A", 1);
	CHECK_CHAR_LEN("\x7f", 1);
	CHECK_CHAR_LEN("\xc2\x80", 2);		/* U+0080, the first two-byte form */
	CHECK_CHAR_LEN("\xdf\xbf", 2);		/* U+07FF */
	CHECK_CHAR_LEN("\xe0\xa0\x80", 3);	/* U+0800 */
	CHECK_CHAR_LEN("\xed\x9f\xbf", 3);	/* U+D7FF, just below the surrogates */
	CHECK_CHAR_LEN("\xee\x80\x80", 3);	/* U+E000, just above them */
	CHECK_CHAR_LEN("\xef\xbf\xbf", 3);	/* U+FFFF */
	CHECK_CHAR_LEN("\xf0\x90\x80\x80", 4);	/* U+10000 */
	CHECK_CHAR_LEN("\xf4\x8f\xbf\xbf", 4);	/* U+10FFFF, the last */
	CHECK(xs_utf8_char_len("\xc3\xa9xyz", 5) == 2);	/* only the first character */
}

static void test_utf8_invalid_sequences(void)
{
	CHECK_CHAR_LEN("\x80", 0);		/* a stray continuation byte */
	CHECK_CHAR_LEN("\xbf", 0);
	CHECK_CHAR_LEN("\xc0\x80", 0);		/* overlong NUL ("modified UTF-8") */
	CHECK_CHAR_LEN("\xc1\xbf", 0);		/* overlong U+007F */
	CHECK_CHAR_LEN("\xe0\x9f\xbf", 0);	/* overlong U+07FF */
	CHECK_CHAR_LEN("\xf0\x8f\xbf\xbf", 0);	/* overlong U+FFFF */
	CHECK_CHAR_LEN("\xed\xa0\x80", 0);	/* U+D800, a surrogate */
	CHECK_CHAR_LEN("\xed\xbf\xbf", 0);	/* U+DFFF */
	CHECK_CHAR_LEN("\xf4\x90\x80\x80", 0);	/* U+110000 */
	CHECK_CHAR_LEN("\xf5\x80\x80\x80", 0);
	CHECK_CHAR_LEN("\xfe", 0);
	CHECK_CHAR_LEN("\xff", 0);
	CHECK_CHAR_LEN("\xc3", 0);		/* cut short */
	CHECK_CHAR_LEN("\xe2\x82", 0);
	CHECK_CHAR_LEN("\xf0\x9f\x98", 0);
	CHECK_CHAR_LEN("\xc3" "A", 0);		/* second byte not a continuation */
	CHECK_CHAR_LEN("\xe2\x82" "A", 0);	/* third byte not a continuation */
	CHECK_CHAR_LEN("\xf0\x9f\x98" "A", 0);	/* fourth byte not a continuation */
	CHECK(xs_utf8_char_len("\xe2\x82\xac", 2) == 0);	/* n cuts it short */
	CHECK(xs_utf8_char_len("", 0) == 0);
}

static void test_json_invalid_utf8_escaped(void)
{
	struct xs_buf b = fixed_buf();
	xs_buf_json_str(&b, "dump \xff\xfe");
	CHECK_BUF(b, "\"dump \\u00ff\\u00fe\"");
	b.len = 0;
	xs_buf_json_str(&b, "\x01\xc0\x80");	/* a control, then an overlong NUL: byte by byte */
	CHECK_BUF(b, "\"\\u0001\\u00c0\\u0080\"");
	b.len = 0;
	xs_buf_json_str(&b, "\xed\xa0\x80x");	/* a surrogate */
	CHECK_BUF(b, "\"\\u00ed\\u00a0\\u0080x\"");
	b.len = 0;
	xs_buf_json_str(&b, "a\xe2\x82");	/* cut short at the end */
	CHECK_BUF(b, "\"a\\u00e2\\u0082\"");
	b.len = 0;
	xs_buf_json_str(&b, "\xe2\x82\xac\xe2\x82" "b\xf4\x90\x80\x80");	/* valid, cut, beyond U+10FFFF */
	CHECK_BUF(b, "\"\xe2\x82\xac\\u00e2\\u0082b\\u00f4\\u0090\\u0080\\u0080\"");
	b.len = 0;
	xs_buf_json_str(&b, "\xf0\x9f\x98\x80\"");	/* a 4-byte character, then a quote */
	CHECK_BUF(b, "\"\xf0\x9f\x98\x80\\\"\"");
}

static void test_utf8_char(void)
{
	uint32_t cp = 0;
	CHECK(xs_utf8_char("a", &cp) == 1 && cp == 'a');
	CHECK(xs_utf8_char("\xc3\xa9", &cp) == 2 && cp == 0xe9);
	CHECK(xs_utf8_char("\xe2\x80\xa8", &cp) == 3 && cp == 0x2028);
	CHECK(xs_utf8_char("\xf0\x9f\x98\x80", &cp) == 4 && cp == 0x1f600);
	CHECK(xs_utf8_char("\xc2\x9b", &cp) == 2 && cp == 0x9b);	/* C1 CSI: well-formed */
	CHECK(xs_utf8_char("\xff", &cp) == 0);			/* never UTF-8 */
	CHECK(xs_utf8_char("\x80", &cp) == 0);			/* stray continuation */
	CHECK(xs_utf8_char("\xc0\xbc", &cp) == 0);			/* overlong '<' */
	CHECK(xs_utf8_char("\xe0\x80\xbc", &cp) == 0);		/* overlong '<' */
	CHECK(xs_utf8_char("\xed\xa0\x80", &cp) == 0);		/* surrogate */
	CHECK(xs_utf8_char("\xf4\x90\x80\x80", &cp) == 0);	/* past U+10FFFF */
	CHECK(xs_utf8_char("\xe2\x80", &cp) == 0);			/* cut short at the NUL */
}

static void test_full_buffer_fails_and_keeps_what_fitted(void)
{
	char small[8];
	struct xs_buf b = { small, 0, sizeof(small), false, NULL };
	xs_buf_add(&b, "12345");
	CHECK(!b.failed);
	xs_buf_add(&b, "6789");		/* does not fit: nothing of it is added */
	CHECK(b.failed);
	CHECK_BUF(b, "12345");
	xs_buf_add(&b, "x");		/* stays failed even though it would fit */
	CHECK(b.failed);
	CHECK_BUF(b, "12345");
}

static int grow_realloc(struct xs_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 4;
	while (cap < need)
		cap *= 2;
	char *p = realloc(b->data, cap);
	if (!p)
		return -12;
	b->data = p;
	b->cap = cap;
	return 0;
}

static void test_grow(void)
{
	struct xs_buf b = { NULL, 0, 0, false, grow_realloc };
	for (int i = 0; i < 1000; i++)
		xs_buf_u64(&b, (uint64_t)i % 10, 0);
	CHECK(!b.failed);
	CHECK(b.len == 1000);
	CHECK(b.cap >= 1000);
	CHECK(b.data[999] == '9' && b.data[0] == '0');
	free(b.data);
}

static int grow_refuse(struct xs_buf *b, size_t need)
{
	return -12;
}

static void test_grow_failure(void)
{
	char small[4];
	struct xs_buf b = { small, 0, sizeof(small), false, grow_refuse };
	xs_buf_add(&b, "abc");
	xs_buf_json_str(&b, "long string");
	CHECK(b.failed);
	CHECK(b.len <= b.cap);
	CHECK(memcmp(b.data, "abc", 3) == 0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "u64 widths", test_u64_widths },
		{ "i64 widths and extremes", test_i64_widths },
		{ "fixed point", test_fixed_point },
		{ "left padding", test_pad },
		{ "json strings: plain and quotes", test_json_plain_and_quotes },
		{ "json strings: control characters", test_json_control_chars },
		{ "json strings: utf-8 passes through", test_json_utf8_passes_through },
		{ "utf-8: valid characters and their lengths", test_utf8_valid_characters },
		{ "utf-8: overlongs, surrogates, > U+10FFFF, cut short are invalid", test_utf8_invalid_sequences },
		{ "json strings: invalid utf-8 bytes become \\u00XX", test_json_invalid_utf8_escaped },
		{ "utf-8 characters: code points of well-formed ones", test_utf8_char },
		{ "full buffer fails and keeps what fitted", test_full_buffer_fails_and_keeps_what_fitted },
		{ "grow function extends the buffer", test_grow },
		{ "grow failure sets failed", test_grow_failure },
	};
	return unit_run_all(tests, UNIT_COUNT(tests));
}
