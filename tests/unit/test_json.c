/*
 * Unit tests for src/common/json.c: valid documents and lookups, numbers up
 * to 2^64-1, string escapes, every syntax error with its byte offset, the
 * nesting limit, and the arena. Every input is copied into a buffer of
 * exactly its size (no NUL after it), so an over-read shows up under ASan
 * and valgrind.
 */
#include <errno.h>
#include <stdint.h>
#include "common/buf.h"
#include "common/json.h"
#include "unit.h"

/* Parse exactly size bytes of text; err may be NULL. */
static int parse_n(const char *text, size_t size, struct xs_json_doc **doc, struct xs_json_error *err)
{
	char *copy = malloc(size ? size : 1);
	memcpy(copy, text, size);
	int r = xs_json_parse(copy, size, doc, err);
	free(copy);	/* the document must not point into the input */
	return r;
}

static struct xs_json_doc *parse_ok(const char *text)
{
	struct xs_json_doc *doc = NULL;
	struct xs_json_error err = { 0, NULL };
	int r = parse_n(text, strlen(text), &doc, &err);
	if (r != 0)
		fprintf(stderr, "    parse of [%s] failed: %d at %zu: %s\n", text, r, err.offset,
			err.msg ? err.msg : "?");
	CHECK(r == 0 && doc != NULL);
	return doc;
}

static void test_object_keeps_order_and_types(void)
{
	struct xs_json_doc *doc = parse_ok(" {\"b\": 1, \"a\": [true, false, null], \"c\": {\"d\": \"x\"}, \"e\": {}} \n");
	if (!doc)
		return;
	struct xs_json *root = xs_json_root(doc);
	CHECK(root->type == XS_JSON_OBJECT);
	CHECK(root->count == 4);
	CHECK_STR(xs_json_at(root, 0)->key, "b");
	CHECK_STR(xs_json_at(root, 1)->key, "a");
	CHECK_STR(xs_json_at(root, 2)->key, "c");
	CHECK_STR(xs_json_at(root, 3)->key, "e");
	CHECK(xs_json_at(root, 4) == NULL);
	struct xs_json *a = xs_json_get(root, "a");
	CHECK(a && a->type == XS_JSON_ARRAY && a->count == 3);
	CHECK(xs_json_at(a, 0)->type == XS_JSON_TRUE);
	CHECK(xs_json_at(a, 1)->type == XS_JSON_FALSE);
	CHECK(xs_json_at(a, 2)->type == XS_JSON_NULL);
	CHECK(xs_json_at(a, 0)->key == NULL);
	struct xs_json *e = xs_json_get(root, "e");
	CHECK(e && e->type == XS_JSON_OBJECT && e->count == 0 && e->first == NULL);
	CHECK(xs_json_get(root, "missing") == NULL);
	CHECK(xs_json_get(a, "x") == NULL);	/* not an object */
	CHECK(xs_json_get(NULL, "x") == NULL);
	CHECK(xs_json_at(root, 0)->offset == 7);
	xs_json_free(doc);
}

static void test_paths(void)
{
	struct xs_json_doc *doc =
		parse_ok("{\"threads\": [{\"tid\": 7}, {\"tid\": 9, \"window\": {\"syscalls\": {\"read\": {\"calls\": 3}}}}]}");
	if (!doc)
		return;
	struct xs_json *root = xs_json_root(doc);
	uint64_t v = 0;
	CHECK(xs_json_u64(xs_json_path(root, "threads.0.tid"), &v) && v == 7);
	CHECK(xs_json_u64(xs_json_path(root, "threads.1.window.syscalls.read.calls"), &v) && v == 3);
	CHECK(xs_json_path(root, "") == root);
	CHECK(xs_json_path(root, "threads.2") == NULL);
	CHECK(xs_json_path(root, "threads.x") == NULL);
	CHECK(xs_json_path(root, "threads.-1") == NULL);
	CHECK(xs_json_path(root, "threads.0.tid.more") == NULL);
	CHECK(xs_json_path(root, "nope.0") == NULL);
	CHECK(xs_json_path(NULL, "a") == NULL);
	CHECK(!xs_json_u64(xs_json_path(root, "threads"), &v));
	xs_json_free(doc);
}

