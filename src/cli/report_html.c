/*
 * exitscope report --html: one self-contained page for a run (see
 * report.h). Tables and charts are drawn here as HTML and inline SVG, so
 * the page reads without its script; the script (assets/report.js) only
 * adds the two-window comparison and the flame graphs' search boxes. No
 * file or network fetch happens when the page is opened.
 *
 * Each window's profile file ("profile": {"file": ...} in its record) is
 * looked up beside the record file and folded through perf script
 * (fold.h), windows in parallel; a profile that cannot be read costs a
 * warning on stderr and a note in the page, not the report.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "assets.h"
#include "cli/cli.h"
#include "cli/flamesvg.h"
#include "cli/fold.h"
#include "cli/report.h"

#define TOP_BARS 10		/* system calls per bar chart */
#define SERIES_TOP 5		/* system calls with their own colour in the time series */

static const char *const g_scalar_titles[XS_REC_NSCALARS] = {
	"exits", "enters", "sync signals", "async signals", "minor faults", "major faults", "preemptions",
};

/* Colours of the time series' system calls, then "other". */
static const char *const g_series_colours[SERIES_TOP + 1] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#bab0ac",
};

/* A decimal with thousands separators, for people. */
void xs_html_count(struct xs_buf *out, uint64_t v)
{
	char digits[32], text[48];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v), k = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			text[k++] = ',';
		text[k++] = digits[i];
	}
	text[k] = 0;
	xs_buf_add(out, text);
}

static double seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void add_label(struct xs_buf *out, const struct xs_record *r)
{
	if (r->label)
		xs_xml_text(out, r->label);
	else
		xs_buf_add(out, "<span class=\"none\">\xe2\x80\x94</span>");
}

static const struct xs_json *profile_of(const struct xs_record *r)
{
	const struct xs_json *p = xs_json_get(xs_json_root(r->doc), "profile");
	const struct xs_json *file = xs_json_get(p, "file");
	return file && file->type == XS_JSON_STRING ? p : NULL;
}

static uint64_t profile_samples(const struct xs_record *r)
{
	uint64_t n = 0;
	xs_json_u64(xs_json_get(profile_of(r), "samples"), &n);
	return n;
}

static void page_head(struct xs_buf *out, const struct xs_run *run)
{
	const struct xs_record *first = &run->records[0], *last = &run->records[run->count - 1];
	xs_buf_add(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			"style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n<title>exitscope report: ");
	xs_xml_text(out, run->path);
	xs_buf_add(out, "</title>\n<style>\n");
	xs_buf_add(out, g_asset_report_css);
	xs_buf_add(out, "</style>\n");
	xs_flame_assets(out);
	xs_buf_add(out, "</head>\n<body>\n<h1>exitscope report</h1>\n<p class=\"meta\">");
	xs_xml_text(out, run->path);
	xs_cli_addf(out, " &middot; pid %llu &middot; %zu window%s &middot; %.3f s from the first window's start to the last one's end",
	     (unsigned long long)first->pid, run->count, run->count == 1 ? "" : "s",
	     last->end_ns > first->start_ns ? seconds(last->end_ns - first->start_ns) : 0.0);
	if (run->skipped_count)
		xs_cli_addf(out, " &middot; <span class=\"warn\">%zu corrupt line%s skipped</span>", run->skipped_count,
		     run->skipped_count == 1 ? "" : "s");
	xs_buf_add(out, "</p>\n");
}

static void windows_table(struct xs_buf *out, const struct xs_run *run)
{
	uint64_t t0 = run->records[0].start_ns;
	xs_buf_add(out, "<section id=\"windows\">\n<h2>Windows</h2>\n<table id=\"windows-table\">\n<thead><tr>"
			"<th>seq</th><th>reason</th><th>label</th><th>start s</th><th>length s</th>");
	for (int i = 0; i < XS_REC_NSCALARS; i++)
		xs_cli_addf(out, "<th>%s</th>", g_scalar_titles[i]);
	xs_buf_add(out, "<th>samples</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < run->count; i++) {
		const struct xs_record *r = &run->records[i];
		xs_cli_addf(out, "<tr data-seq=\"%llu\"><td><a href=\"#w%zu\">%llu</a></td><td>", (unsigned long long)r->seq, i,
		     (unsigned long long)r->seq);
		xs_xml_text(out, r->reason);
		xs_buf_add(out, "</td><td>");
		add_label(out, r);
		xs_cli_addf(out, "</td><td class=\"n\">%.3f</td><td class=\"n\">%.6f</td>",
		     r->start_ns >= t0 ? seconds(r->start_ns - t0) : 0.0, seconds(xs_record_duration_ns(r)));
		for (int k = 0; k < XS_REC_NSCALARS; k++) {
			xs_buf_add(out, "<td class=\"n\">");
			xs_html_count(out, r->window.scalar[k]);
			xs_buf_add(out, "</td>");
		}
		xs_buf_add(out, "<td class=\"n\">");
		if (profile_of(r))
			xs_html_count(out, profile_samples(r));
		else
			xs_buf_add(out, "\xe2\x80\x94");
		xs_buf_add(out, "</td></tr>\n");
	}
	xs_buf_add(out, "</tbody>\n</table>\n</section>\n");
}

