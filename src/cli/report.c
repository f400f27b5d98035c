/*
 * exitscope report: one table row per window record of a run, then the
 * run's totals from the last record.
 *
 *   exitscope report [--json] FILE.jsonl
 *
 * Text output (a stable format; one row per record in file order; see
 * tests/golden/report-*.golden). Columns are fixed-width and always
 * separated by at least one space:
 *
 *   exitscope report: run1.jsonl, pid 4242
 *     seq reason   label           duration_s       exits      enters sync_sig async_sig minor_flt major_flt  preempt  top syscalls (calls)
 *       0 app      "warm-up"         1.500000       12034       12033        0         2      1800         3       41  read=5000 write=4000 openat=2000
 *       2 exit     -                 0.000120           3           2        0         0         5         0        0  close=2 exit_group=1
 *   total (seq 2)                    4.000120       42137       42135        1         2      2005         3      136  read=25000 write=14000 openat=2000
 *
 * Durations are seconds with 6 decimals. A label prints as a JSON string,
 * "-" when null; reason and label may widen their row. The top syscalls
 * are the window's three with the most calls (ties: more time, then by
 * name), as NAME=CALLS. The total row shows the last record's "total"
 * counters; its duration runs from the start of the seq-0 window to the
 * end of the last one, "-" when the file holds no seq 0.
 *
 * A corrupt line is skipped with a warning on stderr
 * ("exitscope: warning: 'F': line 3, byte 17: expected ','; line skipped")
 * and the other records are still reported. Exit status: 0 when at least
 * one record was read, else 1 (nothing on stdout); 2 for a usage error.
 *
 * JSON output (--json), one object on one line:
 *   {"file": F, "windows": [WINDOW, ...], "skipped_lines": [3, ...],
 *    "total": {"seq": N, "duration_ns": N|null, COUNTS..., "top_syscalls": [...]}}
 *   WINDOW = {"line": N, "pid": N, "seq": N, "reason": S, "label": S|null,
 *             "start_ns": N, "end_ns": N, "duration_ns": N, COUNTS...,
 *             "top_syscalls": [{"name": S, "calls": N, "errors": N, "ns": N}, ...]}
 *   COUNTS = "exits": N, "enters": N, "sync_signals": N, "async_signals": N,
 *            "minor_faults": N, "major_faults": N, "preemptions": N
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/records.h"

static const char g_report_usage[] =
	"usage: exitscope report [OPTIONS] FILE.jsonl\n"
	"  --json     print the table as one JSON object\n"
	"  -h, --help this text\n";

#define TOP_COUNT 3

enum { SEQ_W = 5, REASON_W = 8, LABEL_W = 14, DURATION_W = 12 };

/* Column headers and widths of the scalar counters, in record order. */
static const struct {
	const char *title;
	int width;
} g_scalar_columns[XS_REC_NSCALARS] = {
	{ "exits", 12 },	{ "enters", 12 },	{ "sync_sig", 9 },	{ "async_sig", 10 },
	{ "minor_flt", 10 },	{ "major_flt", 10 },	{ "preempt", 9 },
};

struct report {
	const char *path;
	bool json;
	struct xs_buf out;
	size_t records;
	bool have_seq0;
	uint64_t seq0_start_ns;
	struct xs_record last;		/* the last record read, for the totals */
	size_t *skipped;		/* line numbers of corrupt lines */
	size_t skipped_count;
	size_t skipped_cap;
};

static void text_counts(struct xs_buf *out, const struct xs_rec_counters *c)
{
	size_t top[TOP_COUNT];
	/* each column starts with a space, so wide numbers never run together */
	for (int i = 0; i < XS_REC_NSCALARS; i++) {
		xs_buf_addc(out, ' ');
		xs_buf_u64(out, c->scalar[i], g_scalar_columns[i].width - 1);
	}
	xs_buf_add(out, " ");
	size_t n = xs_rec_top_syscalls(c, top, TOP_COUNT);
	for (size_t i = 0; i < n; i++) {
		xs_buf_addc(out, ' ');
		xs_cli_text(out, c->sys[top[i]].name, 0);
		xs_buf_addc(out, '=');
		xs_buf_u64(out, c->sys[top[i]].calls, 0);
	}
	xs_buf_addc(out, '\n');
}

