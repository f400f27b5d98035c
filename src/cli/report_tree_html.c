/*
 * exitscope report --html RUN: one self-contained page for a whole run
 * (tree.h): the process tree, each linked to its process's section; per
 * run-wide window (and the rest after the last, and the whole run) the
 * tree's totals, a stacked chart per program (its calls, by system call),
 * and a flame graph merging the profiles of every process's records in
 * that window; then a section per process with its records. Drawn as HTML
 * and inline SVG; the only script is the flame graphs' own (flamesvg.c).
 * The numbers the text and JSON reports give are in data- attributes too
 * (data-exits, data-calls...), so that a test reads them from the page.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "assets.h"
#include "cli/cli.h"
#include "cli/flamesvg.h"
#include "cli/fold.h"
#include "cli/report.h"
#include "cli/tree.h"

#define STACK_TOP 6		/* system calls with their own colour in a window's chart */

static const char *const g_stack_colours[STACK_TOP + 1] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#bab0ac",
};

static const char g_extra_css[] =
	"ul.ptree { list-style: none; padding-left: 1.2em; }\n"
	"ul.ptree li { margin: 2px 0; }\n"
	"svg.xs-stack { font-size: 12px; display: block; margin: 0.5em 0; }\n"
	"svg.xs-stack .v { fill: #444; }\n";

static void add_program(struct xs_buf *out, const char *name, size_t processes)
{
	xs_xml_text(out, name);
	xs_cli_addf(out, " &times; %zu", processes);
}

static void tree_list(struct xs_buf *out, const struct xs_tree *t, int ppid, int depth)
{
	bool open = false;
	for (size_t i = 0; i < t->proc_count; i++) {
		const struct xs_tree_proc *p = &t->procs[i];
		bool root = true;
		for (size_t k = 0; depth == 0 && k < t->proc_count; k++)
			root &= t->procs[k].pid != p->ppid;
		if (depth == 0 ? !root : p->ppid != ppid)
			continue;
		if (!open)
			xs_buf_add(out, "<ul class=\"ptree\">\n");
		open = true;
		xs_cli_addf(out, "<li data-pid=\"%d\"><a href=\"#p%d\">%d ", p->pid, p->pid, p->pid);
		xs_xml_text(out, p->program);
		xs_buf_add(out, "</a> [");
		struct xs_buf end = { .grow = xs_cli_buf_grow };
		xs_tree_proc_end(&end, p);
		xs_buf_addc(&end, 0);
		xs_xml_text(out, end.failed ? "?" : end.data);
		xs_cli_buf_release(&end);
		xs_buf_add(out, "] &middot; ");
		xs_html_count(out, p->total.scalar[XS_REC_EXITS]);
		xs_buf_add(out, " exits\n");
		if (depth < 64)
			tree_list(out, t, p->pid, depth + 1);
		xs_buf_add(out, "</li>\n");
	}
	if (open)
		xs_buf_add(out, "</ul>\n");
}

static uint64_t calls_named(const struct xs_rec_counters *c, const char *name)
{
	for (size_t i = 0; i < c->sys_count; i++)
		if (!strcmp(c->sys[i].name, name))
			return c->sys[i].calls;
	return 0;
}

static uint64_t all_calls(const struct xs_rec_counters *c)
{
	uint64_t n = 0;
	for (size_t i = 0; i < c->sys_count; i++)
		n += c->sys[i].calls;
	return n;
}

/* One bar per program, its calls stacked by the window's STACK_TOP system
 * calls (by calls over the tree) and "other"; the widest bar is the
 * program with the most calls. */