/* One panel of horizontal bars at x: the system calls idx of c by calls or by time. */
static void bar_panel(struct xs_buf *out, int x, const char *title, const struct xs_rec_counters *c,
		      const size_t *idx, size_t n, bool by_time)
{
	enum { NAME_W = 150, BAR_W = 250, ROW_H = 18 };
	xs_cli_addf(out, "<text class=\"ptitle\" x=\"%d\" y=\"16\">%s</text>\n", x, title);
	if (!n) {
		xs_cli_addf(out, "<text class=\"empty\" x=\"%d\" y=\"40\">no system calls</text>\n", x);
		return;
	}
	const struct xs_rec_syscall *top = &c->sys[idx[0]];
	uint64_t max = by_time ? top->ns : top->calls;
	for (size_t i = 0; i < n; i++) {
		const struct xs_rec_syscall *s = &c->sys[idx[i]];
		uint64_t v = by_time ? s->ns : s->calls;
		double w = max ? (double)BAR_W * (double)v / (double)max : 0;
		int y = 26 + (int)i * ROW_H;
		xs_cli_addf(out, "<g class=\"bar\" data-name=\"");
		xs_xml_text(out, s->name);
		xs_cli_addf(out, "\" data-value=\"%llu\"><title>", (unsigned long long)v);
		xs_xml_text(out, s->name);
		xs_cli_addf(out, ": %llu calls, %llu errors, %.3f ms</title>", (unsigned long long)s->calls,
		     (unsigned long long)s->errors, (double)s->ns / 1e6);
		xs_cli_addf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", x + NAME_W - 6, y + 12);
		xs_xml_text(out, s->name);
		xs_cli_addf(out, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", x + NAME_W, y,
		     w < 1 ? 1.0 : w, ROW_H - 4, by_time ? "#e15759" : "#4e79a7");
		xs_cli_addf(out, "<text class=\"v\" x=\"%.1f\" y=\"%d\">", x + NAME_W + (w < 1 ? 1.0 : w) + 4, y + 12);
		if (by_time)
			xs_cli_addf(out, "%.3f ms", (double)v / 1e6);
		else
			xs_html_count(out, v);
		xs_buf_add(out, "</text></g>\n");
	}
}

static void syscall_chart(struct xs_buf *out, const struct xs_record *r)
{
	size_t by_calls[TOP_BARS], by_time[TOP_BARS];
	size_t n = xs_rec_top_syscalls(&r->window, by_calls, TOP_BARS, false);
	xs_rec_top_syscalls(&r->window, by_time, TOP_BARS, true);
	int height = 36 + (int)(n ? n : 1) * 18;
	xs_cli_addf(out, "<svg class=\"xs-chart\" data-seq=\"%llu\" width=\"1100\" height=\"%d\" viewBox=\"0 0 1100 %d\">\n",
	     (unsigned long long)r->seq, height, height);
	bar_panel(out, 0, "top system calls by count", &r->window, by_calls, n, false);
	bar_panel(out, 560, "top system calls by time", &r->window, by_time, n, true);
	xs_buf_add(out, "</svg>\n");
}

/* A thread's three busiest calls ("read=12, write=3"), ranked as the
 * windows' are. */
