/*
 * exitscope report RUN: a whole run (tree.h), per run-wide window: the
 * tree's totals, a table per program (processes of the same image summed,
 * "× N"), the heaviest processes, and the system calls summed over the
 * tree as strace -c -f sums them (wall time, as strace -c -w). Then the
 * process tree. --json carries the same in one object:
 *   {"run": DIR, "processes": [PROC...], "windows": [WINDOW...], "total": COUNTERS}
 *   PROC = {"pid", "ppid", "program", "comm", "exe", "start_ns", "end_ns"|null,
 *           "how"|null, "status"|null, "records": N, "exits": N}
 *   WINDOW = {"run_window": N|null (null: the rest after the last), "label", "reason",
 *             "reset", "totals": COUNTERS, "programs": [{"program", "processes", COUNTERS}],
 *             "processes": [{"pid", "program", COUNTERS}] (heaviest first)}
 *   COUNTERS = {"exits", "enters", ..., "syscalls": {NAME: {"calls", "errors", "ns"}}}
 */
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/tree.h"
#include "common/runfile.h"
#include "common/stracetab.h"

#define HEAVIEST 5


static int sys_by_time(const void *a, const void *b)
{
	const struct xs_rec_syscall *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void json_counters(struct xs_buf *b, const struct xs_rec_counters *c)
{
	xs_buf_addc(b, '{');
	for (int i = 0; i < XS_REC_NSCALARS; i++)
		xs_cli_addf(b, "\"%s\": %llu, ", g_xs_rec_scalar_names[i], (unsigned long long)c->scalar[i]);
	xs_buf_add(b, "\"syscalls\": {");
	for (size_t i = 0; i < c->sys_count; i++) {
		if (i)
			xs_buf_add(b, ", ");
		xs_buf_json_str(b, c->sys[i].name);
		xs_cli_addf(b, ": {\"calls\": %llu, \"errors\": %llu, \"ns\": %llu}", (unsigned long long)c->sys[i].calls,
			    (unsigned long long)c->sys[i].errors, (unsigned long long)c->sys[i].ns);
	}
	xs_buf_add(b, "}}");
}

/* "exits N, enters N, ..." after lead, one line. */
static void text_totals(struct xs_buf *b, const char *lead, const struct xs_rec_counters *c)
{
	xs_cli_addf(b, "%sexits %llu, enters %llu, sync signals %llu, async signals %llu, minor faults %llu, "
		       "major faults %llu, preemptions %llu\n", lead,
		    (unsigned long long)c->scalar[0], (unsigned long long)c->scalar[1],
		    (unsigned long long)c->scalar[2], (unsigned long long)c->scalar[3],
		    (unsigned long long)c->scalar[4], (unsigned long long)c->scalar[5],
		    (unsigned long long)c->scalar[6]);
}

/* strace -c -f's table, summed over the tree: its top rows (0: all), and
 * the total over every call. */
static void text_syscalls(struct xs_buf *b, struct xs_rec_counters *c, size_t top)
{
	qsort(c->sys, c->sys_count, sizeof(*c->sys), sys_by_time);
	uint64_t ns = 0, calls = 0, errors = 0;
	for (size_t i = 0; i < c->sys_count; i++) {
		ns += c->sys[i].ns;
		calls += c->sys[i].calls;
		errors += c->sys[i].errors;
	}
	xs_buf_add(b, "  % time   wall secs  usecs/call     calls    errors syscall      (the tree, as strace -c -f -w)\n");
	xs_buf_add(b, g_xs_strace_rule);
	for (size_t i = 0; i <= c->sys_count; i++) {
		bool total = i == c->sys_count;
		const struct xs_rec_syscall *s = total ? NULL : &c->sys[i];
		uint64_t sns = total ? ns : s->ns, scalls = total ? calls : s->calls, serr = total ? errors : s->errors;
		if (!total && (!scalls || (top && i >= top)))
			continue;
		if (total && top && c->sys_count > top)
			xs_cli_addf(b, "  (%zu more system calls: exitscope report gives them all)\n", c->sys_count - top);
		if (total)
			xs_buf_add(b, g_xs_strace_rule);
		xs_strace_row(b, sns, ns, scalls, serr);
		xs_cli_text(b, total ? "total" : s->name, 0);
		xs_buf_addc(b, '\n');
	}
}


static int heavy_cmp(const void *a, const void *b)
{
	const struct xs_tree_heavy *x = a, *y = b;
	uint64_t ex = x->c.scalar[XS_REC_EXITS], ey = y->c.scalar[XS_REC_EXITS];
	return ex != ey ? (ex < ey ? 1 : -1) : x->p->pid - y->p->pid;
}

static int program_cmp(const void *a, const void *b)
{
	const struct xs_tree_program *x = a, *y = b;
	uint64_t ex = x->c.scalar[XS_REC_EXITS], ey = y->c.scalar[XS_REC_EXITS];
	return ex != ey ? (ex < ey ? 1 : -1) : strcmp(x->name, y->name);
}

/* A process's counters c into its program's sum (a new one at ps[*nprog]
 * for a program not seen yet) and into all. 0 or -1 (out of memory). */
static int program_add(struct xs_tree_program *ps, size_t *nprog, const char *program,
		       const struct xs_rec_counters *c, struct xs_rec_counters *all)
{
	size_t k = 0;
	while (k < *nprog && strcmp(ps[k].name, program))
		k++;
	if (k == *nprog)
		ps[(*nprog)++].name = program;
	ps[k].processes++;
	return xs_rec_counters_add(&ps[k].c, c) < 0 || xs_rec_counters_add(all, c) < 0 ? -1 : 0;
}

int xs_tree_sums(const struct xs_tree *t, uint32_t number, struct xs_tree_sums *s)
{
	memset(s, 0, sizeof(*s));
	struct xs_tree_heavy *hv = s->procs = calloc(t->proc_count + 1, sizeof(*hv));
	struct xs_tree_program *ps = s->programs = calloc(t->proc_count + 1, sizeof(*ps));
	size_t nprog = 0, nproc = 0;
	int r = (!hv || !ps) ? -1 : 0;
	for (size_t i = 0; !r && i < t->proc_count; i++) {
		const struct xs_tree_proc *p = &t->procs[i];
		struct xs_rec_counters c;
		if (xs_tree_proc_window(p, number, &c) < 0) {
			r = -1;
			break;
		}
		bool any = false;
		for (size_t k = 0; k < p->count; k++)
			any |= !number || p->rwin[k] == number;
		if (!any) {
			xs_rec_counters_release(&c);
			continue;
		}
		hv[nproc].p = p;
		hv[nproc++].c = c;
		r = program_add(ps, &nprog, p->program, &c, &s->all);
	}
	s->proc_count = nproc;
	s->program_count = nprog;
	if (!r) {
		qsort(hv, nproc, sizeof(*hv), heavy_cmp);
		qsort(ps, nprog, sizeof(*ps), program_cmp);
	}
	if (r)
		xs_tree_sums_release(s);
	return r;
}

void xs_tree_sums_release(struct xs_tree_sums *s)
{
	for (size_t k = 0; s->procs && k < s->proc_count; k++)
		xs_rec_counters_release(&s->procs[k].c);
	for (size_t k = 0; s->programs && k < s->program_count; k++)
		xs_rec_counters_release(&s->programs[k].c);
	xs_rec_counters_release(&s->all);
	free(s->procs);
	free(s->programs);
	memset(s, 0, sizeof(*s));
}

/* One run-wide window (number 0: the whole run). */
static int report_window(const struct xs_tree *t, uint32_t number, const struct xs_tree_window *w, bool json,
			 struct xs_buf *b)
{
	struct xs_tree_sums sums;
	int r = xs_tree_sums(t, number, &sums);
	const struct xs_tree_heavy *hv = sums.procs;
	const struct xs_tree_program *ps = sums.programs;
	struct xs_rec_counters *all = &sums.all;
	size_t nprog = sums.program_count, nproc = sums.proc_count;
	if (!r && json) {
		xs_buf_add(b, "{\"run_window\": ");
		if (w && strcmp(w->reason, "end"))
			xs_cli_addf(b, "%u", w->number);
		else
			xs_buf_add(b, "null");
		xs_buf_add(b, ", \"label\": ");
		if (w && w->label)
			xs_buf_json_str(b, w->label);
		else
			xs_buf_add(b, "null");
		xs_buf_add(b, ", \"reason\": ");
		xs_buf_json_str(b, w ? w->reason : "run");
		xs_cli_addf(b, ", \"reset\": %s, \"totals\": ", w && w->reset ? "true" : "false");
		json_counters(b, all);
		xs_buf_add(b, ", \"programs\": [");
		for (size_t k = 0; k < nprog; k++) {
			xs_buf_add(b, k ? ", {\"program\": " : "{\"program\": ");
			xs_buf_json_str(b, ps[k].name);
			xs_cli_addf(b, ", \"processes\": %zu, \"counters\": ", ps[k].processes);
			json_counters(b, &ps[k].c);
			xs_buf_addc(b, '}');
		}
		xs_buf_add(b, "], \"processes\": [");
		for (size_t k = 0; k < nproc; k++) {
			xs_cli_addf(b, "%s{\"pid\": %d, \"program\": ", k ? ", " : "", hv[k].p->pid);
			xs_buf_json_str(b, hv[k].p->program);
			xs_buf_add(b, ", \"counters\": ");
			json_counters(b, &hv[k].c);
			xs_buf_addc(b, '}');
		}
		xs_buf_add(b, "]}");
	} else if (!r) {
		if (!w)
			xs_buf_add(b, "\nthe whole run");
		else if (!strcmp(w->reason, "end"))
			xs_buf_add(b, "\nafter the last run-wide window (to the end)");
		else {
			xs_cli_addf(b, "\nrun window %u (%s", w->number, w->reset ? "reset" : w->reason);
			if (w->label) {
				xs_buf_add(b, ", label ");
				xs_cli_label(b, w->label, 0);
			}
			xs_buf_addc(b, ')');
		}
		xs_cli_addf(b, ": %zu processes\n", nproc);
		text_totals(b, "  tree totals: ", all);
		xs_buf_add(b, "  program                            processes       exits      enters  top syscalls (calls)\n");
		for (size_t k = 0; k < nprog; k++) {
			xs_buf_add(b, "  ");
			xs_cli_text(b, ps[k].name, 32);
			xs_cli_addf(b, "   x %-6zu %12llu%12llu ", ps[k].processes,
				    (unsigned long long)ps[k].c.scalar[XS_REC_EXITS],
				    (unsigned long long)ps[k].c.scalar[XS_REC_ENTERS]);
			size_t idx[3], n = xs_rec_top_syscalls(&ps[k].c, idx, 3, false);
			for (size_t i = 0; i < n; i++) {
				xs_buf_addc(b, ' ');
				xs_cli_text(b, ps[k].c.sys[idx[i]].name, 0);
				xs_cli_addf(b, "=%llu", (unsigned long long)ps[k].c.sys[idx[i]].calls);
			}
			xs_buf_addc(b, '\n');
		}
		xs_buf_add(b, "  heaviest processes:\n");
		for (size_t k = 0; k < nproc && k < HEAVIEST; k++) {
			xs_cli_addf(b, "    %-8d ", hv[k].p->pid);
			xs_cli_text(b, hv[k].p->program, 32);
			xs_cli_addf(b, " %12llu exits\n", (unsigned long long)hv[k].c.scalar[XS_REC_EXITS]);
		}
		text_syscalls(b, all, 0);
	}
	if (!r)
		xs_tree_sums_release(&sums);
	return r;
}

void xs_tree_proc_end(struct xs_buf *b, const struct xs_tree_proc *p)
{
	if (p->how && !strcmp(p->how, "exit"))
		xs_cli_addf(b, "exit %ld", p->status);
	else if (p->how && !strcmp(p->how, "signal") && p->status > 0)
		xs_cli_addf(b, "signal %ld", p->status);
	else if (p->how)
		xs_cli_text(b, p->how, 0);
	else
		xs_buf_add(b, "running, or killed");
}

static bool proc_known(const struct xs_tree *t, int pid)
{
	for (size_t i = 0; i < t->proc_count; i++)
		if (t->procs[i].pid == pid)
			return true;
	return false;
}

static void text_tree(const struct xs_tree *t, struct xs_buf *b, int ppid, int depth)
{
	for (size_t i = 0; i < t->proc_count; i++) {
		const struct xs_tree_proc *p = &t->procs[i];
		bool root_here = depth == 0 ? !proc_known(t, p->ppid) : p->ppid == ppid;
		if (!root_here)
			continue;
		xs_cli_addf(b, "  %*s%d ", depth * 2, "", p->pid);
		xs_cli_text(b, p->program, 0);
		xs_buf_add(b, "  [");
		xs_tree_proc_end(b, p);
		xs_cli_addf(b, "]  %llu exits\n", (unsigned long long)p->total.scalar[XS_REC_EXITS]);
		if (depth < 64)
			text_tree(t, b, p->pid, depth + 1);
	}
}

int xs_tree_report(const struct xs_tree *t, bool json, struct xs_buf *b)
{
	int r = 0;
	if (json) {
		xs_buf_add(b, "{\"run\": ");
		xs_buf_json_str(b, t->dir);
		xs_buf_add(b, ", \"processes\": [");
		for (size_t i = 0; i < t->proc_count; i++) {
			const struct xs_tree_proc *p = &t->procs[i];
			xs_cli_addf(b, "%s{\"pid\": %d, \"ppid\": %d, \"program\": ", i ? ", " : "", p->pid, p->ppid);
			xs_buf_json_str(b, p->program);
			xs_buf_add(b, ", \"comm\": ");
			xs_buf_json_str(b, p->comm);
			xs_buf_add(b, ", \"exe\": ");
			xs_buf_json_str(b, p->exe);
			xs_cli_addf(b, ", \"start_ns\": %llu, \"end_ns\": ", (unsigned long long)p->start_ns);
			if (p->end_ns)
				xs_cli_addf(b, "%llu", (unsigned long long)p->end_ns);
			else
				xs_buf_add(b, "null");
			xs_buf_add(b, ", \"how\": ");
			if (p->how)
				xs_buf_json_str(b, p->how);
			else
				xs_buf_add(b, "null");
			if (p->status >= 0)
				xs_cli_addf(b, ", \"status\": %ld", p->status);
			else
				xs_buf_add(b, ", \"status\": null");
			xs_cli_addf(b, ", \"records\": %zu, \"exits\": %llu}", p->count,
				    (unsigned long long)p->total.scalar[XS_REC_EXITS]);
		}
		xs_buf_add(b, "], \"windows\": [");
		for (size_t i = 0; !r && i < t->window_count; i++) {
			if (i)
				xs_buf_add(b, ", ");
			r = report_window(t, t->windows[i].number, &t->windows[i], true, b);
		}
		xs_buf_add(b, "], \"total\": ");
		if (!r)
			r = report_window(t, 0, NULL, true, b);
		xs_buf_add(b, "}\n");
	} else {
		xs_buf_add(b, "exitscope report: run ");
		xs_cli_text(b, t->dir, 0);
		xs_cli_addf(b, " (%zu processes, %zu run-wide windows)\nprocess tree:\n", t->proc_count,
			    t->window_count - 1);
		text_tree(t, b, 0, 0);
		for (size_t i = 0; !r && i < t->window_count; i++)
			r = report_window(t, t->windows[i].number, &t->windows[i], false, b);
		if (!r && t->window_count > 1)
			r = report_window(t, 0, NULL, false, b);
	}
	if (r || b->failed) {
		xs_error("out of memory");
		return XS_EXIT_DATA;
	}
	return XS_EXIT_OK;
}

/*
 * The log's summary of a run at its end (DESIGN.md §3.11), printed by the
 * first process's runtime through `exitscope report --summary RUN`: the
 * tree's totals and top calls like strace -c -f, the programs, then where
 * the files are. The header names the program, not only the pid.
 */
#define SUMMARY_TOP_CALLS 15

int xs_tree_summary(const struct xs_tree *t, struct xs_buf *b)
{
	struct xs_rec_counters all = { 0 };
	struct xs_tree_program *ps = calloc(t->proc_count + 1, sizeof(*ps));
	size_t nprog = 0, running = 0;
	int r = ps ? 0 : -1;
	for (size_t i = 0; !r && i < t->proc_count; i++) {
		const struct xs_tree_proc *p = &t->procs[i];
		running += !p->how;
		r = program_add(ps, &nprog, p->program, &p->total, &all);
	}
	if (!r) {
		qsort(ps, nprog, sizeof(*ps), program_cmp);
		const struct xs_tree_proc *root = t->proc_count ? &t->procs[0] : NULL;
		xs_buf_add(b, "----- exitscope run summary: ");
		xs_cli_text(b, root ? root->program : "?", 0);
		xs_cli_addf(b, " (pid %d) and its tree, %zu processes, %zu run-wide windows -----\n",
			    root ? root->pid : 0, t->proc_count, t->window_count - 1);
		text_totals(b, "  ", &all);
		xs_buf_add(b, "  programs:");
		for (size_t k = 0; k < nprog; k++) {
			xs_buf_add(b, k ? ", " : " ");
			xs_cli_text(b, ps[k].name, 0);
			xs_cli_addf(b, " x %zu (%llu exits)", ps[k].processes,
				    (unsigned long long)ps[k].c.scalar[XS_REC_EXITS]);
		}
		xs_buf_addc(b, '\n');
		text_syscalls(b, &all, SUMMARY_TOP_CALLS);
		if (running)
			xs_cli_addf(b, "  %zu processes had not ended: their calls after their last record are not "
				       "in this summary\n", running);
		const char *name = strrchr(t->file, '/') ? strrchr(t->file, '/') + 1 : t->file;
		xs_buf_add(b, "  files: ");
		xs_cli_text(b, t->dir, 0);
		xs_cli_addf(b, "/ (the run file %s and a record file per process); the whole view: "
			       "exitscope report ", name);
		/* a run directory names the run; beside other files (-o DIR), its run file does */
		xs_cli_text(b, strcmp(name, XS_RUN_FILE) ? t->file : t->dir, 0);
		xs_buf_addc(b, '\n');
	}
	for (size_t k = 0; ps && k < nprog; k++)
		xs_rec_counters_release(&ps[k].c);
	xs_rec_counters_release(&all);
	free(ps);
	if (r || b->failed) {
		xs_error("out of memory");
		return XS_EXIT_DATA;
	}
	return XS_EXIT_OK;
}
