/*
 * Reading exitscope-PID.jsonl record files (one JSON window record per
 * line, see docs/DESIGN.md) for the diff and report commands, and the output
 * helpers they share: a realloc-backed xs_buf and a few column formatters.
 *
 * Ownership: a struct xs_record owns its parsed document and syscall
 * arrays; every string in it points into the document, so it is valid
 * until xs_record_release(). A record may be moved by struct assignment.
 */
#ifndef XS_CLI_RECORDS_H
#define XS_CLI_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "common/buf.h"
#include "common/json.h"

/* The scalar counters of COUNTERS, in record order. */
enum xs_rec_scalar {
	XS_REC_EXITS,
	XS_REC_ENTERS,
	XS_REC_SYNC_SIGNALS,
	XS_REC_ASYNC_SIGNALS,
	XS_REC_MINOR_FAULTS,
	XS_REC_MAJOR_FAULTS,
	XS_REC_PREEMPTIONS,
	XS_REC_NSCALARS
};

/* JSON field names of the scalar counters, indexed by enum xs_rec_scalar. */
extern const char *const g_xs_rec_scalar_names[XS_REC_NSCALARS];

struct xs_rec_syscall {
	const char *name;
	uint64_t calls;
	uint64_t errors;
	uint64_t ns;
};

struct xs_rec_counters {
	uint64_t scalar[XS_REC_NSCALARS];
	struct xs_rec_syscall *sys;	/* malloc'd, in record order */
	size_t sys_count;
};

struct xs_record {
	struct xs_json_doc *doc;
	size_t line;			/* 1-based line in its file */
	uint64_t pid;
	uint64_t seq;
	const char *reason;
	const char *label;		/* NULL when the record's label is null */
	uint64_t start_ns;
	uint64_t end_ns;
	struct xs_rec_counters window;
	struct xs_rec_counters total;
};

struct xs_record_file {
	const char *path;
	FILE *f;
	char *line;
	size_t line_cap;
	size_t lineno;			/* of the line read last */
	char msg[256];			/* why the last call failed, without the path */
};

/* Open path for reading; 0 or a negative errno. */
int xs_record_file_open(struct xs_record_file *rf, const char *path);
void xs_record_file_close(struct xs_record_file *rf);

/*
 * Read the next record into *rec, skipping blank lines. Returns 1 with a
 * record (which the caller releases), 0 at the end of the file, or a
 * negative errno with rf->msg saying why: -EINVAL for a corrupt line
 * ("line 3, byte 17: expected ','" or "line 3: 'window.exits' is missing
 * or not an unsigned integer"), after which reading can go on with the
 * next line; anything else (a read error, -ENOMEM) ends the file.
 */
int xs_record_file_next(struct xs_record_file *rf, struct xs_record *rec);

/* All the records of one file, for report. */
struct xs_run {
	const char *path;
	struct xs_record *records;	/* in file order */
	size_t count;
	size_t *skipped;		/* line numbers of corrupt lines */
	size_t skipped_count;
};

/*
 * Read every record of path into run. A corrupt line is skipped with a
 * warning on stderr ("exitscope: warning: 'F': line 3, byte 17: expected
 * ','; line skipped") and noted in run->skipped. XS_EXIT_OK, or
 * XS_EXIT_DATA after printing why (unreadable, out of memory, no valid
 * record); release the run either way.
 */
int xs_run_load(struct xs_run *run, const char *path);
void xs_run_release(struct xs_run *run);

/* The first record of run with that seq, or NULL. */
const struct xs_record *xs_run_find(const struct xs_run *run, uint64_t seq);

/* Free what rec owns and clear it; a cleared record is fine. */
void xs_record_release(struct xs_record *rec);

/* end_ns - start_ns, or 0 when the clock went backwards. */
uint64_t xs_record_duration_ns(const struct xs_record *rec);

/* The record's identity as JSON fields, from "line" to "duration_ns"
 * (no braces), as diff and report print it. */
void xs_record_json_fields(struct xs_buf *out, const struct xs_record *r);

/* Indexes into c->sys of its top count syscalls (those with calls) by
 * calls (ties: more time first, then by name), or by_time by time (ties:
 * more calls, then by name); returns how many were stored. */
size_t xs_rec_top_syscalls(const struct xs_rec_counters *c, size_t *idx, size_t count, bool by_time);

/* --- output --- */

/* An xs_buf grow function backed by realloc (start from a zeroed buf). */
int xs_cli_buf_grow(struct xs_buf *b, size_t need);
void xs_cli_buf_release(struct xs_buf *b);

/* Write b's contents to out and empty b; 0, or -ENOMEM when b ran out of
 * memory earlier, or -EIO when writing failed. */
int xs_cli_buf_flush(struct xs_buf *b, FILE *out);

/* Write b to the file path ("-": standard output), replacing it; on an
 * error says why on stderr, removes the partial file and returns
 * XS_EXIT_DATA, else XS_EXIT_OK. */
int xs_cli_write_output(const char *path, struct xs_buf *b);

/* Flush stdout and check it; XS_EXIT_OK, or prints why and returns
 * XS_EXIT_DATA. */
int xs_cli_finish_stdout(void);

/* printf into b (one piece of at most 1023 bytes). */
void xs_cli_addf(struct xs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s right-aligned in width columns. */
void xs_cli_right(struct xs_buf *b, const char *s, int width);
/* s with control characters (C0, DEL, C1) and bytes that are not UTF-8
 * shown as '?', left-aligned in width columns. */
void xs_cli_text(struct xs_buf *b, const char *s, int width);
/* A label as a JSON string literal (C1 controls and bytes that are not
 * UTF-8 as '?'), or "-" for none; padded to width. */
void xs_cli_label(struct xs_buf *b, const char *label, int width);
/* ns as seconds with 6 decimals (microseconds), right-aligned. */
void xs_cli_seconds(struct xs_buf *b, uint64_t ns, int width);
/* b - a as "+N", "-N" or "0"; with decimals > 0, scaled like
 * xs_buf_fixed (so ns with decimals 3 prints microseconds). */
void xs_cli_delta(struct xs_buf *b, uint64_t a, uint64_t bv, int decimals, int width);
/* b / a with 3 decimals; "-" when both are 0, "new" when only a is 0,
 * "gone" when only b is 0. */
void xs_cli_ratio(struct xs_buf *b, uint64_t a, uint64_t bv, int width);
/* JSON: b / a as a number with 3 decimals, or null when a is 0. */
void xs_cli_json_ratio(struct xs_buf *b, uint64_t a, uint64_t bv);

#endif