static void thread_top_calls(struct xs_buf *out, const struct xs_json *sys)
{
	size_t top[3];
	struct xs_rec_syscall *calls = sys && sys->count ? calloc(sys->count, sizeof(*calls)) : NULL;
	struct xs_rec_counters c = { .sys = calls };
	xs_buf_add(out, "<td>");
	for (const struct xs_json *s = calls ? sys->first : NULL; s; s = s->next) {
		struct xs_rec_syscall *x = &calls[c.sys_count++];
		*x = (struct xs_rec_syscall){ .name = s->key };
		xs_json_u64(xs_json_get(s, "calls"), &x->calls);
		xs_json_u64(xs_json_get(s, "ns"), &x->ns);
	}
	size_t n = xs_rec_top_syscalls(&c, top, 3, false);
	for (size_t k = 0; k < n; k++) {
		xs_buf_add(out, k ? ", " : "");
		xs_xml_text(out, calls[top[k]].name);
		xs_buf_addc(out, '=');
		xs_html_count(out, calls[top[k]].calls);
	}
	xs_buf_add(out, "</td>");
	free(calls);
}

static void threads_table(struct xs_buf *out, const struct xs_record *r)
{
	const struct xs_json *threads = xs_json_get(xs_json_root(r->doc), "threads");
	size_t count = threads && threads->type == XS_JSON_ARRAY ? threads->count : 0;
	xs_cli_addf(out, "<details class=\"threads\"%s><summary>Threads (%zu)</summary>\n", count <= 16 ? " open" : "",
	     count);
	if (!count) {
		xs_buf_add(out, "<p class=\"none\">no per-thread counters in this record</p></details>\n");
		return;
	}
	xs_buf_add(out, "<table><thead><tr><th>tid</th><th>name</th>");
	for (int i = 0; i < XS_REC_NSCALARS; i++)
		xs_cli_addf(out, "<th>%s</th>", g_scalar_titles[i]);
	xs_buf_add(out, "<th>top system calls</th></tr></thead>\n<tbody>\n");
	for (const struct xs_json *t = threads->first; t; t = t->next) {
		uint64_t tid = 0, v;
		const struct xs_json *comm = xs_json_get(t, "comm"), *win = xs_json_get(t, "window");
		const struct xs_json *exited = xs_json_get(t, "exited");
		xs_json_u64(xs_json_get(t, "tid"), &tid);
		xs_cli_addf(out, "<tr><td class=\"n\">%llu</td><td>", (unsigned long long)tid);
		if (comm && comm->type == XS_JSON_STRING)
			xs_xml_text(out, comm->str);
		if (exited && exited->type == XS_JSON_TRUE)
			xs_buf_add(out, " <span class=\"none\">(exited)</span>");
		xs_buf_add(out, "</td>");
		for (int i = 0; i < XS_REC_NSCALARS; i++) {
			xs_buf_add(out, "<td class=\"n\">");
			if (xs_json_u64(xs_json_get(win, g_xs_rec_scalar_names[i]), &v))
				xs_html_count(out, v);
			xs_buf_add(out, "</td>");
		}
		thread_top_calls(out, xs_json_get(win, "syscalls"));
		xs_buf_add(out, "</tr>\n");
	}
	xs_buf_add(out, "</tbody></table></details>\n");
}

/*
 * The profile of window r, opened: a record is data, written by the
 * profiled program's side, and the report often runs as root, so its
 * "file" is trusted only as the name exitscope gives a profile,
 * "exitscope-PID-SEQ.data" for the record's own pid and seq, in the record
 * file's directory, a regular file (not a link, a device or a FIFO) of at
 * most XS_REPORT_MAX_PROFILE_SIZE bytes. Returns the fd, or -1 with *why
 * set (a static string or msg).
 */
#define XS_REPORT_MAX_PROFILE_SIZE (4ull << 30)	/* ~650000 DWARF samples, minutes of perf script */

