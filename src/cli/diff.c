/*
 * exitscope diff: compare the counters of two window records, from the same
 * run or from two different runs.
 *
 *   exitscope diff [--total] [--json] A B
 *
 * A and B are FILE.jsonl[:SEQ]. SEQ is a record's "seq"; without it the
 * last record of the file is used, and a negative SEQ counts from the end
 * (-1 the last record, -2 the one before). The part after the last ':' is
 * taken as SEQ when it is an integer, so FILE may itself contain ':'.
 * The records' "window" counters are compared, or with --total their
 * "total" counters. Every line of both files must be a valid record.
 *
 * Text output (a stable format; the tests/golden/diff-*.golden files show
 * it in full). Columns have fixed widths (numbers right-aligned) and are
 * always separated by a space, so a number too wide only shifts its row:
 *
 *   exitscope diff: window counters, delta = B - A
 *   A: run1.jsonl line 2: pid 4242, seq 1, reason signal, label "hot", 2.500000 s
 *   B: run2.jsonl line 2: pid 5151, seq 1, reason app, no label, 2.000000 s
 *
 *     counter                                      A               B           delta    ratio
 *     exits                                    30100           45100          +15000    1.498
 *     sync_signals                                 1               0              -1     gone
 *     ... (always the 7 scalar counters, in record order)
 *
 *     syscall                metric                A               B           delta    ratio
 *     write                  calls             10000           25000          +15000    2.500
 *                            time_us        8000.000       20000.000      +12000.000    2.500
 *     sendfile               calls                 0             100            +100      new
 *                            errors                0               5              +5      new
 *                            time_us           0.000         900.000        +900.000      new
 *
 * Durations are seconds with 6 decimals; time_us is the time spent in the
 * call in microseconds with 3 decimals (exact nanoseconds). The errors row
 * appears only when either side has errors. ratio is B/A with 3 decimals,
 * "-" when both are 0, "new" when only A is 0, "gone" when only B is 0.
 * Each system call that appears in either record gets a block; blocks are
 * sorted by the absolute change in calls (largest first), then by the
 * larger of the two call counts, then by name. A missing label prints as
 * "no label"; a label is printed as a JSON string.
 *
 * JSON output (--json), one object on one line:
 *   {"counters": "window"|"total",
 *    "a": RECORD, "b": RECORD,
 *    "scalars": {"exits": {"a": N, "b": N, "delta": N, "ratio": R}, ...},
 *    "syscalls": [{"name": "getppid", "status": "both"|"new"|"gone",
 *                  "calls": {"a", "b", "delta", "ratio"}, "errors": {...},
 *                  "ns": {...}}, ...]}          (same order as the text)
 *   RECORD = {"file": F, "line": N, "pid": N, "seq": N, "reason": S,
 *             "label": S|null, "start_ns": N, "end_ns": N, "duration_ns": N}
 *   delta is a signed integer (B - A), ratio a number with 3 decimals or
 *   null when A is 0; status "new" means no calls in A, "gone" none in B.
 *
 * Exit status: 0; 2 for a usage error; 1 when a file cannot be read, has a
 * corrupt line, or holds no such record (one line on stderr saying which).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/cli.h"
#include "cli/diff.h"
#include "cli/records.h"
#include "cli/tree.h"

static const char g_diff_usage[] =
	"usage: exitscope diff [OPTIONS] A B\n"
	"  A, B       FILE.jsonl[:SEQ]: the record with that seq; without SEQ the last\n"
	"             record, a negative SEQ counts from the end (-1 is the last)\n"
	"             or RUN[:N] (a run directory or run file): the tree's sum in run-wide\n"
	"             window N (the one after the last is the rest), or in the whole run\n"
	"  --total    compare the records' total counters instead of their window\n"
	"  --json     print the comparison as one JSON object\n"
	"  -h, --help this text\n";

/* Which record a command-line argument names. */
struct selection {
	char *path;		/* malloc'd */
	bool run;		/* path is a run (RUN[:N]): a run-wide window, or the whole run */
	struct xs_tree tree;	/* the run, loaded; its record's names point into it */
	bool by_seq;		/* seq is a record's seq; else from_end counts back */
	uint64_t seq;
	uint64_t from_end;	/* 1 = the last record */
};

/* One system call compared. */
struct sys_row {
	const char *name;
	const struct xs_rec_syscall *a;	/* NULL when absent from A */
	const struct xs_rec_syscall *b;
};