static void test_duplicate_keys_first_wins(void)
{
	struct xs_json_doc *doc = parse_ok("{\"k\": 1, \"k\": 2}");
	if (!doc)
		return;
	uint64_t v = 0;
	CHECK(xs_json_root(doc)->count == 2);
	CHECK(xs_json_u64(xs_json_get(xs_json_root(doc), "k"), &v) && v == 1);
	xs_json_free(doc);
}

static struct xs_json *number(struct xs_json_doc **doc, const char *text)
{
	*doc = parse_ok(text);
	struct xs_json *n = *doc ? xs_json_root(*doc) : NULL;
	CHECK(n && n->type == XS_JSON_NUMBER);
	return n;
}

static void test_integers_up_to_2_64(void)
{
	struct xs_json_doc *doc;
	struct xs_json *n;

	if ((n = number(&doc, "0"))) {
		CHECK(n->is_u64 && n->u64 == 0 && n->is_i64 && n->i64 == 0 && n->num == 0.0);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "18446744073709551615"))) {
		CHECK(n->is_u64 && n->u64 == UINT64_MAX);
		CHECK(!n->is_i64);
		CHECK(n->num > 1.8e19 && n->num < 1.9e19);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "18446744073709551616"))) {	/* 2^64: too big for u64 */
		CHECK(!n->is_u64 && !n->is_i64);
		CHECK(n->num > 1.8e19 && n->num < 1.9e19);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "99999999999999999999999"))) {
		CHECK(!n->is_u64 && !n->is_i64);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "9223372036854775807"))) {
		CHECK(n->is_u64 && n->is_i64 && n->i64 == INT64_MAX);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "9223372036854775808"))) {
		CHECK(n->is_u64 && n->u64 == (uint64_t)INT64_MAX + 1 && !n->is_i64);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "-9223372036854775808"))) {
		CHECK(!n->is_u64 && n->is_i64 && n->i64 == INT64_MIN);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "-9223372036854775809"))) {
		CHECK(!n->is_u64 && !n->is_i64 && n->num < -9.2e18);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "-17"))) {
		CHECK(!n->is_u64 && n->is_i64 && n->i64 == -17 && n->num == -17.0);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "-0"))) {
		CHECK(!n->is_u64 && n->is_i64 && n->i64 == 0);
	}
	xs_json_free(doc);
}

static void test_non_integers(void)
{
	struct xs_json_doc *doc;
	struct xs_json *n;
	if ((n = number(&doc, "1.5"))) {
		CHECK(!n->is_u64 && !n->is_i64 && n->num == 1.5);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "1e3"))) {
		CHECK(!n->is_u64 && n->num == 1000.0);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "-2.5E-1"))) {
		CHECK(n->num == -0.25);
	}
	xs_json_free(doc);
	if ((n = number(&doc, "0.0"))) {
		CHECK(!n->is_u64 && n->num == 0.0);
	}
	xs_json_free(doc);
	/* a number longer than the parser's stack copy */
	char longnum[200];
	memset(longnum, '1', sizeof(longnum) - 1);
	longnum[1] = '.';
	longnum[sizeof(longnum) - 1] = 0;
	if ((n = number(&doc, longnum))) {
		CHECK(n->num > 1.11 && n->num < 1.12);
	}
	xs_json_free(doc);
}

static void check_string(const char *text, const char *expected, size_t expected_len)
{
	struct xs_json_doc *doc = parse_ok(text);
	if (!doc)
		return;
	struct xs_json *s = xs_json_root(doc);
	CHECK(s->type == XS_JSON_STRING);
	CHECK_MEM(s->str, s->len, expected, expected_len);
	CHECK(s->str[s->len] == 0);
	xs_json_free(doc);
}

#define CHECK_STRING(text, expected) check_string((text), (expected), sizeof(expected) - 1)

static void test_string_escapes(void)
{
	CHECK_STRING("\"\"", "");
	CHECK_STRING("\"plain\"", "plain");
	CHECK_STRING("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", "\" \\ / \b \f \n \r \t");
	CHECK_STRING("\"caf\xc3\xa9\"", "caf\xc3\xa9");	/* raw UTF-8 passes through */
}