int xs_html_profile_open(const char *record_path, const struct xs_record *r, const char *file, const char **why,
			 char *msg, size_t msg_size)
{
	char expected[64];
	snprintf(expected, sizeof(expected), "exitscope-%llu-%llu.data", (unsigned long long)r->pid,
		 (unsigned long long)r->seq);
	if (strcmp(file, expected)) {
		snprintf(msg, msg_size, "not the name exitscope gives this window's profile (%s)", expected);
		*why = msg;
		return -1;
	}
	const char *slash = strrchr(record_path, '/');
	char *dir = slash ? strndup(record_path, (size_t)(slash - record_path) + 1) : strdup(".");
	if (!dir) {
		*why = "out of memory";
		return -1;
	}
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), err = errno;
	free(dir);
	if (dfd < 0) {
		*why = strerror(err);
		return -1;
	}
	/* O_NONBLOCK: a FIFO must not hang the report before fstat refuses it */
	int fd = openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = errno;
	close(dfd);
	struct stat st;
	if (fd < 0) {
		*why = err == ELOOP ? "a symbolic link" : strerror(err);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
	} else if ((uint64_t)st.st_size > XS_REPORT_MAX_PROFILE_SIZE) {
		snprintf(msg, msg_size, "%llu bytes, more than the report reads (%llu GiB)",
			 (unsigned long long)st.st_size, XS_REPORT_MAX_PROFILE_SIZE >> 30);
		*why = msg;
	} else {
		int flags = fcntl(fd, F_GETFL);
		if (flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0)
			return fd;
		*why = strerror(errno);
	}
	close(fd);
	return -1;
}

/* s with control bytes and broken UTF-8 as '?', for a message on a
 * terminal. malloc'd; NULL when out of memory. */
static char *terminal_text(const char *s)
{
	struct xs_buf b = { .grow = xs_cli_buf_grow };
	xs_cli_text(&b, s, 0);
	xs_buf_addc(&b, 0);
	if (b.failed) {
		xs_cli_buf_release(&b);
		return NULL;
	}
	return b.data;
}

static void flame_graph(struct xs_buf *out, const struct xs_run *run, const struct xs_record *r)
{
	const struct xs_json *p = profile_of(r);
	if (!p)
		return;
	const char *file = xs_json_get(p, "file")->str, *why = NULL;
	char msg[sizeof(((struct xs_fold *)0)->msg)];
	struct xs_fold f;
	int fd = xs_html_profile_open(run->path, r, file, &why, msg, sizeof(msg));
	bool ok = xs_fold_init(&f, true) == 0;
	xs_buf_add(out, "<div class=\"flame\">\n<h3>Profile ");
	xs_xml_text(out, file);
	xs_buf_add(out, "</h3>\n");
	if (!ok)
		why = "out of memory";
	else if (fd >= 0 && xs_fold_read_fd(&f, 0, fd, true) < 0)
		why = f.msg;
	if (!why && !f.nodes[0].total[0]) {
		/* a window too short for the sampling rate: say so, not an empty box */
		xs_buf_add(out, "<p class=\"nosamples\">no samples in this window</p>\n");
	} else if (!why) {
		char title[160];
		snprintf(title, sizeof(title), "window %llu, %llu samples, one tower per thread",
			 (unsigned long long)r->seq, (unsigned long long)f.nodes[0].total[0]);
		xs_fold_sort(&f);
		xs_buf_add(out, "<p class=\"fsearch\"><input type=\"search\" placeholder=\"search frames "
				"(regular expression)\"> <span class=\"fmatch\"></span></p>\n");
		xs_flame_svg(out, &f, &(struct xs_flame_style){ .title = title, .width = 1100 });
	} else {
		char *shown_file = terminal_text(file), *shown_why = terminal_text(why);
		xs_error("warning: cannot read profile '%s' of window %llu ('%s' line %zu): %s; reported without it",
			 shown_file ? shown_file : "?", (unsigned long long)r->seq, run->path, (size_t)r->line,
			 shown_why ? shown_why : "?");
		free(shown_file);
		free(shown_why);
		xs_buf_add(out, "<p class=\"warn\">profile not readable: ");
		xs_xml_text(out, why);
		xs_buf_add(out, "</p>\n");
	}
	if (ok)
		xs_fold_release(&f);
	if (fd >= 0)
		close(fd);
	xs_buf_add(out, "</div>\n");
}

/*
 * Each profiled window's flame graph, built in up to one child process
 * per CPU (perf script's unwinding is the report's main cost), each
 * writing its HTML into its own unnamed temporary file. files[i] is NULL
 * for a window without a profile; a window whose child failed gets a note.
 */