static bool parse_integer(const char *s, bool *neg, uint64_t *out)
{
	*neg = *s == '-';
	if (*neg)
		s++;
	if (*s < '0' || *s > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno)
		return false;
	*out = v;
	return true;
}

/* 0, or XS_EXIT_USAGE after printing why. */
static int parse_selection(const char *arg, struct selection *sel)
{
	memset(sel, 0, sizeof(*sel));
	sel->from_end = 1;
	const char *colon = strrchr(arg, ':');
	bool neg = false;
	uint64_t v;
	struct stat st;
	if (colon && parse_integer(colon + 1, &neg, &v)) {
		if (neg && v == 0) {
			xs_error("'%s': SEQ -0 names no record", arg);
			return XS_EXIT_USAGE;
		}
		sel->by_seq = !neg;
		sel->seq = v;
		sel->from_end = neg ? v : 0;
		sel->path = strndup(arg, (size_t)(colon - arg));
	} else if (colon && stat(arg, &st) < 0) {
		xs_error("'%s': expected FILE.jsonl[:SEQ] with an integer SEQ", arg);
		return XS_EXIT_USAGE;
	} else {
		sel->path = strdup(arg);
	}
	if (!sel->path) {
		xs_error("out of memory");
		return XS_EXIT_DATA;
	}
	if (!*sel->path) {
		xs_error("'%s': no file name", arg);
		return XS_EXIT_USAGE;
	}
	char run_file[8192];
	/* a run: its directory or run file (not a pid: a pid is no file) */
	if (strspn(sel->path, "0123456789") != strlen(sel->path) &&
	    xs_tree_find(sel->path, run_file, sizeof(run_file))) {
		if (neg) {
			xs_error("'%s': a run takes RUN:N, N a run-wide window (1, 2, ...; the one after the "
				 "last is the rest), or RUN alone for the whole run", arg);
			return XS_EXIT_USAGE;
		}
		sel->run = true;
		free(sel->path);
		if (!(sel->path = strdup(run_file))) {
			xs_error("out of memory");
			return XS_EXIT_DATA;
		}
	}
	return 0;
}

/* A run's window (or the whole run) as the record to compare. */
static int load_run_selection(struct selection *sel, struct xs_record *out)
{
	int st = xs_tree_load(&sel->tree, sel->path);
	if (st != XS_EXIT_OK)
		return st;
	int r = xs_tree_window_record(&sel->tree, sel->by_seq ? (uint32_t)sel->seq : 0, out);
	if (r == -ENOENT) {
		xs_error("'%s': no run-wide window %llu (the run has %zu, and the rest after them is %zu)",
			 sel->tree.dir, (unsigned long long)sel->seq, sel->tree.window_count - 1,
			 sel->tree.window_count);
		return XS_EXIT_DATA;
	}
	if (r < 0) {
		xs_error("out of memory");
		return XS_EXIT_DATA;
	}
	return 0;
}

/*
 * Read sel's file (every line must be a valid record) and keep the record
 * it selects in *out. 0, or XS_EXIT_DATA after printing why.
 */