static void test_unicode_escapes(void)
{
	CHECK_STRING("\"\\u0041\"", "A");
	CHECK_STRING("\"\\u00e9\\u00E9\"", "\xc3\xa9\xc3\xa9");
	CHECK_STRING("\"\\u07ff\"", "\xdf\xbf");
	CHECK_STRING("\"\\u0800\"", "\xe0\xa0\x80");
	CHECK_STRING("\"\\u20ac\"", "\xe2\x82\xac");
	CHECK_STRING("\"\\uffff\"", "\xef\xbf\xbf");
	CHECK_STRING("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80");	/* U+1F600, a surrogate pair */
	CHECK_STRING("\"\\udbff\\udfff\"", "\xf4\x8f\xbf\xbf");	/* U+10FFFF */
	CHECK_STRING("\"a\\u0000b\"", "a\0b");			/* an embedded NUL keeps len */
}

static char g_rt_mem[256];

/* What xs_buf_json_str writes, read back by the parser. */
static void check_round_trip(const char *raw, const char *expected, size_t expected_len)
{
	struct xs_buf b = { g_rt_mem, 0, sizeof(g_rt_mem), false, NULL };
	xs_buf_json_str(&b, raw);
	xs_buf_addc(&b, 0);
	CHECK(!b.failed);
	check_string(b.data, expected, expected_len);
}
#define CHECK_ROUND_TRIP(raw, expected) check_round_trip((raw), (expected), sizeof(expected) - 1)

static void test_written_strings_read_back(void)
{
	CHECK_ROUND_TRIP("plain \"q\" \\ \x01\x7f", "plain \"q\" \\ \x01\x7f");
	CHECK_ROUND_TRIP("caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80");
	/* bytes that are not UTF-8 come back as the characters U+0080..U+00FF */
	CHECK_ROUND_TRIP("dump \xff\xfe", "dump \xc3\xbf\xc3\xbe");
	CHECK_ROUND_TRIP("\xc0\x80", "\xc3\x80\xc2\x80");
}

static void test_keys_are_decoded(void)
{
	struct xs_json_doc *doc = parse_ok("{\"a\\u0062\\n\": 1}");
	if (!doc)
		return;
	struct xs_json *m = xs_json_get(xs_json_root(doc), "ab\n");
	CHECK(m != NULL && m->key_len == 3);
	xs_json_free(doc);
}

struct error_case {
	const char *text;
	size_t size;		/* 0: strlen(text) */
	size_t offset;
	const char *msg;
};

