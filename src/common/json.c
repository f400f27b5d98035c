/*
 * The JSON reader: a recursive-descent parser whose recursion is bounded by
 * XS_JSON_MAX_DEPTH, allocating nodes and decoded strings from one arena
 * per document (a chain of malloc'd chunks freed together).
 *
 * The reader is for the command-line tool only. The runtime is built from
 * src/common too, but must not gain malloc or strtod, so under XS_RUNTIME
 * this file compiles to nothing.
 */
#ifndef XS_RUNTIME

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/json.h"

#define ARENA_CHUNK_SIZE 16384

struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	size_t size;
	max_align_t data[];
};

struct xs_json_doc {
	struct arena_chunk *chunks;
	struct xs_json *root;
};

struct parser {
	const char *p;		/* next byte */
	const char *start;
	const char *end;
	struct xs_json_doc *doc;
	int depth;
	int err;		/* -EINVAL or -ENOMEM once failed */
	struct xs_json_error *error;
};

static void *arena_alloc(struct xs_json_doc *doc, size_t size)
{
	size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	struct arena_chunk *c = doc->chunks;
	if (!c || c->size - c->used < size) {
		size_t chunk_size = size > ARENA_CHUNK_SIZE / 4 ? size : ARENA_CHUNK_SIZE;
		c = malloc(sizeof(*c) + chunk_size);
		if (!c)
			return NULL;
		c->size = chunk_size;
		c->used = 0;
		if (chunk_size == size && doc->chunks) {
			/* a big block: keep filling the current small chunk */
			c->next = doc->chunks->next;
			doc->chunks->next = c;
		} else {
			c->next = doc->chunks;
			doc->chunks = c;
		}
	}
	void *ptr = (char *)c->data + c->used;
	c->used += size;
	return ptr;
}

static int fail_at(struct parser *ps, const char *at, const char *msg)
{
	if (!ps->err) {
		ps->err = -EINVAL;
		if (ps->error) {
			ps->error->offset = (size_t)(at - ps->start);
			ps->error->msg = msg;
		}
	}
	return ps->err;
}

static int fail_nomem(struct parser *ps)
{
	if (!ps->err) {
		ps->err = -ENOMEM;
		if (ps->error) {
			ps->error->offset = (size_t)(ps->p - ps->start);
			ps->error->msg = "out of memory";
		}
	}
	return ps->err;
}