static int load_selection(struct selection *sel, struct xs_record *out)
{
	if (sel->run)
		return load_run_selection(sel, out);
	struct xs_record_file rf;
	struct xs_record rec;
	/* the last from_end records, oldest at ring[head] once full */
	struct xs_record *ring = NULL;
	size_t ring_cap = 0, ring_count = 0, head = 0, records = 0;
	bool found = false;
	int status = XS_EXIT_DATA, r;

	memset(out, 0, sizeof(*out));
	if ((r = xs_record_file_open(&rf, sel->path)) < 0) {
		xs_error("cannot open '%s': %s", sel->path, strerror(-r));
		return XS_EXIT_DATA;
	}
	while ((r = xs_record_file_next(&rf, &rec)) > 0) {
		records++;
		if (sel->by_seq) {
			if (rec.seq == sel->seq && !found) {
				*out = rec;
				found = true;
			} else {
				xs_record_release(&rec);
			}
			continue;
		}
		if (ring_count < sel->from_end) {
			if (ring_count == ring_cap) {
				size_t cap = ring_cap ? ring_cap * 2 : 4;
				if (cap > sel->from_end)
					cap = sel->from_end;
				struct xs_record *grown = realloc(ring, cap * sizeof(*ring));
				if (!grown) {
					xs_record_release(&rec);
					xs_error("'%s': out of memory", sel->path);
					goto out_release;
				}
				ring = grown;
				ring_cap = cap;
			}
			ring[ring_count++] = rec;
		} else {
			xs_record_release(&ring[head]);
			ring[head] = rec;
			head = (head + 1) % ring_count;
		}
	}
	if (r < 0) {
		xs_error("'%s': %s", sel->path, rf.msg);
		goto out_release;
	}
	if (sel->by_seq) {
		if (!found) {
			xs_error("'%s': no record with seq %llu", sel->path, (unsigned long long)sel->seq);
			goto out_release;
		}
	} else if (records == 0) {
		xs_error("'%s': no records", sel->path);
		goto out_release;
	} else if (ring_count < sel->from_end) {
		xs_error("'%s': no record -%llu: the file has %zu record%s", sel->path,
			 (unsigned long long)sel->from_end, records, records == 1 ? "" : "s");
		goto out_release;
	} else {
		/* the oldest kept record is from_end back from the last */
		*out = ring[head];
		memset(&ring[head], 0, sizeof(ring[head]));
	}
	status = 0;

out_release:
	if (status)
		xs_record_release(out);
	for (size_t i = 0; i < ring_count; i++)
		xs_record_release(&ring[i]);
	free(ring);
	xs_record_file_close(&rf);
	return status;
}

static uint64_t calls_of(const struct xs_rec_syscall *s)
{
	return s ? s->calls : 0;
}

static uint64_t abs_diff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static int compare_rows(const void *x, const void *y)
{
	const struct sys_row *r = x, *s = y;
	uint64_t dr = abs_diff(calls_of(r->a), calls_of(r->b));
	uint64_t ds = abs_diff(calls_of(s->a), calls_of(s->b));
	if (dr != ds)
		return dr > ds ? -1 : 1;
	uint64_t mr = calls_of(r->a) > calls_of(r->b) ? calls_of(r->a) : calls_of(r->b);
	uint64_t ms = calls_of(s->a) > calls_of(s->b) ? calls_of(s->a) : calls_of(s->b);
	if (mr != ms)
		return mr > ms ? -1 : 1;
	return strcmp(r->name, s->name);
}

static const struct xs_rec_syscall *find_syscall(const struct xs_rec_counters *c, const char *name)
{
	for (size_t i = 0; i < c->sys_count; i++)
		if (!strcmp(c->sys[i].name, name))
			return &c->sys[i];
	return NULL;
}

/* The union of both records' system calls, sorted; NULL only when out of
 * memory with calls to compare. */
static struct sys_row *compare_syscalls(const struct xs_rec_counters *a, const struct xs_rec_counters *b,
					size_t *count)
{
	struct sys_row *rows = malloc((a->sys_count + b->sys_count + 1) * sizeof(*rows));
	size_t n = 0;
	if (!rows)
		return NULL;
	for (size_t i = 0; i < a->sys_count; i++) {
		if (find_syscall(a, a->sys[i].name) != &a->sys[i])
			continue;	/* a duplicate key: the first one counts */
		rows[n++] = (struct sys_row){ a->sys[i].name, &a->sys[i], find_syscall(b, a->sys[i].name) };
	}
	for (size_t i = 0; i < b->sys_count; i++)
		if (!find_syscall(a, b->sys[i].name) && find_syscall(b, b->sys[i].name) == &b->sys[i])
			rows[n++] = (struct sys_row){ b->sys[i].name, NULL, &b->sys[i] };
	qsort(rows, n, sizeof(*rows), compare_rows);
	*count = n;
	return rows;
}

static void text_header(struct xs_buf *out, char which, const char *path, const struct xs_record *r)
{
	xs_buf_addc(out, which);
	xs_buf_add(out, ": ");
	xs_cli_text(out, path, 0);
	if (!r->line) {
		/* a run (line 0): its first pid and run-wide window */
		xs_buf_add(out, ": the run of pid ");
		xs_buf_u64(out, r->pid, 0);
		if (r->seq) {
			xs_buf_add(out, ", run window ");
			xs_buf_u64(out, r->seq, 0);
		} else {
			xs_buf_add(out, ", the whole run");
		}
	} else {
		xs_buf_add(out, " line ");
		xs_buf_u64(out, r->line, 0);
		xs_buf_add(out, ": pid ");
		xs_buf_u64(out, r->pid, 0);
		xs_buf_add(out, ", seq ");
		xs_buf_u64(out, r->seq, 0);
	}
	xs_buf_add(out, ", reason ");
	xs_cli_text(out, r->reason, 0);
	if (r->label) {
		xs_buf_add(out, ", label ");
		xs_cli_label(out, r->label, 0);
	} else {
		xs_buf_add(out, ", no label");
	}
	xs_buf_add(out, ", ");
	xs_cli_seconds(out, xs_record_duration_ns(r), 0);
	xs_buf_add(out, " s\n");
}