static void test_errors_with_offsets(void)
{
	static const struct error_case cases[] = {
		{ "", 0, 0, "unexpected end of input: expected a value" },
		{ "   ", 0, 3, "unexpected end of input: expected a value" },
		{ "{", 0, 1, "unexpected end of input: expected a member name" },
		{ "{\"a\"", 0, 4, "unexpected end of input: expected ':'" },
		{ "{\"a\" 1}", 0, 5, "expected ':'" },
		{ "{\"a\":", 0, 5, "unexpected end of input: expected a value" },
		{ "{\"a\":1", 0, 6, "unexpected end of input: expected ',' or '}'" },
		{ "{\"a\":1 \"b\":2}", 0, 7, "expected ',' or '}'" },
		{ "{\"a\":1]", 0, 6, "expected ',' or '}'" },
		{ "{,}", 0, 1, "expected a member name (a string)" },
		{ "{\"a\":1,}", 0, 7, "expected a member name (a string)" },
		{ "{1:2}", 0, 1, "expected a member name (a string)" },
		{ "[", 0, 1, "unexpected end of input: expected a value" },
		{ "[1", 0, 2, "unexpected end of input: expected ',' or ']'" },
		{ "[1 2]", 0, 3, "expected ',' or ']'" },
		{ "[1,", 0, 3, "unexpected end of input: expected a value" },
		{ "[1,]", 0, 3, "expected a value" },
		{ "[1}", 0, 2, "expected ',' or ']'" },
		{ "]", 0, 0, "expected a value" },
		{ "tru", 0, 0, "invalid literal: expected true, false or null" },
		{ "[nul]", 0, 1, "invalid literal: expected true, false or null" },
		{ "True", 0, 0, "expected a value" },
		{ "nullx", 0, 4, "unexpected data after the value" },
		{ "[1] [2]", 0, 4, "unexpected data after the value" },
		{ "1 2", 0, 2, "unexpected data after the value" },
		{ "{\"a\":1}x", 0, 7, "unexpected data after the value" },
		{ "01", 0, 1, "invalid number: leading zero" },
		{ "-", 0, 1, "invalid number: expected a digit" },
		{ "-a", 0, 1, "invalid number: expected a digit" },
		{ "1.", 0, 2, "invalid number: expected a digit after '.'" },
		{ "1.e5", 0, 2, "invalid number: expected a digit after '.'" },
		{ "1e", 0, 2, "invalid number: expected a digit in the exponent" },
		{ "1e+", 0, 3, "invalid number: expected a digit in the exponent" },
		{ "+1", 0, 0, "expected a value" },
		{ ".5", 0, 0, "expected a value" },
		{ "0x10", 0, 1, "unexpected data after the value" },
		{ "\"abc", 0, 0, "unterminated string" },
		{ "[\"abc\\", 0, 1, "unterminated string" },
		{ "\"a\nb\"", 0, 2, "control character in string" },
		{ "\"a\tb\"", 0, 2, "control character in string" },
		{ "\"\\x\"", 0, 1, "invalid escape in string" },
		{ "\"ab\\'\"", 0, 3, "invalid escape in string" },
		{ "\"\\u12g4\"", 0, 1, "invalid \\u escape" },
		{ "\"\\u12\"", 0, 1, "invalid \\u escape" },
		{ "\"\\ud800\"", 0, 1, "unpaired surrogate in \\u escape" },
		{ "\"\\ud800\\u0041\"", 0, 1, "unpaired surrogate in \\u escape" },
		{ "\"\\ud800x\\udc00\"", 0, 1, "unpaired surrogate in \\u escape" },
		{ "\"x\\udc00\"", 0, 2, "unpaired surrogate in \\u escape" },
		{ "[1,\0]", 5, 3, "expected a value" },
		{ "\"a\0\"", 4, 2, "control character in string" },
		{ "{\"pid\": 1, \"seq\": 2 \"x\": 3}", 0, 20, "expected ',' or '}'" },
	};
	for (size_t i = 0; i < UNIT_COUNT(cases); i++) {
		const struct error_case *c = &cases[i];
		size_t size = c->size ? c->size : strlen(c->text);
		struct xs_json_doc *doc = (struct xs_json_doc *)1;
		struct xs_json_error err = { 12345, NULL };
		int r = parse_n(c->text, size, &doc, &err);
		if (r != -EINVAL || doc != NULL || err.offset != c->offset || !err.msg || strcmp(err.msg, c->msg)) {
			unit_fail(__FILE__, __LINE__, "error case");
			fprintf(stderr, "    input [%.*s]: got %d, offset %zu, \"%s\"; want -EINVAL, offset %zu, \"%s\"\n",
				(int)size, c->text, r, err.offset, err.msg ? err.msg : "(null)", c->offset, c->msg);
			if (r == 0)
				xs_json_free(doc);
		}
	}
}

static void test_error_without_error_struct(void)
{
	struct xs_json_doc *doc;
	CHECK(parse_n("[", 1, &doc, NULL) == -EINVAL && doc == NULL);
}

static char *nested(int depth, char open, char close)
{
	char *s = malloc((size_t)depth * 2 + 1);
	memset(s, open, (size_t)depth);
	memset(s + depth, close, (size_t)depth);
	s[depth * 2] = 0;
	return s;
}

static void test_nesting_limit(void)
{
	struct xs_json_doc *doc;
	struct xs_json_error err = { 0, NULL };
	char *s = nested(XS_JSON_MAX_DEPTH, '[', ']');
	doc = parse_ok(s);
	xs_json_free(doc);
	free(s);

	s = nested(XS_JSON_MAX_DEPTH + 1, '[', ']');
	CHECK(parse_n(s, strlen(s), &doc, &err) == -EINVAL);
	CHECK(err.offset == XS_JSON_MAX_DEPTH);
	CHECK(err.msg && !strcmp(err.msg, "nesting too deep"));
	free(s);

	/* objects count too: {"a":{"a":...}} */
	size_t depth = XS_JSON_MAX_DEPTH + 1, len = 0;
	char *o = malloc(depth * 6 + 2);
	for (size_t i = 0; i < depth; i++)
		len += (size_t)sprintf(o + len, "{\"a\":");
	o[len++] = '1';
	for (size_t i = 0; i < depth; i++)
		o[len++] = '}';
	CHECK(parse_n(o, len, &doc, &err) == -EINVAL);
	CHECK(err.offset == XS_JSON_MAX_DEPTH * 5);
	CHECK(err.msg && !strcmp(err.msg, "nesting too deep"));
	free(o);
}