static void stacked_chart(struct xs_buf *out, const struct xs_tree_sums *s, const char *id)
{
	enum { NAME_W = 240, BAR_W = 620, ROW_H = 20, TOP = 8 };
	size_t idx[STACK_TOP];
	size_t ntop = xs_rec_top_syscalls(&s->all, idx, STACK_TOP, false);
	uint64_t max = 0;
	for (size_t k = 0; k < s->program_count; k++)
		if (all_calls(&s->programs[k].c) > max)
			max = all_calls(&s->programs[k].c);
	int height = TOP + (int)(s->program_count ? s->program_count : 1) * ROW_H + 30;
	xs_cli_addf(out, "<svg class=\"xs-stack\" data-window=\"%s\" width=\"1000\" height=\"%d\" viewBox=\"0 0 1000 %d\">\n",
		    id, height, height);
	if (!s->program_count)
		xs_buf_add(out, "<text class=\"none\" x=\"0\" y=\"20\">no process has records in this window</text>\n");
	for (size_t k = 0; k < s->program_count; k++) {
		const struct xs_tree_program *pg = &s->programs[k];
		uint64_t total = all_calls(&pg->c), rest = total;
		int y = TOP + (int)k * ROW_H;
		xs_buf_add(out, "<g class=\"prow\" data-program=\"");
		xs_xml_text(out, pg->name);
		xs_cli_addf(out, "\" data-processes=\"%zu\" data-exits=\"%llu\" data-calls=\"%llu\">", pg->processes,
			    (unsigned long long)pg->c.scalar[XS_REC_EXITS], (unsigned long long)total);
		xs_cli_addf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", NAME_W - 6, y + 13);
		add_program(out, pg->name, pg->processes);
		xs_buf_add(out, "</text>");
		double x = NAME_W;
		for (size_t i = 0; i <= ntop; i++) {
			const char *name = i < ntop ? s->all.sys[idx[i]].name : "other";
			uint64_t v = i < ntop ? calls_named(&pg->c, name) : rest;
			if (i < ntop)
				rest -= v;
			if (!v)
				continue;
			double w = max ? (double)BAR_W * (double)v / (double)max : 0;
			xs_buf_add(out, "<rect class=\"seg\" data-name=\"");
			xs_xml_text(out, name);
			xs_cli_addf(out, "\" data-calls=\"%llu\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>",
				    (unsigned long long)v, x, y, w, ROW_H - 4, g_stack_colours[i < ntop ? i : STACK_TOP]);
			add_program(out, pg->name, pg->processes);
			xs_buf_add(out, ": ");
			xs_xml_text(out, name);
			xs_cli_addf(out, " %llu calls</title></rect>", (unsigned long long)v);
			x += w;
		}
		xs_cli_addf(out, "<text class=\"v\" x=\"%.2f\" y=\"%d\">", x + 4, y + 13);
		xs_html_count(out, total);
		xs_buf_add(out, " calls</text></g>\n");
	}
	/* the legend */
	int y = TOP + (int)(s->program_count ? s->program_count : 1) * ROW_H + 12;
	for (size_t i = 0; i <= ntop; i++) {
		int x = NAME_W + (int)i * 110;
		xs_cli_addf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">", x,
			    y, g_stack_colours[i < ntop ? i : STACK_TOP], x + 14, y + 9);
		xs_xml_text(out, i < ntop ? s->all.sys[idx[i]].name : "other");
		xs_buf_add(out, "</text>\n");
	}
	xs_buf_add(out, "</svg>\n");
}

/* The profile of record k of p, folded into f (per thread: one tower per
 * thread name, so the same program's processes share a tower). 1 when
 * read, 0 when the record has none, -1 (with a note in the page) when it
 * cannot be read. */
static int fold_profile(struct xs_buf *out, const struct xs_tree *t, const struct xs_tree_proc *p, size_t k,
			struct xs_fold *f)
{
	const struct xs_record *r = &p->records[k];
	const struct xs_json *prof = xs_json_get(xs_json_root(r->doc), "profile");
	const struct xs_json *file = xs_json_get(prof, "file");
	if (!file || file->type != XS_JSON_STRING)
		return 0;
	char path[sizeof(t->dir) + 64], msg[sizeof(f->msg)];
	snprintf(path, sizeof(path), "%s/exitscope-%d.jsonl", t->dir, p->pid);
	const char *why = NULL;
	int fd = xs_html_profile_open(path, r, file->str, &why, msg, sizeof(msg));
	if (fd >= 0 && xs_fold_read_fd(f, 0, fd, true) < 0)
		why = f->msg;
	if (fd >= 0)
		close(fd);
	if (!why)
		return 1;
	xs_buf_add(out, "<p class=\"warn\">profile ");
	xs_xml_text(out, file->str);
	xs_cli_addf(out, " of process %d not readable: ", p->pid);
	xs_xml_text(out, why);
	xs_buf_add(out, "</p>\n");
	return -1;
}

/* The run-wide flame graph of window number: every process's profiles of
 * that window, merged. Nothing when no record of the window has one. */
