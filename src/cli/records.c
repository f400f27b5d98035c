/*
 * Record files for diff and report: line-by-line reading with getline,
 * JSON parsing, and checking each record against the format in docs/DESIGN.md
 * so that the commands can trust every field they print. Unknown fields
 * are ignored (newer runtimes may add some); missing or mistyped ones make
 * the line corrupt. Also the small output layer both commands share.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli/cli.h"
#include "cli/records.h"
#include "common/json.h"

const char *const g_xs_rec_scalar_names[XS_REC_NSCALARS] = {
	[XS_REC_EXITS] = "exits",
	[XS_REC_ENTERS] = "enters",
	[XS_REC_SYNC_SIGNALS] = "sync_signals",
	[XS_REC_ASYNC_SIGNALS] = "async_signals",
	[XS_REC_MINOR_FAULTS] = "minor_faults",
	[XS_REC_MAJOR_FAULTS] = "major_faults",
	[XS_REC_PREEMPTIONS] = "preemptions",
};

int xs_record_file_open(struct xs_record_file *rf, const char *path)
{
	memset(rf, 0, sizeof(*rf));
	rf->path = path;
	rf->f = fopen(path, "r");
	if (!rf->f)
		return -errno;
	struct stat st;
	if (fstat(fileno(rf->f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(rf->f);
		rf->f = NULL;
		return -EISDIR;
	}
	return 0;
}

void xs_record_file_close(struct xs_record_file *rf)
{
	if (rf->f)
		fclose(rf->f);
	free(rf->line);
	rf->f = NULL;
	rf->line = NULL;
}

__attribute__((format(printf, 2, 3))) static int corrupt(struct xs_record_file *rf, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(rf->msg, sizeof(rf->msg), "line %zu: ", rf->lineno);
	va_start(ap, fmt);
	vsnprintf(rf->msg + n, sizeof(rf->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int want_u64(struct xs_record_file *rf, const struct xs_json *obj, const char *prefix, const char *key,
		    uint64_t *out)
{
	if (xs_json_u64(xs_json_get(obj, key), out))
		return 0;
	return corrupt(rf, "'%s%s' is missing or not an unsigned integer", prefix, key);
}

static int parse_counters(struct xs_record_file *rf, const struct xs_json *rec, const char *key,
			  struct xs_rec_counters *c)
{
	const struct xs_json *obj = xs_json_get(rec, key);
	if (!obj || obj->type != XS_JSON_OBJECT)
		return corrupt(rf, "'%s' is missing or not an object", key);
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "%s.", key);
	for (int i = 0; i < XS_REC_NSCALARS; i++)
		if (want_u64(rf, obj, prefix, g_xs_rec_scalar_names[i], &c->scalar[i]) < 0)
			return -EINVAL;
	const struct xs_json *sys = xs_json_get(obj, "syscalls");
	if (!sys || sys->type != XS_JSON_OBJECT)
		return corrupt(rf, "'%s.syscalls' is missing or not an object", key);
	if (sys->count) {
		c->sys = calloc(sys->count, sizeof(*c->sys));
		if (!c->sys) {
			snprintf(rf->msg, sizeof(rf->msg), "line %zu: out of memory", rf->lineno);
			return -ENOMEM;
		}
	}
	for (const struct xs_json *m = sys->first; m; m = m->next) {
		struct xs_rec_syscall *s = &c->sys[c->sys_count++];
		s->name = m->key;
		if (!xs_json_u64(xs_json_get(m, "calls"), &s->calls) ||
		    !xs_json_u64(xs_json_get(m, "errors"), &s->errors) ||
		    !xs_json_u64(xs_json_get(m, "ns"), &s->ns))
			return corrupt(rf, "'%s.syscalls.%s' needs unsigned integers calls, errors and ns", key,
				       m->key);
	}
	return 0;
}

static int parse_record(struct xs_record_file *rf, const char *text, size_t size, struct xs_record *rec)
{
	struct xs_json_error jerr;
	memset(rec, 0, sizeof(*rec));
	rec->line = rf->lineno;
	int err = xs_json_parse(text, size, &rec->doc, &jerr);
	if (err < 0) {
		snprintf(rf->msg, sizeof(rf->msg), "line %zu, byte %zu: %s", rf->lineno, jerr.offset + 1, jerr.msg);
		return err;
	}
	const struct xs_json *root = xs_json_root(rec->doc);
	if (root->type != XS_JSON_OBJECT) {
		err = corrupt(rf, "expected an object, found %s", xs_json_type_name(root->type));
		goto out_release;
	}
	if ((err = want_u64(rf, root, "", "pid", &rec->pid)) < 0 ||
	    (err = want_u64(rf, root, "", "seq", &rec->seq)) < 0 ||
	    (err = want_u64(rf, root, "", "start_ns", &rec->start_ns)) < 0 ||
	    (err = want_u64(rf, root, "", "end_ns", &rec->end_ns)) < 0)
		goto out_release;
	const struct xs_json *reason = xs_json_get(root, "reason");
	if (!reason || reason->type != XS_JSON_STRING) {
		err = corrupt(rf, "'reason' is missing or not a string");
		goto out_release;
	}
	rec->reason = reason->str;
	const struct xs_json *label = xs_json_get(root, "label");
	if (label && label->type == XS_JSON_STRING) {
		rec->label = label->str;
	} else if (label && label->type != XS_JSON_NULL) {
		err = corrupt(rf, "'label' is neither a string nor null");
		goto out_release;
	}
	if ((err = parse_counters(rf, root, "window", &rec->window)) < 0 ||
	    (err = parse_counters(rf, root, "total", &rec->total)) < 0)
		goto out_release;
	return 1;

out_release:
	xs_record_release(rec);
	return err;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

int xs_record_file_next(struct xs_record_file *rf, struct xs_record *rec)
{
	for (;;) {
		errno = 0;
		ssize_t n = getline(&rf->line, &rf->line_cap, rf->f);
		if (n < 0) {
			if (ferror(rf->f) || errno) {
				int err = errno ? -errno : -EIO;
				snprintf(rf->msg, sizeof(rf->msg), "read error after line %zu: %s", rf->lineno,
					 strerror(-err));
				return err;
			}
			return 0;
		}
		rf->lineno++;
		if (n > 0 && rf->line[n - 1] == '\n')
			n--;
		if (blank(rf->line, (size_t)n))
			continue;
		return parse_record(rf, rf->line, (size_t)n, rec);
	}
}

void xs_record_release(struct xs_record *rec)
{
	xs_json_free(rec->doc);
	free(rec->window.sys);
	free(rec->total.sys);
	memset(rec, 0, sizeof(*rec));
}

static bool push(void **arr, size_t *cap, size_t count, size_t elem)
{
	if (count < *cap)
		return true;
	size_t ncap = *cap ? *cap * 2 : 16;
	void *grown = realloc(*arr, ncap * elem);
	if (!grown)
		return false;
	*arr = grown;
	*cap = ncap;
	return true;
}

int xs_run_load(struct xs_run *run, const char *path)
{
	struct xs_record_file rf;
	struct xs_record rec;
	size_t records_cap = 0, skipped_cap = 0;
	int r, status = XS_EXIT_DATA;

	memset(run, 0, sizeof(*run));
	run->path = path;
	if ((r = xs_record_file_open(&rf, path)) < 0) {
		xs_error("cannot open '%s': %s", path, strerror(-r));
		return XS_EXIT_DATA;
	}
	while ((r = xs_record_file_next(&rf, &rec)) != 0) {
		if (r == -EINVAL) {
			xs_error("warning: '%s': %s; line skipped", path, rf.msg);
			if (!push((void **)&run->skipped, &skipped_cap, run->skipped_count, sizeof(size_t)))
				goto out_oom;
			run->skipped[run->skipped_count++] = rf.lineno;
			continue;
		}
		if (r < 0) {
			xs_error("'%s': %s", path, rf.msg);
			goto out_close;
		}
		if (!push((void **)&run->records, &records_cap, run->count, sizeof(rec))) {
			xs_record_release(&rec);
			goto out_oom;
		}
		run->records[run->count++] = rec;
	}
	if (!run->count) {
		if (run->skipped_count)
			xs_error("'%s': no valid records (%zu line%s skipped)", path, run->skipped_count,
				 run->skipped_count == 1 ? "" : "s");
		else
			xs_error("'%s': no records", path);
		goto out_close;
	}
	status = XS_EXIT_OK;
	goto out_close;
out_oom:
	xs_error("out of memory reading '%s'", path);
out_close:
	xs_record_file_close(&rf);
	return status;
}

void xs_run_release(struct xs_run *run)
{
	for (size_t i = 0; i < run->count; i++)
		xs_record_release(&run->records[i]);
	free(run->records);
	free(run->skipped);
	memset(run, 0, sizeof(*run));
}

const struct xs_record *xs_run_find(const struct xs_run *run, uint64_t seq)
{
	for (size_t i = 0; i < run->count; i++)
		if (run->records[i].seq == seq)
			return &run->records[i];
	return NULL;
}

uint64_t xs_record_duration_ns(const struct xs_record *rec)
{
	return rec->end_ns > rec->start_ns ? rec->end_ns - rec->start_ns : 0;
}

/* Does syscall x rank before y in a top list? */
static bool ranks_before(const struct xs_rec_syscall *x, const struct xs_rec_syscall *y, bool by_time)
{
	uint64_t kx = by_time ? x->ns : x->calls, ky = by_time ? y->ns : y->calls;
	uint64_t sx = by_time ? x->calls : x->ns, sy = by_time ? y->calls : y->ns;
	if (kx != ky)
		return kx > ky;
	if (sx != sy)
		return sx > sy;
	return strcmp(x->name, y->name) < 0;
}