static void test_hostile_depth_does_not_blow_the_stack(void)
{
	struct xs_json_doc *doc;
	struct xs_json_error err = { 0, NULL };
	size_t n = 10 * 1000 * 1000;
	char *s = malloc(n);
	memset(s, '[', n);
	CHECK(xs_json_parse(s, n, &doc, &err) == -EINVAL);
	CHECK(err.offset == XS_JSON_MAX_DEPTH);
	free(s);
}

static void test_big_document_uses_many_chunks(void)
{
	/* 20000 elements and a 100 KB string: many arena chunks and a big block */
	size_t count = 20000, strsize = 100 * 1000;
	size_t cap = count * 8 + strsize + 64, len = 0;
	char *s = malloc(cap);
	s[len++] = '[';
	for (size_t i = 0; i < count; i++)
		len += (size_t)sprintf(s + len, "%zu,", i);
	s[len++] = '"';
	memset(s + len, 'z', strsize);
	len += strsize;
	s[len++] = '"';
	s[len++] = ']';
	struct xs_json_doc *doc;
	CHECK(parse_n(s, len, &doc, NULL) == 0);
	free(s);
	struct xs_json *root = xs_json_root(doc);
	CHECK(root->count == count + 1);
	uint64_t v = 0;
	CHECK(xs_json_u64(xs_json_at(root, 12345), &v) && v == 12345);
	struct xs_json *str = xs_json_at(root, count);
	CHECK(str->type == XS_JSON_STRING && str->len == strsize && str->str[strsize - 1] == 'z' &&
	      str->str[strsize] == 0);
	/* a small allocation after the big one still works */
	CHECK(xs_json_u64(xs_json_at(root, 0), &v) && v == 0);
	xs_json_free(doc);
}

static void test_real_record(void)
{
	struct xs_json_doc *doc = parse_ok(
		"{\"pid\": 4242, \"seq\": 3, \"reason\": \"signal\", \"label\": null, \"start_ns\": 1796214463974704718, "
		"\"end_ns\": 1796214463976001997, \"window\": {\"exits\": 86, \"enters\": 85, \"sync_signals\": 0, "
		"\"async_signals\": 0, \"minor_faults\": 44, \"major_faults\": 0, \"preemptions\": 0, \"syscalls\": "
		"{\"read\": {\"calls\": 2, \"errors\": 0, \"ns\": 7935}}}, \"threads\": [], \"profile\": null}");
	if (!doc)
		return;
	struct xs_json *r = xs_json_root(doc);
	uint64_t v = 0;
	CHECK(xs_json_u64(xs_json_get(r, "start_ns"), &v) && v == 1796214463974704718ull);
	CHECK(xs_json_u64(xs_json_path(r, "window.syscalls.read.ns"), &v) && v == 7935);
	CHECK(xs_json_get(r, "label")->type == XS_JSON_NULL);
	CHECK(!strcmp(xs_json_type_name(xs_json_get(r, "threads")->type), "array"));
	xs_json_free(doc);
	xs_json_free(NULL);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "objects keep order; types", test_object_keeps_order_and_types },
		{ "dotted paths", test_paths },
		{ "duplicate keys: the first wins", test_duplicate_keys_first_wins },
		{ "integers up to 2^64-1", test_integers_up_to_2_64 },
		{ "fractions and exponents", test_non_integers },
		{ "string escapes", test_string_escapes },
		{ "\\u escapes to UTF-8", test_unicode_escapes },
		{ "strings xs_buf_json_str writes read back", test_written_strings_read_back },
		{ "keys are decoded", test_keys_are_decoded },
		{ "every error with its offset", test_errors_with_offsets },
		{ "errors without an error struct", test_error_without_error_struct },
		{ "nesting limit", test_nesting_limit },
		{ "hostile depth does not blow the stack", test_hostile_depth_does_not_blow_the_stack },
		{ "big document: many arena chunks", test_big_document_uses_many_chunks },
		{ "a real record", test_real_record },
	};
	return unit_run_all(tests, UNIT_COUNT(tests));
}