static void merged_flame(struct xs_buf *out, const struct xs_tree *t, uint32_t number, const char *id)
{
	struct xs_fold f;
	if (xs_fold_init(&f, true) < 0)
		return;
	size_t profiles = 0;
	struct xs_buf notes = { .grow = xs_cli_buf_grow };
	for (size_t i = 0; i < t->proc_count; i++)
		for (size_t k = 0; k < t->procs[i].count; k++)
			if (t->procs[i].rwin[k] == number && fold_profile(&notes, t, &t->procs[i], k, &f) > 0)
				profiles++;
	if (profiles || notes.len) {
		uint64_t samples = f.nodes[0].total[0];
		xs_cli_addf(out, "<div class=\"flame\" data-window=\"%s\" data-profiles=\"%zu\" data-samples=\"%llu\">\n"
				 "<h3>Flame graph of the run: %zu profiles merged, one tower per thread name</h3>\n",
			    id, profiles, (unsigned long long)samples, profiles);
		xs_buf_addn(out, notes.data, notes.len);
		if (!samples) {
			xs_buf_add(out, "<p class=\"nosamples\">no samples in this window</p>\n");
		} else {
			char title[160];
			snprintf(title, sizeof(title), "run window %s, %llu samples from %zu profiles", id,
				 (unsigned long long)samples, profiles);
			xs_fold_sort(&f);
			xs_flame_svg(out, &f, &(struct xs_flame_style){ .title = title, .width = 1100 });
		}
		xs_buf_add(out, "</div>\n");
	}
	xs_cli_buf_release(&notes);
	xs_fold_release(&f);
}

/* One run-wide window's section (w NULL: the whole run). */
static int window_section(struct xs_buf *out, const struct xs_tree *t, const struct xs_tree_window *w)
{
	struct xs_tree_sums s;
	uint32_t number = w ? w->number : 0;
	if (xs_tree_sums(t, number, &s) < 0)
		return -1;
	char id[16];
	bool rest = w && !strcmp(w->reason, "end");
	snprintf(id, sizeof(id), "%s", !w ? "all" : rest ? "rest" : "");
	if (w && !rest)
		snprintf(id, sizeof(id), "%u", w->number);
	xs_cli_addf(out, "<section class=\"rwindow\" id=\"rw-%s\" data-window=\"%s\" data-exits=\"%llu\" "
			 "data-enters=\"%llu\" data-processes=\"%zu\">\n<h2>",
		    id, id, (unsigned long long)s.all.scalar[XS_REC_EXITS], (unsigned long long)s.all.scalar[XS_REC_ENTERS],
		    s.proc_count);
	if (!w) {
		xs_buf_add(out, "The whole run");
	} else if (rest) {
		xs_buf_add(out, "After the last run-wide window (to the end)");
	} else {
		xs_cli_addf(out, "Run window %u: ", w->number);
		xs_xml_text(out, w->reset ? "reset" : w->reason);
		if (w->label) {
			xs_buf_add(out, " &ldquo;");
			xs_xml_text(out, w->label);
			xs_buf_add(out, "&rdquo;");
		}
	}
	xs_cli_addf(out, "</h2>\n<p class=\"meta\">%zu processes &middot; ", s.proc_count);
	xs_html_count(out, s.all.scalar[XS_REC_EXITS]);
	xs_buf_add(out, " exits &middot; ");
	xs_html_count(out, s.all.scalar[XS_REC_ENTERS]);
	xs_buf_add(out, " enters &middot; heaviest: ");
	for (size_t k = 0; k < s.proc_count && k < 5; k++) {
		xs_cli_addf(out, "%s<a href=\"#p%d\">%d ", k ? ", " : "", s.procs[k].p->pid, s.procs[k].p->pid);
		xs_xml_text(out, s.procs[k].p->program);
		xs_buf_add(out, "</a>");
	}
	xs_buf_add(out, "</p>\n");
	stacked_chart(out, &s, id);
	if (w)
		merged_flame(out, t, w->number, id);
	xs_buf_add(out, "</section>\n");
	xs_tree_sums_release(&s);
	return 0;
}