/* Column widths of the text tables, shared by headers and rows. */
enum { NAME_W = 22, METRIC_W = 7, A_W = 16, B_W = 16, DELTA_W = 16, RATIO_W = 9 };

static void text_columns(struct xs_buf *out, const char *name, const char *metric)
{
	xs_buf_add(out, "\n  ");
	xs_buf_pad(out, name, NAME_W + 1);
	xs_buf_pad(out, metric, METRIC_W);
	xs_cli_right(out, "A", A_W);
	xs_cli_right(out, "B", B_W);
	xs_cli_right(out, "delta", DELTA_W);
	xs_cli_right(out, "ratio", RATIO_W);
	xs_buf_addc(out, '\n');
}

/* One row: the name columns, then A, B, delta, ratio. */
static void text_row(struct xs_buf *out, const char *name, const char *metric, uint64_t a, uint64_t b,
		     int decimals)
{
	xs_buf_add(out, "  ");
	xs_cli_text(out, name, NAME_W);
	xs_buf_addc(out, ' ');
	xs_cli_text(out, metric, METRIC_W);
	/* each column starts with a space, so wide numbers never run together */
	xs_buf_addc(out, ' ');
	xs_buf_fixed(out, a, decimals, A_W - 1);
	xs_buf_addc(out, ' ');
	xs_buf_fixed(out, b, decimals, B_W - 1);
	xs_buf_addc(out, ' ');
	xs_cli_delta(out, a, b, decimals, DELTA_W - 1);
	xs_buf_addc(out, ' ');
	xs_cli_ratio(out, a, b, RATIO_W - 1);
	xs_buf_addc(out, '\n');
}

int xs_diff_print_text(struct xs_buf *out, bool total, const char *path_a, const struct xs_record *ra,
		       const char *path_b, const struct xs_record *rb)
{
	const struct xs_rec_counters *a = total ? &ra->total : &ra->window;
	const struct xs_rec_counters *b = total ? &rb->total : &rb->window;
	size_t count = 0;
	struct sys_row *rows = compare_syscalls(a, b, &count);
	if (!rows)
		return -ENOMEM;
	xs_buf_add(out, "exitscope diff: ");
	xs_buf_add(out, total ? "total" : "window");
	xs_buf_add(out, " counters, delta = B - A\n");
	text_header(out, 'A', path_a, ra);
	text_header(out, 'B', path_b, rb);
	text_columns(out, "counter", "");
	for (int i = 0; i < XS_REC_NSCALARS; i++)
		text_row(out, g_xs_rec_scalar_names[i], "", a->scalar[i], b->scalar[i], 0);
	if (count)
		text_columns(out, "syscall", "metric");
	for (size_t i = 0; i < count; i++) {
		const struct xs_rec_syscall zero = { 0 };
		const struct xs_rec_syscall *x = rows[i].a ? rows[i].a : &zero;
		const struct xs_rec_syscall *y = rows[i].b ? rows[i].b : &zero;
		text_row(out, rows[i].name, "calls", x->calls, y->calls, 0);
		if (x->errors || y->errors)
			text_row(out, "", "errors", x->errors, y->errors, 0);
		text_row(out, "", "time_us", x->ns, y->ns, 3);
	}
	free(rows);
	return 0;
}

static void json_record(struct xs_buf *out, const struct selection *sel, const struct xs_record *r)
{
	xs_buf_add(out, "{\"file\": ");
	xs_buf_json_str(out, sel->path);
	xs_buf_add(out, ", ");
	xs_record_json_fields(out, r);
	xs_buf_addc(out, '}');
}