static void text_title(struct report *rp, const struct xs_record *rec)
{
	struct xs_buf *out = &rp->out;
	xs_buf_add(out, "exitscope report: ");
	xs_cli_text(out, rp->path, 0);
	xs_buf_add(out, ", pid ");
	xs_buf_u64(out, rec->pid, 0);
	xs_buf_add(out, "\n  ");
	xs_cli_right(out, "seq", SEQ_W - 2);
	xs_buf_addc(out, ' ');
	xs_buf_pad(out, "reason", REASON_W + 1);
	xs_buf_pad(out, "label", LABEL_W);
	xs_cli_right(out, "duration_s", DURATION_W);
	for (int i = 0; i < XS_REC_NSCALARS; i++)
		xs_cli_right(out, g_scalar_columns[i].title, g_scalar_columns[i].width);
	xs_buf_add(out, "  top syscalls (calls)\n");
}

static void text_window(struct report *rp, const struct xs_record *rec)
{
	struct xs_buf *out = &rp->out;
	xs_buf_u64(out, rec->seq, SEQ_W);
	xs_buf_addc(out, ' ');
	xs_cli_text(out, rec->reason, REASON_W);
	xs_buf_addc(out, ' ');
	xs_cli_label(out, rec->label, LABEL_W);
	xs_buf_addc(out, ' ');
	xs_cli_seconds(out, xs_record_duration_ns(rec), DURATION_W - 1);
	text_counts(out, &rec->window);
}

static void text_total(struct report *rp)
{
	struct xs_buf *out = &rp->out;
	char title[48];
	snprintf(title, sizeof(title), "total (seq %llu)", (unsigned long long)rp->last.seq);
	xs_cli_text(out, title, SEQ_W + 1 + REASON_W + 1 + LABEL_W);
	xs_buf_addc(out, ' ');
	if (rp->have_seq0 && rp->last.end_ns >= rp->seq0_start_ns)
		xs_cli_seconds(out, rp->last.end_ns - rp->seq0_start_ns, DURATION_W - 1);
	else
		xs_cli_right(out, "-", DURATION_W - 1);
	text_counts(out, &rp->last.total);
}

static void json_counts(struct xs_buf *out, const struct xs_rec_counters *c)
{
	size_t top[TOP_COUNT];
	for (int i = 0; i < XS_REC_NSCALARS; i++) {
		xs_buf_add(out, ", ");
		xs_buf_json_str(out, g_xs_rec_scalar_names[i]);
		xs_buf_add(out, ": ");
		xs_buf_u64(out, c->scalar[i], 0);
	}
	xs_buf_add(out, ", \"top_syscalls\": [");
	size_t n = xs_rec_top_syscalls(c, top, TOP_COUNT);
	for (size_t i = 0; i < n; i++) {
		const struct xs_rec_syscall *s = &c->sys[top[i]];
		xs_buf_add(out, i ? ", {\"name\": " : "{\"name\": ");
		xs_buf_json_str(out, s->name);
		xs_buf_add(out, ", \"calls\": ");
		xs_buf_u64(out, s->calls, 0);
		xs_buf_add(out, ", \"errors\": ");
		xs_buf_u64(out, s->errors, 0);
		xs_buf_add(out, ", \"ns\": ");
		xs_buf_u64(out, s->ns, 0);
		xs_buf_addc(out, '}');
	}
	xs_buf_addc(out, ']');
}

static void json_window(struct report *rp, const struct xs_record *rec)
{
	struct xs_buf *out = &rp->out;
	if (rp->records == 1) {
		xs_buf_add(out, "{\"file\": ");
		xs_buf_json_str(out, rp->path);
		xs_buf_add(out, ", \"windows\": [");
	} else {
		xs_buf_add(out, ", ");
	}
	xs_buf_addc(out, '{');
	xs_record_json_fields(out, rec);
	json_counts(out, &rec->window);
	xs_buf_addc(out, '}');
}