static struct xs_json *new_node(struct parser *ps, enum xs_json_type type, const char *at)
{
	struct xs_json *n = arena_alloc(ps->doc, sizeof(*n));
	if (!n) {
		fail_nomem(ps);
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->type = type;
	n->offset = (size_t)(at - ps->start);
	return n;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Four hex digits at p (bounds already checked by the caller), or -1. */
static long hex4(const char *p)
{
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hex_value(p[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static size_t put_utf8(char *out, unsigned long cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * A string literal at ps->p (which is '"'). Decodes into the arena; the
 * decoded form is never longer than the literal (\uXXXX is 6 bytes in,
 * at most 3 out; a surrogate pair 12 in, 4 out).
 */
static int parse_string(struct parser *ps, const char **out, size_t *out_len)
{
	const char *open = ps->p++;
	const char *q = ps->p;
	/* find the closing quote, checking bytes and escapes on the way */
	while (q < ps->end && *q != '"') {
		unsigned char c = (unsigned char)*q;
		if (c < 0x20)
			return fail_at(ps, q, "control character in string");
		if (c == '\\') {
			if (q + 1 >= ps->end) {
				q = ps->end;
				break;
			}
			q += 2;
		} else {
			q++;
		}
	}
	if (q >= ps->end)
		return fail_at(ps, open, "unterminated string");
	char *dst = arena_alloc(ps->doc, (size_t)(q - ps->p) + 1);
	if (!dst)
		return fail_nomem(ps);
	size_t n = 0;
	const char *s = ps->p;
	while (s < q) {
		if (*s != '\\') {
			dst[n++] = *s++;
			continue;
		}
		const char *esc = s;
		s++;
		switch (*s++) {
		case '"': dst[n++] = '"'; break;
		case '\\': dst[n++] = '\\'; break;
		case '/': dst[n++] = '/'; break;
		case 'b': dst[n++] = '\b'; break;
		case 'f': dst[n++] = '\f'; break;
		case 'n': dst[n++] = '\n'; break;
		case 'r': dst[n++] = '\r'; break;
		case 't': dst[n++] = '\t'; break;
		case 'u': {
			long cp = q - s >= 4 ? hex4(s) : -1;
			if (cp < 0)
				return fail_at(ps, esc, "invalid \\u escape");
			s += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return fail_at(ps, esc, "unpaired surrogate in \\u escape");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				long lo = q - s >= 6 && s[0] == '\\' && s[1] == 'u' ? hex4(s + 2) : -1;
				if (lo < 0xdc00 || lo > 0xdfff)
					return fail_at(ps, esc, "unpaired surrogate in \\u escape");
				s += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			n += put_utf8(dst + n, (unsigned long)cp);
			break;
		}
		default:
			return fail_at(ps, esc, "invalid escape in string");
		}
	}
	dst[n] = 0;
	*out = dst;
	*out_len = n;
	ps->p = q + 1;
	return 0;
}

static bool is_digit(const struct parser *ps, const char *q)
{
	return q < ps->end && *q >= '0' && *q <= '9';
}

static int parse_number(struct parser *ps, struct xs_json *n)
{
	const char *begin = ps->p, *q = ps->p;
	bool neg = false, integral = true;
	if (*q == '-') {
		neg = true;
		q++;
	}
	if (!is_digit(ps, q))
		return fail_at(ps, q, "invalid number: expected a digit");
	uint64_t mag = 0;
	bool overflow = false;
	if (*q == '0') {
		q++;
		if (is_digit(ps, q))
			return fail_at(ps, q, "invalid number: leading zero");
	} else {
		for (; is_digit(ps, q); q++) {
			unsigned d = (unsigned)(*q - '0');
			if (mag > (UINT64_MAX - d) / 10)
				overflow = true;
			else
				mag = mag * 10 + d;
		}
	}
	if (q < ps->end && *q == '.') {
		integral = false;
		q++;
		if (!is_digit(ps, q))
			return fail_at(ps, q, "invalid number: expected a digit after '.'");
		while (is_digit(ps, q))
			q++;
	}
	if (q < ps->end && (*q == 'e' || *q == 'E')) {
		integral = false;
		q++;
		if (q < ps->end && (*q == '+' || *q == '-'))
			q++;
		if (!is_digit(ps, q))
			return fail_at(ps, q, "invalid number: expected a digit in the exponent");
		while (is_digit(ps, q))
			q++;
	}
	/* strtod needs a NUL-terminated copy: the input need not have one */
	size_t len = (size_t)(q - begin);
	char small[64], *copy = small;
	if (len >= sizeof(small) && !(copy = arena_alloc(ps->doc, len + 1)))
		return fail_nomem(ps);
	memcpy(copy, begin, len);
	copy[len] = 0;
	n->num = strtod(copy, NULL);
	if (integral && !overflow) {
		if (!neg) {
			n->is_u64 = true;
			n->u64 = mag;
			if (mag <= (uint64_t)INT64_MAX) {
				n->is_i64 = true;
				n->i64 = (int64_t)mag;
			}
		} else if (mag <= (uint64_t)INT64_MAX + 1) {
			n->is_i64 = true;
			n->i64 = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
		}
	}
	ps->p = q;
	return 0;
}

static int parse_value(struct parser *ps, struct xs_json **out);

static int parse_literal(struct parser *ps, const char *word, enum xs_json_type type, struct xs_json **out)
{
	size_t len = strlen(word);
	if ((size_t)(ps->end - ps->p) < len || memcmp(ps->p, word, len) != 0)
		return fail_at(ps, ps->p, "invalid literal: expected true, false or null");
	if (!(*out = new_node(ps, type, ps->p)))
		return ps->err;
	ps->p += len;
	return 0;
}

/* An array or object at ps->p ('[' or '{'). */
static int parse_container(struct parser *ps, struct xs_json *n)
{
	bool object = n->type == XS_JSON_OBJECT;
	char close = object ? '}' : ']';
	const char *missing_sep = object ? "expected ',' or '}'" : "expected ',' or ']'";
	struct xs_json **tail = &n->first;

	if (++ps->depth > XS_JSON_MAX_DEPTH)
		return fail_at(ps, ps->p, "nesting too deep");
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return 0;
	}
	for (;;) {
		const char *key = NULL;
		size_t key_len = 0;
		if (object) {
			skip_ws(ps);
			if (ps->p >= ps->end)
				return fail_at(ps, ps->p, "unexpected end of input: expected a member name");
			if (*ps->p != '"')
				return fail_at(ps, ps->p, "expected a member name (a string)");
			if (parse_string(ps, &key, &key_len) < 0)
				return ps->err;
			skip_ws(ps);
			if (ps->p >= ps->end)
				return fail_at(ps, ps->p, "unexpected end of input: expected ':'");
			if (*ps->p != ':')
				return fail_at(ps, ps->p, "expected ':'");
			ps->p++;
		}
		struct xs_json *child;
		if (parse_value(ps, &child) < 0)
			return ps->err;
		child->key = key;
		child->key_len = key_len;
		*tail = child;
		tail = &child->next;
		n->count++;
		skip_ws(ps);
		if (ps->p >= ps->end)
			return fail_at(ps, ps->p, object ? "unexpected end of input: expected ',' or '}'"
						         : "unexpected end of input: expected ',' or ']'");
		if (*ps->p == close) {
			ps->p++;
			ps->depth--;
			return 0;
		}
		if (*ps->p != ',')
			return fail_at(ps, ps->p, missing_sep);
		ps->p++;
	}
}

static int parse_value(struct parser *ps, struct xs_json **out)
{
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail_at(ps, ps->p, "unexpected end of input: expected a value");
	const char *at = ps->p;
	switch (*at) {
	case '{':
	case '[': {
		struct xs_json *n = new_node(ps, *at == '{' ? XS_JSON_OBJECT : XS_JSON_ARRAY, at);
		if (!n || parse_container(ps, n) < 0)
			return ps->err ? ps->err : fail_nomem(ps);
		*out = n;
		return 0;
	}
	case '"': {
		struct xs_json *n = new_node(ps, XS_JSON_STRING, at);
		if (!n || parse_string(ps, &n->str, &n->len) < 0)
			return ps->err;
		*out = n;
		return 0;
	}
	case 't':
		return parse_literal(ps, "true", XS_JSON_TRUE, out);
	case 'f':
		return parse_literal(ps, "false", XS_JSON_FALSE, out);
	case 'n':
		return parse_literal(ps, "null", XS_JSON_NULL, out);
	default:
		if (*at == '-' || (*at >= '0' && *at <= '9')) {
			struct xs_json *n = new_node(ps, XS_JSON_NUMBER, at);
			if (!n || parse_number(ps, n) < 0)
				return ps->err;
			*out = n;
			return 0;
		}
		return fail_at(ps, at, "expected a value");
	}
}

int xs_json_parse(const char *text, size_t size, struct xs_json_doc **doc, struct xs_json_error *err)
{
	*doc = NULL;
	struct xs_json_doc *d = calloc(1, sizeof(*d));
	if (!d) {
		if (err) {
			err->offset = 0;
			err->msg = "out of memory";
		}
		return -ENOMEM;
	}
	struct parser ps = {
		.p = text, .start = text, .end = text + size, .doc = d, .error = err,
	};
	struct xs_json *root;
	if (parse_value(&ps, &root) == 0) {
		skip_ws(&ps);
		if (ps.p < ps.end)
			fail_at(&ps, ps.p, "unexpected data after the value");
	}
	if (ps.err) {
		xs_json_free(d);
		return ps.err;
	}
	d->root = root;
	*doc = d;
	return 0;
}

struct xs_json *xs_json_root(const struct xs_json_doc *doc)
{
	return doc ? doc->root : NULL;
}

void xs_json_free(struct xs_json_doc *doc)
{
	if (!doc)
		return;
	for (struct arena_chunk *c = doc->chunks, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(doc);
}

static struct xs_json *get_n(const struct xs_json *obj, const char *key, size_t len)
{
	if (!obj || obj->type != XS_JSON_OBJECT)
		return NULL;
	for (struct xs_json *m = obj->first; m; m = m->next)
		if (m->key_len == len && memcmp(m->key, key, len) == 0)
			return m;
	return NULL;
}

struct xs_json *xs_json_get(const struct xs_json *obj, const char *key)
{
	return get_n(obj, key, strlen(key));
}

struct xs_json *xs_json_at(const struct xs_json *arr, size_t i)
{
	if (!arr || (arr->type != XS_JSON_ARRAY && arr->type != XS_JSON_OBJECT) || i >= arr->count)
		return NULL;
	struct xs_json *e = arr->first;
	while (i--)
		e = e->next;
	return e;
}

struct xs_json *xs_json_path(const struct xs_json *node, const char *path)
{
	struct xs_json *cur = (struct xs_json *)node;
	while (cur && *path) {
		size_t len = strcspn(path, ".");
		if (cur->type == XS_JSON_ARRAY) {
			size_t i = 0;
			bool ok = len > 0 && len < 20;
			for (size_t k = 0; ok && k < len; k++) {
				if (path[k] < '0' || path[k] > '9')
					ok = false;
				else
					i = i * 10 + (size_t)(path[k] - '0');
			}
			cur = ok ? xs_json_at(cur, i) : NULL;
		} else {
			cur = get_n(cur, path, len);
		}
		path += len;
		if (*path == '.')
			path++;
	}
	return cur;
}

bool xs_json_u64(const struct xs_json *node, uint64_t *out)
{
	if (!node || node->type != XS_JSON_NUMBER || !node->is_u64)
		return false;
	*out = node->u64;
	return true;
}

const char *xs_json_type_name(enum xs_json_type type)
{
	switch (type) {
	case XS_JSON_NULL: return "null";
	case XS_JSON_FALSE:
	case XS_JSON_TRUE: return "boolean";
	case XS_JSON_NUMBER: return "number";
	case XS_JSON_STRING: return "string";
	case XS_JSON_ARRAY: return "array";
	case XS_JSON_OBJECT: return "object";
	}
	return "?";
}

#endif /* !XS_RUNTIME */