size_t xs_rec_top_syscalls(const struct xs_rec_counters *c, size_t *idx, size_t count, bool by_time)
{
	size_t n = 0;
	for (size_t i = 0; i < c->sys_count; i++) {
		if (!c->sys[i].calls)
			continue;
		/* insertion into the short sorted list idx[0..n) */
		size_t pos = n;
		while (pos > 0 && ranks_before(&c->sys[i], &c->sys[idx[pos - 1]], by_time))
			pos--;
		if (pos >= count)
			continue;
		if (n < count)
			n++;
		memmove(idx + pos + 1, idx + pos, (n - 1 - pos) * sizeof(*idx));
		idx[pos] = i;
	}
	return n;
}

int xs_cli_buf_grow(struct xs_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	char *data = realloc(b->data, cap);
	if (!data)
		return -ENOMEM;
	b->data = data;
	b->cap = cap;
	return 0;
}

void xs_cli_buf_release(struct xs_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int xs_cli_buf_flush(struct xs_buf *b, FILE *out)
{
	if (b->failed)
		return -ENOMEM;
	size_t n = b->len ? fwrite(b->data, 1, b->len, out) : 0;
	bool short_write = n != b->len;
	b->len = 0;
	return short_write ? -EIO : 0;
}

int xs_cli_write_output(const char *path, struct xs_buf *b)
{
	if (b->failed) {
		xs_error("out of memory while building '%s'", path);
		return XS_EXIT_DATA;
	}
	if (!strcmp(path, "-")) {
		if (xs_cli_buf_flush(b, stdout) < 0) {
			xs_error("cannot write to standard output: %s", strerror(errno ? errno : EIO));
			return XS_EXIT_DATA;
		}
		return xs_cli_finish_stdout();
	}
	FILE *out = fopen(path, "we");
	if (!out) {
		xs_error("cannot create '%s': %s", path, strerror(errno));
		return XS_EXIT_DATA;
	}
	errno = 0;
	int err = xs_cli_buf_flush(b, out);
	if (fclose(out) != 0 && !err)
		err = -errno;
	if (err < 0) {
		xs_error("cannot write '%s': %s; removed the partial file", path, strerror(errno ? errno : EIO));
		unlink(path);
		return XS_EXIT_DATA;
	}
	return XS_EXIT_OK;
}

int xs_cli_finish_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		xs_error("cannot write to standard output: %s", strerror(errno ? errno : EIO));
		return XS_EXIT_DATA;
	}
	return XS_EXIT_OK;
}