static void flames_build(const struct xs_run *run, FILE **files)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t slots = cpus < 1 ? 1 : cpus > 8 ? 8 : (size_t)cpus, running = 0;
	fflush(NULL);
	for (size_t i = 0; i <= run->count; i++) {
		while (running && (running == slots || i == run->count)) {
			if (wait(NULL) < 0 && errno != EINTR)
				break;
			running--;
		}
		if (i == run->count || !profile_of(&run->records[i]) || !(files[i] = tmpfile()))
			continue;
		pid_t pid = fork();
		if (pid == 0) {
			struct xs_buf b = { .grow = xs_cli_buf_grow };
			flame_graph(&b, run, &run->records[i]);
			bool written = !b.failed && fwrite(b.data, 1, b.len, files[i]) == b.len &&
				       fflush(files[i]) == 0;
			_exit(written ? 0 : 1);
		}
		if (pid < 0) {		/* no process to spare: build it here */
			struct xs_buf b = { .grow = xs_cli_buf_grow };
			flame_graph(&b, run, &run->records[i]);
			if (fwrite(b.data, 1, b.len, files[i]) != b.len)
				b.failed = true;
			xs_cli_buf_release(&b);
			continue;
		}
		running++;
	}
}

/* Append what flames_build left in file, and close it. */
static void flame_take(struct xs_buf *out, FILE *file)
{
	char chunk[65536];
	size_t n, before = out->len;
	rewind(file);
	while ((n = fread(chunk, 1, sizeof(chunk), file)) > 0)
		xs_buf_addn(out, chunk, n);
	if (out->len == before)
		xs_buf_add(out, "<p class=\"warn\">the flame graph could not be built (out of memory or disk)</p>\n");
	fclose(file);
}

static void window_sections(struct xs_buf *out, const struct xs_run *run)
{
	FILE **flames = calloc(run->count, sizeof(*flames));
	if (flames)
		flames_build(run, flames);
	for (size_t i = 0; i < run->count; i++) {
		const struct xs_record *r = &run->records[i];
		xs_cli_addf(out, "<section class=\"window\" id=\"w%zu\" data-seq=\"%llu\">\n<h2>Window %llu: ", i,
		     (unsigned long long)r->seq, (unsigned long long)r->seq);
		xs_xml_text(out, r->reason);
		if (r->label) {
			xs_buf_add(out, " &ldquo;");
			xs_xml_text(out, r->label);
			xs_buf_add(out, "&rdquo;");
		}
		xs_cli_addf(out, ", %.6f s</h2>\n<p class=\"meta\">", seconds(xs_record_duration_ns(r)));
		xs_html_count(out, r->window.scalar[XS_REC_EXITS]);
		xs_buf_add(out, " exits, ");
		xs_html_count(out, r->window.scalar[XS_REC_ENTERS]);
		xs_buf_add(out, " enters</p>\n");
		syscall_chart(out, r);
		threads_table(out, r);
		if (flames && flames[i])
			flame_take(out, flames[i]);
		else
			flame_graph(out, run, r);
		xs_buf_add(out, "</section>\n");
	}
	free(flames);
}

/* The run's SERIES_TOP system calls with the most calls over all windows
 * (ties: by name). */
static size_t series_calls(const struct xs_run *run, const char **top)
{
	struct total {
		const char *name;
		uint64_t calls;
	} *sums = NULL;
	size_t count = 0, cap = 0, n = 0;
	for (size_t i = 0; i < run->count; i++) {
		const struct xs_rec_counters *c = &run->records[i].window;
		for (size_t k = 0; k < c->sys_count; k++) {
			size_t j = 0;
			while (j < count && strcmp(sums[j].name, c->sys[k].name))
				j++;
			if (j == count) {
				if (count == cap) {
					struct total *grown = realloc(sums, (cap = cap ? cap * 2 : 64) * sizeof(*sums));
					if (!grown)
						goto out;	/* out of memory: the series shows what was summed */
					sums = grown;
				}
				sums[count++] = (struct total){ c->sys[k].name, 0 };
			}
			sums[j].calls += c->sys[k].calls;
		}
	}
out:
	for (; n < SERIES_TOP && n < count; n++) {
		size_t best = n;
		for (size_t j = n + 1; j < count; j++)
			if (sums[j].calls > sums[best].calls ||
			    (sums[j].calls == sums[best].calls && strcmp(sums[j].name, sums[best].name) < 0))
				best = j;
		struct total t = sums[n];
		sums[n] = sums[best];
		sums[best] = t;
		top[n] = sums[n].name;
	}
	free(sums);
	return n;
}

static uint64_t calls_named(const struct xs_rec_counters *c, const char *name)
{
	for (size_t i = 0; i < c->sys_count; i++)
		if (!strcmp(c->sys[i].name, name))
			return c->sys[i].calls;
	return 0;
}

