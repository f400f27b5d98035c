/*
 * A small JSON reader (RFC 8259) for the command-line tool: it parses one
 * JSON text into a tree and answers lookups by key, index or dotted path.
 *
 * Ownership: every node, key and string of a document lives in the
 * document's arena; xs_json_free() releases them all at once, and no
 * pointer obtained from a document outlives it.
 *
 * Objects keep their members in input order (duplicate keys are kept;
 * lookups find the first). Strings are decoded (escapes, \uXXXX and
 * surrogate pairs to UTF-8) and NUL-terminated; a string may hold a NUL
 * from \u0000, so len is authoritative. Numbers are kept as a double and,
 * when the literal is a plain integer that fits, also exactly as
 * uint64 (0..2^64-1) and/or int64. Nesting deeper than XS_JSON_MAX_DEPTH
 * arrays/objects is an error, so hostile input cannot exhaust the stack.
 * Raw bytes >= 0x80 in strings are passed through unchecked.
 */
#ifndef XS_COMMON_JSON_H
#define XS_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XS_JSON_MAX_DEPTH 128

enum xs_json_type {
	XS_JSON_NULL,
	XS_JSON_FALSE,
	XS_JSON_TRUE,
	XS_JSON_NUMBER,
	XS_JSON_STRING,
	XS_JSON_ARRAY,
	XS_JSON_OBJECT,
};

struct xs_json {
	enum xs_json_type type;
	/* XS_JSON_NUMBER */
	double num;
	bool is_u64;		/* integer literal in 0..2^64-1 ("-0" is not) */
	bool is_i64;		/* integer literal in INT64_MIN..INT64_MAX */
	uint64_t u64;
	int64_t i64;
	/* XS_JSON_STRING: decoded, NUL-terminated */
	const char *str;
	size_t len;
	/* XS_JSON_ARRAY, XS_JSON_OBJECT: children in input order */
	struct xs_json *first;
	size_t count;
	/* set on every member of an object: its decoded key */
	const char *key;
	size_t key_len;
	struct xs_json *next;	/* next sibling in the parent array/object */
	size_t offset;		/* byte offset of the value in the input */
};

/* Where and why a parse failed. msg is a static lowercase phrase such as
 * "expected ',' or '}'"; offset is the 0-based byte offset of the
 * offending byte (the input's size for a premature end). */
struct xs_json_error {
	size_t offset;
	const char *msg;
};

struct xs_json_doc;

/*
 * Parse the size bytes at text (no NUL needed; a NUL byte is an error) as
 * one JSON text, surrounded by optional whitespace. On success returns 0
 * and sets *doc, which the caller frees with xs_json_free(). On a syntax
 * error returns -EINVAL and fills *err (if not NULL); when memory runs out
 * returns -ENOMEM with err->msg "out of memory". *doc is NULL on error.
 */
int xs_json_parse(const char *text, size_t size, struct xs_json_doc **doc, struct xs_json_error *err);

/* The root value of a parsed document. */
struct xs_json *xs_json_root(const struct xs_json_doc *doc);

/* Release a document and everything in it; NULL is fine. */
void xs_json_free(struct xs_json_doc *doc);

/* The first member named key of object obj; NULL when obj is NULL or not
 * an object, or has no such member. */
struct xs_json *xs_json_get(const struct xs_json *obj, const char *key);

/* Element i of array arr (or member i of an object); NULL when out of
 * range or arr is not an array/object. */
struct xs_json *xs_json_at(const struct xs_json *arr, size_t i);

/*
 * Follow a dotted path from node: each segment is a member name for an
 * object, or a decimal index for an array ("threads.0.window.exits").
 * An empty path returns node. NULL when any step is missing. Names that
 * contain '.' need xs_json_get().
 */
struct xs_json *xs_json_path(const struct xs_json *node, const char *path);

/* Convenience: true and *out set when node is a number with is_u64. */
bool xs_json_u64(const struct xs_json *node, uint64_t *out);

/* Name of a type, for messages ("object", "number", ...). */
const char *xs_json_type_name(enum xs_json_type type);

#endif