void xs_cli_addf(struct xs_buf *b, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	xs_buf_addn(b, text, n < 0 ? 0 : (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

/* Columns that s takes on a UTF-8 terminal: one per character (not per
 * byte), taking every character as one column wide. */
static int text_columns(const char *s, size_t n)
{
	int cols = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			cols++;
	return cols;
}

void xs_cli_right(struct xs_buf *b, const char *s, int width)
{
	for (int pad = width - text_columns(s, strlen(s)); pad > 0; pad--)
		xs_buf_addc(b, ' ');
	xs_buf_add(b, s);
}

/* Append s without what a terminal would obey: C0 and C1 controls, DEL
 * and bytes that are not UTF-8 (an 8-bit CSI, 0x9b, in a Latin-1
 * terminal) become '?'. */
static void terminal_safe(struct xs_buf *b, const char *s)
{
	while (*s) {
		uint32_t cp;
		size_t n = xs_utf8_char(s, &cp);
		if (!n || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
			xs_buf_addc(b, '?');
			s += n ? n : 1;
		} else {
			xs_buf_addn(b, s, n);
			s += n;
		}
	}
}

void xs_cli_text(struct xs_buf *b, const char *s, int width)
{
	size_t start = b->len;
	terminal_safe(b, s);
	for (int n = text_columns(b->data + start, b->len - start); n < width; n++)
		xs_buf_addc(b, ' ');
}

void xs_cli_label(struct xs_buf *b, const char *label, int width)
{
	size_t start = b->len;
	if (label) {
		/* JSON escapes C0 controls; what JSON leaves raw goes through terminal_safe */
		struct xs_buf json = { .grow = xs_cli_buf_grow };
		xs_buf_json_str(&json, label);
		xs_buf_addc(&json, 0);
		terminal_safe(b, json.failed ? "\"?\"" : json.data);
		xs_cli_buf_release(&json);
	} else {
		xs_buf_addc(b, '-');
	}
	for (int n = text_columns(b->data + start, b->len - start); n < width; n++)
		xs_buf_addc(b, ' ');
}

void xs_cli_seconds(struct xs_buf *b, uint64_t ns, int width)
{
	xs_buf_fixed(b, ns / 1000, 6, width);
}

void xs_cli_delta(struct xs_buf *b, uint64_t a, uint64_t bv, int decimals, int width)
{
	char tmp[48];
	struct xs_buf t = { tmp, 0, sizeof(tmp) - 1, false, NULL };
	uint64_t mag = bv >= a ? bv - a : a - bv;
	if (mag)
		xs_buf_addc(&t, bv > a ? '+' : '-');
	xs_buf_fixed(&t, mag, decimals, 0);
	tmp[t.len] = 0;
	xs_cli_right(b, tmp, width);
}

void xs_cli_ratio(struct xs_buf *b, uint64_t a, uint64_t bv, int width)
{
	char tmp[48];
	if (!a && !bv)
		snprintf(tmp, sizeof(tmp), "-");
	else if (!a)
		snprintf(tmp, sizeof(tmp), "new");
	else if (!bv)
		snprintf(tmp, sizeof(tmp), "gone");
	else
		snprintf(tmp, sizeof(tmp), "%.3f", (double)bv / (double)a);
	xs_cli_right(b, tmp, width);
}

void xs_cli_json_ratio(struct xs_buf *b, uint64_t a, uint64_t bv)
{
	char tmp[48];
	if (!a) {
		xs_buf_add(b, "null");
		return;
	}
	snprintf(tmp, sizeof(tmp), "%.3f", (double)bv / (double)a);
	xs_buf_add(b, tmp);
}

void xs_record_json_fields(struct xs_buf *out, const struct xs_record *r)
{
	xs_buf_add(out, "\"line\": ");
	xs_buf_u64(out, r->line, 0);
	xs_buf_add(out, ", \"pid\": ");
	xs_buf_u64(out, r->pid, 0);
	xs_buf_add(out, ", \"seq\": ");
	xs_buf_u64(out, r->seq, 0);
	xs_buf_add(out, ", \"reason\": ");
	xs_buf_json_str(out, r->reason);
	xs_buf_add(out, ", \"label\": ");
	if (r->label)
		xs_buf_json_str(out, r->label);
	else
		xs_buf_add(out, "null");
	xs_buf_add(out, ", \"start_ns\": ");
	xs_buf_u64(out, r->start_ns, 0);
	xs_buf_add(out, ", \"end_ns\": ");
	xs_buf_u64(out, r->end_ns, 0);
	xs_buf_add(out, ", \"duration_ns\": ");
	xs_buf_u64(out, xs_record_duration_ns(r), 0);
}