/* Exits per second over the run, stacked by the top system calls; only
 * for runs with --interval windows. */
static void time_series(struct xs_buf *out, const struct xs_run *run)
{
	size_t intervals = 0;
	for (size_t i = 0; i < run->count; i++)
		intervals += !strcmp(run->records[i].reason, "interval");
	if (intervals < 2)
		return;
	enum { W = 1100, H = 300, LEFT = 80, RIGHT = 170, TOP_M = 14, BOTTOM_M = 36 };
	const char *names[SERIES_TOP];
	size_t n = series_calls(run, names);
	uint64_t t0 = run->records[0].start_ns, t1 = run->records[run->count - 1].end_ns;
	double span = t1 > t0 ? seconds(t1 - t0) : 1, max_rate = 0;
	for (size_t i = 0; i < run->count; i++) {
		uint64_t d = xs_record_duration_ns(&run->records[i]);
		if (d)
			max_rate = fmax(max_rate, (double)run->records[i].window.scalar[XS_REC_EXITS] / seconds(d));
	}
	if (max_rate <= 0)
		max_rate = 1;
	double px_s = (W - LEFT - RIGHT) / span, px_rate = (H - TOP_M - BOTTOM_M) / max_rate;
	xs_buf_add(out, "<section id=\"timeline\">\n<h2>Exits per second</h2>\n");
	xs_cli_addf(out, "<svg class=\"xs-timeseries\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", W, H, W, H);
	int base = H - BOTTOM_M;
	xs_cli_addf(out, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", LEFT, base, W - RIGHT, base);
	xs_cli_addf(out, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", LEFT, TOP_M, LEFT, base);
	for (int k = 0; k <= 4; k++) {
		double rate = max_rate * k / 4;
		int y = base - (int)(rate * px_rate);
		xs_cli_addf(out, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%.0f</text>\n", LEFT - 6, y + 4, rate);
		double t = span * k / 4;
		xs_cli_addf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.2f s</text>\n",
		     LEFT + t * px_s, base + 18, t);
	}
	for (size_t i = 0; i < run->count; i++) {
		const struct xs_record *r = &run->records[i];
		uint64_t d = xs_record_duration_ns(r);
		if (!d || r->start_ns < t0)
			continue;
		double x = LEFT + seconds(r->start_ns - t0) * px_s, w = fmax(seconds(d) * px_s, 0.5);
		double y = base, rest = (double)r->window.scalar[XS_REC_EXITS];
		xs_cli_addf(out, "<g class=\"col\" data-seq=\"%llu\"><title>window %llu: %.0f exits/s</title>",
		     (unsigned long long)r->seq, (unsigned long long)r->seq, rest / seconds(d));
		for (size_t k = 0; k <= n; k++) {
			double calls = k < n ? (double)calls_named(&r->window, names[k]) : rest;
			if (k < n)
				rest = rest > calls ? rest - calls : 0;
			double h = calls / seconds(d) * px_rate;
			if (h <= 0)
				continue;
			y -= h;
			xs_cli_addf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>", x, y, w, h,
			     g_series_colours[k]);
		}
		xs_buf_add(out, "</g>\n");
	}
	for (size_t k = 0; k <= n; k++) {
		int y = TOP_M + 10 + (int)k * 18;
		xs_cli_addf(out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
		     W - RIGHT + 16, y - 10, g_series_colours[k], W - RIGHT + 34, y);
		xs_xml_text(out, k < n ? names[k] : "other");
		xs_buf_add(out, "</text>\n");
	}
	xs_buf_add(out, "</svg>\n</section>\n");
}

/* The windows' counters for the comparison script; counts as strings so
 * that 64-bit values stay exact (the script uses BigInt). */
static void page_data(struct xs_buf *out, const struct xs_run *run)
{
	xs_buf_add(out, "{\"file\": ");
	xs_buf_json_str(out, run->path);
	xs_buf_add(out, ", \"windows\": [");
	for (size_t i = 0; i < run->count; i++) {
		const struct xs_record *r = &run->records[i];
		xs_buf_add(out, i ? ", {" : "{");
		xs_record_json_fields(out, r);
		xs_buf_add(out, ", \"scalars\": [");
		for (int k = 0; k < XS_REC_NSCALARS; k++)
			xs_cli_addf(out, "%s\"%llu\"", k ? ", " : "", (unsigned long long)r->window.scalar[k]);
		xs_buf_add(out, "], \"syscalls\": [");
		for (size_t k = 0; k < r->window.sys_count; k++) {
			const struct xs_rec_syscall *s = &r->window.sys[k];
			xs_buf_add(out, k ? ", [" : "[");
			xs_buf_json_str(out, s->name);
			xs_cli_addf(out, ", \"%llu\", \"%llu\", \"%llu\"]", (unsigned long long)s->calls,
			     (unsigned long long)s->errors, (unsigned long long)s->ns);
		}
		xs_buf_add(out, "]}");
	}
	xs_buf_add(out, "], \"scalar_names\": [");
	for (int k = 0; k < XS_REC_NSCALARS; k++) {
		if (k)
			xs_buf_add(out, ", ");
		xs_buf_json_str(out, g_xs_rec_scalar_names[k]);
	}
	xs_buf_add(out, "]}");
}

static void compare_section(struct xs_buf *out)
{
	xs_buf_add(out, "<section id=\"compare\">\n<h2>Compare two windows</h2>\n"
			"<p>A <select id=\"cmp-a\"></select> B <select id=\"cmp-b\"></select> "
			"<span class=\"note\">the same deltas as <code>exitscope diff FILE:A FILE:B</code></span></p>\n"
			"<div id=\"cmp-out\"></div>\n</section>\n");
}

/*
 * JSON inside a <script> element. Escaping "</" is not enough: "<!--"
 * followed by "<script" switches the HTML parser into a state where the
 * element's own "</script>" no longer ends it, and the rest of the page
 * becomes data. So every '<', '>' and '&' (only ever inside strings)
 * goes as a \u escape, which JSON.parse reads back unchanged; U+2028 and
 * U+2029 too, in case the text is ever read as JavaScript. A byte that is
 * not UTF-8 (a label cut mid-character, or written so) becomes U+FFFD.
 */
static void add_script_json(struct xs_buf *out, struct xs_buf *json)
{
	xs_buf_addc(json, 0);	/* xs_utf8_char stops at the end */
	if (json->failed) {
		out->failed = true;
		return;
	}
	xs_buf_add(out, "<script type=\"application/json\" id=\"xs-data\">");
	for (size_t i = 0; i + 1 < json->len;) {
		uint32_t cp;
		size_t n = xs_utf8_char(json->data + i, &cp);
		if (!n)
			xs_buf_add(out, "\\ufffd");	/* not UTF-8: the page stays valid UTF-8 */
		else if (cp == '<' || cp == '>' || cp == '&' || cp == 0x2028 || cp == 0x2029)
			xs_cli_addf(out, "\\u%04x", (unsigned)cp);
		else
			xs_buf_addn(out, json->data + i, n);
		i += n ? n : 1;
	}
	xs_buf_add(out, "</script>\n");
}

int xs_report_html(const struct xs_run *run, const char *output)
{
	struct xs_buf out = { .grow = xs_cli_buf_grow };
	page_head(&out, run);
	windows_table(&out, run);
	time_series(&out, run);
	compare_section(&out);
	window_sections(&out, run);
	struct xs_buf data = { .grow = xs_cli_buf_grow };
	page_data(&data, run);
	add_script_json(&out, &data);
	xs_cli_buf_release(&data);
	xs_buf_add(&out, "<script>\n");
	xs_buf_add(&out, g_asset_report_js);
	xs_buf_add(&out, "</script>\n</body>\n</html>\n");
	int status = xs_html_write(&out, output, run->path);
	xs_cli_buf_release(&out);
	return status;
}

int xs_html_write(struct xs_buf *out, const char *output, const char *jsonl)
{
	char *made = NULL;
	if (!output) {
		size_t n = strlen(jsonl);
		if (n > 6 && !strcmp(jsonl + n - 6, ".jsonl"))
			n -= 6;
		made = malloc(n + 6);
		if (!made) {
			xs_error("out of memory");
			return XS_EXIT_DATA;
		}
		memcpy(made, jsonl, n);
		strcpy(made + n, ".html");
		output = made;
	}
	int status = xs_cli_write_output(output, out);
	if (status == XS_EXIT_OK && strcmp(output, "-"))
		fprintf(stderr, "exitscope: wrote '%s'\n", output);
	free(made);
	return status;
}