static void process_section(struct xs_buf *out, const struct xs_tree *t, const struct xs_tree_proc *p)
{
	xs_cli_addf(out, "<section class=\"proc\" id=\"p%d\" data-pid=\"%d\" data-exits=\"%llu\">\n<h2>Process %d: ", p->pid,
		    p->pid, (unsigned long long)p->total.scalar[XS_REC_EXITS], p->pid);
	xs_xml_text(out, p->program);
	xs_buf_add(out, "</h2>\n<p class=\"meta\">parent ");
	bool known = false;
	for (size_t i = 0; i < t->proc_count; i++)
		known |= t->procs[i].pid == p->ppid;
	if (known)
		xs_cli_addf(out, "<a href=\"#p%d\">%d</a>", p->ppid, p->ppid);
	else
		xs_cli_addf(out, "%d", p->ppid);
	xs_buf_add(out, " &middot; ");
	xs_xml_text(out, p->exe ? p->exe : "?");
	xs_cli_addf(out, " &middot; %zu records</p>\n<table><thead><tr><th>seq</th><th>reason</th><th>label</th>"
			 "<th>run window</th><th>exits</th><th>enters</th><th>top system calls</th></tr></thead>\n<tbody>\n",
		    p->count);
	for (size_t k = 0; k < p->count; k++) {
		const struct xs_record *r = &p->records[k];
		xs_cli_addf(out, "<tr><td class=\"n\">%llu</td><td>", (unsigned long long)r->seq);
		xs_xml_text(out, r->reason);
		xs_buf_add(out, "</td><td>");
		if (r->label)
			xs_xml_text(out, r->label);
		xs_buf_add(out, "</td><td>");
		bool rest = p->rwin[k] == t->windows[t->window_count - 1].number;
		if (rest)
			xs_buf_add(out, "<a href=\"#rw-rest\">rest</a>");
		else
			xs_cli_addf(out, "<a href=\"#rw-%u\">%u</a>", p->rwin[k], p->rwin[k]);
		xs_buf_add(out, "</td><td class=\"n\">");
		xs_html_count(out, r->window.scalar[XS_REC_EXITS]);
		xs_buf_add(out, "</td><td class=\"n\">");
		xs_html_count(out, r->window.scalar[XS_REC_ENTERS]);
		xs_buf_add(out, "</td><td>");
		size_t idx[3], n = xs_rec_top_syscalls(&r->window, idx, 3, false);
		for (size_t i = 0; i < n; i++) {
			xs_buf_add(out, i ? ", " : "");
			xs_xml_text(out, r->window.sys[idx[i]].name);
			xs_buf_addc(out, '=');
			xs_html_count(out, r->window.sys[idx[i]].calls);
		}
		xs_buf_add(out, "</td></tr>\n");
	}
	xs_buf_add(out, "</tbody></table>\n</section>\n");
}

int xs_tree_report_html(const struct xs_tree *t, const char *output)
{
	struct xs_buf out = { .grow = xs_cli_buf_grow };
	xs_buf_add(&out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			 "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
			 "<title>exitscope run report: ");
	xs_xml_text(&out, t->dir);
	xs_buf_add(&out, "</title>\n<style>\n");
	xs_buf_add(&out, g_asset_report_css);
	xs_buf_add(&out, g_extra_css);
	xs_buf_add(&out, "</style>\n");
	xs_flame_assets(&out);
	xs_buf_add(&out, "</head>\n<body>\n<h1>exitscope run report</h1>\n<p class=\"meta\">");
	xs_xml_text(&out, t->dir);
	xs_cli_addf(&out, " &middot; %zu processes &middot; %zu run-wide windows</p>\n", t->proc_count,
		    t->window_count - 1);
	xs_buf_add(&out, "<section id=\"tree\">\n<h2>Process tree</h2>\n");
	tree_list(&out, t, 0, 0);
	xs_buf_add(&out, "</section>\n");
	int r = 0;
	for (size_t i = 0; !r && i < t->window_count; i++)
		r = window_section(&out, t, &t->windows[i]);
	if (!r && t->window_count > 1)
		r = window_section(&out, t, NULL);
	for (size_t i = 0; i < t->proc_count; i++)
		process_section(&out, t, &t->procs[i]);
	xs_buf_add(&out, "</body>\n</html>\n");
	if (r || out.failed) {
		xs_error("out of memory");
		xs_cli_buf_release(&out);
		return XS_EXIT_DATA;
	}
	int status = xs_html_write(&out, output, t->file);
	xs_cli_buf_release(&out);
	return status;
}
