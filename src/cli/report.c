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
#include "cli/diff.h"
#include "cli/records.h"
#include "cli/report.h"
#include "cli/tree.h"

static const char g_report_usage[] =
	"usage: exitscope report [OPTIONS] FILE.jsonl | RUN\n"
	"  RUN (a run directory, its run.jsonl, or the run's pid with ./exitscope-PID/):\n"
	"                   per run-wide window the tree's totals, programs, heaviest\n"
	"                   processes and system calls; the process tree (text, --json,\n"
	"                   or --html: the tree linked to each process, per window a\n"
	"                   stacked chart per program and the merged flame graph)\n"
	"  --json           print the table as one JSON object\n"
	"  --summary        (RUN) the log's summary at the run's end: the tree's totals,\n"
	"                   programs, top calls, and where the files are\n"
	"  --compare A,B    after the table, compare windows A and B (seqs) as\n"
	"                   'exitscope diff' does\n"
	"  --html           write one self-contained HTML page instead: windows,\n"
	"                   system call charts, threads, flame graphs, comparison\n"
	"  -o, --output F   where --html writes (default: FILE.html; '-': stdout)\n"
	"  -h, --help       this text\n";

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
	const struct xs_run *run;
	bool json;
	struct xs_buf out;
	bool have_seq0;
	uint64_t seq0_start_ns;
	const struct xs_record *last;	/* for the totals */
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
	size_t n = xs_rec_top_syscalls(c, top, TOP_COUNT, false);
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
	xs_cli_text(out, rp->run->path, 0);
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
	snprintf(title, sizeof(title), "total (seq %llu)", (unsigned long long)rp->last->seq);
	xs_cli_text(out, title, SEQ_W + 1 + REASON_W + 1 + LABEL_W);
	xs_buf_addc(out, ' ');
	if (rp->have_seq0 && rp->last->end_ns >= rp->seq0_start_ns)
		xs_cli_seconds(out, rp->last->end_ns - rp->seq0_start_ns, DURATION_W - 1);
	else
		xs_cli_right(out, "-", DURATION_W - 1);
	text_counts(out, &rp->last->total);
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
	size_t n = xs_rec_top_syscalls(c, top, TOP_COUNT, false);
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
	if (rec == rp->run->records) {
		xs_buf_add(out, "{\"file\": ");
		xs_buf_json_str(out, rp->run->path);
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
	for (size_t i = 0; i < rp->run->skipped_count; i++) {
		if (i)
			xs_buf_add(out, ", ");
		xs_buf_u64(out, rp->run->skipped[i], 0);
	}
	xs_buf_add(out, "], \"total\": {\"seq\": ");
	xs_buf_u64(out, rp->last->seq, 0);
	xs_buf_add(out, ", \"duration_ns\": ");
	if (rp->have_seq0 && rp->last->end_ns >= rp->seq0_start_ns)
		xs_buf_u64(out, rp->last->end_ns - rp->seq0_start_ns, 0);
	else
		xs_buf_add(out, "null");
	json_counts(out, &rp->last->total);
	xs_buf_add(out, "}}\n");
}

/* Print the table of rp->run; XS_EXIT_OK or XS_EXIT_DATA. */
static int report_table(struct report *rp)
{
	const struct xs_run *run = rp->run;
	for (size_t i = 0; i < run->count; i++) {
		const struct xs_record *rec = &run->records[i];
		if (rec->seq == 0 && !rp->have_seq0) {
			rp->have_seq0 = true;
			rp->seq0_start_ns = rec->start_ns;
		}
		if (rp->json) {
			json_window(rp, rec);
		} else {
			if (i == 0)
				text_title(rp, rec);
			text_window(rp, rec);
		}
	}
	rp->last = &run->records[run->count - 1];
	if (rp->json)
		json_total(rp);
	else
		text_total(rp);
	return XS_EXIT_OK;
}