static void json_total(struct report *rp)
{
	struct xs_buf *out = &rp->out;
	xs_buf_add(out, "], \"skipped_lines\": [");
	for (size_t i = 0; i < rp->skipped_count; i++) {
		if (i)
			xs_buf_add(out, ", ");
		xs_buf_u64(out, rp->skipped[i], 0);
	}
	xs_buf_add(out, "], \"total\": {\"seq\": ");
	xs_buf_u64(out, rp->last.seq, 0);
	xs_buf_add(out, ", \"duration_ns\": ");
	if (rp->have_seq0 && rp->last.end_ns >= rp->seq0_start_ns)
		xs_buf_u64(out, rp->last.end_ns - rp->seq0_start_ns, 0);
	else
		xs_buf_add(out, "null");
	json_counts(out, &rp->last.total);
	xs_buf_add(out, "}}\n");
}

/* Remember a skipped line for the JSON output; false when out of memory. */
static bool note_skipped(struct report *rp, size_t line)
{
	if (rp->skipped_count == rp->skipped_cap) {
		size_t cap = rp->skipped_cap ? rp->skipped_cap * 2 : 8;
		size_t *grown = realloc(rp->skipped, cap * sizeof(*grown));
		if (!grown)
			return false;
		rp->skipped = grown;
		rp->skipped_cap = cap;
	}
	rp->skipped[rp->skipped_count++] = line;
	return true;
}

/* Read and print every record; XS_EXIT_OK or XS_EXIT_DATA. */
static int report_file(struct report *rp)
{
	struct xs_record_file rf;
	struct xs_record rec;
	int r, status = XS_EXIT_DATA;

	if ((r = xs_record_file_open(&rf, rp->path)) < 0) {
		xs_error("cannot open '%s': %s", rp->path, strerror(-r));
		return XS_EXIT_DATA;
	}
	for (;;) {
		r = xs_record_file_next(&rf, &rec);
		if (r == 0)
			break;
		if (r == -EINVAL) {
			xs_error("warning: '%s': %s; line skipped", rp->path, rf.msg);
			if (!note_skipped(rp, rf.lineno)) {
				xs_error("out of memory");
				goto out_close;
			}
			continue;
		}
		if (r < 0) {
			xs_error("'%s': %s", rp->path, rf.msg);
			goto out_close;
		}
		rp->records++;
		if (rec.seq == 0 && !rp->have_seq0) {
			rp->have_seq0 = true;
			rp->seq0_start_ns = rec.start_ns;
		}
		if (rp->json) {
			json_window(rp, &rec);
		} else {
			if (rp->records == 1)
				text_title(rp, &rec);
			text_window(rp, &rec);
		}
		xs_record_release(&rp->last);
		rp->last = rec;
		if (xs_cli_buf_flush(&rp->out, stdout) == -ENOMEM) {
			xs_error("out of memory");
			goto out_close;
		}
	}
	if (!rp->records) {
		if (rp->skipped_count)
			xs_error("'%s': no valid records (%zu line%s skipped)", rp->path, rp->skipped_count,
				 rp->skipped_count == 1 ? "" : "s");
		else
			xs_error("'%s': no records", rp->path);
		goto out_close;
	}
	if (rp->json)
		json_total(rp);
	else
		text_total(rp);
	if (xs_cli_buf_flush(&rp->out, stdout) == -ENOMEM) {
		xs_error("out of memory");
		goto out_close;
	}
	status = xs_cli_finish_stdout();

out_close:
	xs_record_file_close(&rf);
	return status;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report rp = { .out = { .grow = xs_cli_buf_grow } };
	int opt;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			rp.json = true;
			break;
		case 'h':
			fputs(g_report_usage, stdout);
			return xs_cli_finish_stdout();
		default:
			xs_error("report: unknown option '%s'; see 'exitscope report --help'", argv[optind - 1]);
			return XS_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		xs_error("report needs one record file; see 'exitscope report --help'");
		return XS_EXIT_USAGE;
	}
	rp.path = argv[optind];
	int status = report_file(&rp);
	xs_record_release(&rp.last);
	xs_cli_buf_release(&rp.out);
	free(rp.skipped);
	return status;
}