static void json_compare(struct xs_buf *out, uint64_t a, uint64_t b)
{
	xs_buf_add(out, "{\"a\": ");
	xs_buf_u64(out, a, 0);
	xs_buf_add(out, ", \"b\": ");
	xs_buf_u64(out, b, 0);
	xs_buf_add(out, ", \"delta\": ");
	if (b >= a) {
		xs_buf_u64(out, b - a, 0);
	} else {
		xs_buf_addc(out, '-');
		xs_buf_u64(out, a - b, 0);
	}
	xs_buf_add(out, ", \"ratio\": ");
	xs_cli_json_ratio(out, a, b);
	xs_buf_addc(out, '}');
}

static void print_json(struct xs_buf *out, const char *which, const struct selection *sa,
		       const struct xs_record *ra, const struct selection *sb, const struct xs_record *rb,
		       const struct xs_rec_counters *a, const struct xs_rec_counters *b,
		       const struct sys_row *rows, size_t count)
{
	xs_buf_add(out, "{\"counters\": ");
	xs_buf_json_str(out, which);
	xs_buf_add(out, ", \"a\": ");
	json_record(out, sa, ra);
	xs_buf_add(out, ", \"b\": ");
	json_record(out, sb, rb);
	xs_buf_add(out, ", \"scalars\": {");
	for (int i = 0; i < XS_REC_NSCALARS; i++) {
		if (i)
			xs_buf_add(out, ", ");
		xs_buf_json_str(out, g_xs_rec_scalar_names[i]);
		xs_buf_add(out, ": ");
		json_compare(out, a->scalar[i], b->scalar[i]);
	}
	xs_buf_add(out, "}, \"syscalls\": [");
	for (size_t i = 0; i < count; i++) {
		const struct xs_rec_syscall zero = { 0 };
		const struct xs_rec_syscall *x = rows[i].a ? rows[i].a : &zero;
		const struct xs_rec_syscall *y = rows[i].b ? rows[i].b : &zero;
		if (i)
			xs_buf_add(out, ", ");
		xs_buf_add(out, "{\"name\": ");
		xs_buf_json_str(out, rows[i].name);
		xs_buf_add(out, ", \"status\": ");
		xs_buf_add(out, !x->calls && y->calls ? "\"new\"" : x->calls && !y->calls ? "\"gone\"" : "\"both\"");
		xs_buf_add(out, ", \"calls\": ");
		json_compare(out, x->calls, y->calls);
		xs_buf_add(out, ", \"errors\": ");
		json_compare(out, x->errors, y->errors);
		xs_buf_add(out, ", \"ns\": ");
		json_compare(out, x->ns, y->ns);
		xs_buf_addc(out, '}');
	}
	xs_buf_add(out, "]}\n");
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "total", no_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool total = false, json = false;
	int opt;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 't':
			total = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(g_diff_usage, stdout);
			return xs_cli_finish_stdout();
		default:
			return xs_bad_option("diff", argv, "h", longopts);
		}
	}
	if (argc - optind != 2) {
		xs_error("diff needs two records, A and B; see 'exitscope diff --help'");
		return XS_EXIT_USAGE;
	}

	struct selection sa = { 0 }, sb = { 0 };
	struct xs_record ra = { 0 }, rb = { 0 };
	struct xs_buf out = { .grow = xs_cli_buf_grow };
	struct sys_row *rows = NULL;
	size_t count = 0;
	int status;
	if ((status = parse_selection(argv[optind], &sa)) || (status = parse_selection(argv[optind + 1], &sb)) ||
	    (status = load_selection(&sa, &ra)) || (status = load_selection(&sb, &rb)))
		goto out_release;

	const char *which = total ? "total" : "window";
	const struct xs_rec_counters *a = total ? &ra.total : &ra.window;
	const struct xs_rec_counters *b = total ? &rb.total : &rb.window;
	if (json) {
		rows = compare_syscalls(a, b, &count);
		if (rows)
			print_json(&out, which, &sa, &ra, &sb, &rb, a, b, rows, count);
	}
	if ((json && !rows) || (!json && xs_diff_print_text(&out, total, sa.path, &ra, sb.path, &rb) < 0) ||
	    xs_cli_buf_flush(&out, stdout) == -ENOMEM) {
		xs_error("out of memory");
		status = XS_EXIT_DATA;
		goto out_release;
	}
	status = xs_cli_finish_stdout();

out_release:
	free(rows);
	xs_cli_buf_release(&out);
	xs_record_release(&ra);
	xs_record_release(&rb);
	if (sa.run)
		xs_tree_release(&sa.tree);
	if (sb.run)
		xs_tree_release(&sb.tree);
	free(sa.path);
	free(sb.path);
	return status;
}