/* "A,B" -> two seqs; false when malformed. */
static bool parse_compare(const char *arg, uint64_t seq[2])
{
	char *end;
	if (*arg < '0' || *arg > '9')
		return false;
	seq[0] = strtoull(arg, &end, 10);
	if (*end != ',' || end[1] < '0' || end[1] > '9')
		return false;
	seq[1] = strtoull(end + 1, &end, 10);
	return !*end;
}

/* The comparison block of --compare, after a blank line. */
static int report_compare(struct report *rp, const uint64_t seq[2])
{
	const struct xs_record *r[2];
	for (int i = 0; i < 2; i++) {
		if (!(r[i] = xs_run_find(rp->run, seq[i]))) {
			xs_error("report: '%s' has no window with seq %llu to compare", rp->run->path,
				 (unsigned long long)seq[i]);
			return XS_EXIT_DATA;
		}
	}
	xs_buf_addc(&rp->out, '\n');
	if (xs_diff_print_text(&rp->out, false, rp->run->path, r[0], rp->run->path, r[1]) < 0) {
		xs_error("out of memory");
		return XS_EXIT_DATA;
	}
	return XS_EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "html", no_argument, NULL, 'H' },
		{ "output", required_argument, NULL, 'o' },
		{ "compare", required_argument, NULL, 'c' },
		{ "summary", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report rp = { .out = { .grow = xs_cli_buf_grow } };
	struct xs_run run;
	bool html = false, compare = false, summary = false;
	uint64_t compare_seq[2];
	const char *output = NULL;
	int opt;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			rp.json = true;
			break;
		case 'H':
			html = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'c':
			if (!parse_compare(optarg, compare_seq)) {
				xs_error("report: --compare wants two window seqs 'A,B', not '%s'", optarg);
				return XS_EXIT_USAGE;
			}
			compare = true;
			break;
		case 's':
			summary = true;
			break;
		case 'h':
			fputs(g_report_usage, stdout);
			return xs_cli_finish_stdout();
		default:
			return xs_bad_option("report", argv, "o:h", longopts);
		}
	}
	if (argc - optind != 1) {
		xs_error("report needs one record file; see 'exitscope report --help'");
		return XS_EXIT_USAGE;
	}
	if ((html && (rp.json || compare)) || (output && !html)) {
		xs_error("report: --html goes alone (with -o); --json and --compare are for the terminal");
		return XS_EXIT_USAGE;
	}
	char run_file[8192];
	if (xs_tree_find(argv[optind], run_file, sizeof(run_file))) {
		/* a whole run: a run directory, a run file, or the run's pid */
		if (compare || (summary && (rp.json || html))) {
			xs_error("report: a run gives its text, --json, --html or --summary report, one at a "
				 "time; --compare takes one process's FILE.jsonl");
			return XS_EXIT_USAGE;
		}
		struct xs_tree tree;
		int st = xs_tree_load(&tree, run_file);
		if (st == XS_EXIT_OK && html)
			st = xs_tree_report_html(&tree, output);
		else if (st == XS_EXIT_OK) {
			st = summary ? xs_tree_summary(&tree, &rp.out) : xs_tree_report(&tree, rp.json, &rp.out);
			if (st == XS_EXIT_OK)
				st = xs_cli_write_output("-", &rp.out);
		}
		xs_tree_release(&tree);
		xs_cli_buf_release(&rp.out);
		return st;
	}
	if (summary) {
		xs_error("report: --summary is for a run (its directory or run file)");
		return XS_EXIT_USAGE;
	}
	int status = xs_run_load(&run, argv[optind]);
	rp.run = &run;
	if (status == XS_EXIT_OK && html)
		status = xs_report_html(&run, output);
	else if (status == XS_EXIT_OK) {
		status = report_table(&rp);
		if (status == XS_EXIT_OK && compare)
			status = report_compare(&rp, compare_seq);
		if (status == XS_EXIT_OK)
			status = xs_cli_write_output("-", &rp.out);
	}
	xs_run_release(&run);
	xs_cli_buf_release(&rp.out);
	return status;
}
