/*
 * A whole run read into one view (see tree.h), and `exitscope report RUN`.
 *
 * Which run-wide window a record belongs to. A record that a run-wide
 * window closed carries "run_window": N. Any other record of a process
 * (an exit, an exec, a window the process closed for itself) belongs to
 * the run-wide window that was open for that process when it closed: the
 * first run-wide window that finished (its window line's time_ns) at or
 * after the record's end, but never one the process had already passed (a
 * later record than its own run_window N is in N+1 at the earliest); after
 * the last run-wide window, the rest. So a process that started during
 * window N is in N from its start, one that exited before window N reached
 * it is in N up to its exit, and summing the windows gives every record
 * once: the total.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/tree.h"
#include "common/json.h"
#include "common/runfile.h"

bool xs_tree_find(const char *arg, char *path, size_t size)
{
	struct stat st;
	size_t n = strlen(arg);
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(path, size, "%s/%s", arg, XS_RUN_FILE);
		return stat(path, &st) == 0 && S_ISREG(st.st_mode);
	}
	const char *base = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;
	if (stat(arg, &st) == 0 && S_ISREG(st.st_mode) &&
	    (!strcmp(base, XS_RUN_FILE) || (!strncmp(base, "run-", 4) && n >= 6 && !strcmp(arg + n - 6, ".jsonl")))) {
		snprintf(path, size, "%s", arg);
		return true;
	}
	if (n && strspn(arg, "0123456789") == n) {
		snprintf(path, size, "exitscope-%s/%s", arg, XS_RUN_FILE);
		return stat(path, &st) == 0 && S_ISREG(st.st_mode);
	}
	return false;
}

static void counters_clear(struct xs_rec_counters *c)
{
	memset(c, 0, sizeof(*c));
}

void xs_rec_counters_release(struct xs_rec_counters *c)
{
	free(c->sys);
	counters_clear(c);
}

int xs_rec_counters_add(struct xs_rec_counters *dst, const struct xs_rec_counters *src)
{
	for (int i = 0; i < XS_REC_NSCALARS; i++)
		dst->scalar[i] += src->scalar[i];
	for (size_t i = 0; i < src->sys_count; i++) {
		const struct xs_rec_syscall *s = &src->sys[i];
		size_t k = 0;
		while (k < dst->sys_count && strcmp(dst->sys[k].name, s->name))
			k++;
		if (k == dst->sys_count) {
			struct xs_rec_syscall *grown = realloc(dst->sys, (dst->sys_count + 1) * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			dst->sys = grown;
			dst->sys[k] = (struct xs_rec_syscall){ s->name, 0, 0, 0 };
			dst->sys_count++;
		}
		dst->sys[k].calls += s->calls;
		dst->sys[k].errors += s->errors;
		dst->sys[k].ns += s->ns;
	}
	return 0;
}

static struct xs_tree_proc *proc_of(struct xs_tree *t, int pid, bool add)
{
	for (size_t i = 0; i < t->proc_count; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	if (!add)
		return NULL;
	struct xs_tree_proc *grown = realloc(t->procs, (t->proc_count + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	t->procs = grown;
	struct xs_tree_proc *p = &t->procs[t->proc_count++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->status = -1;
	p->comm = p->title = p->exe = "";
	return p;
}

static const char *str_of(const struct xs_json *o, const char *key)
{
	const struct xs_json *v = xs_json_get(o, key);
	return v && v->type == XS_JSON_STRING ? v->str : NULL;
}

static uint64_t u64_of(const struct xs_json *o, const char *key)
{
	uint64_t v = 0;
	xs_json_u64(xs_json_get(o, key), &v);
	return v;
}

/* One line of the run file. */
static int take_line(struct xs_tree *t, const struct xs_json *o)
{
	const char *event = str_of(o, "event");
	if (!event)
		return 0;
	if (!strcmp(event, "window")) {
		struct xs_tree_window *grown = realloc(t->windows, (t->window_count + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		t->windows = grown;
		struct xs_tree_window *w = &t->windows[t->window_count++];
		w->number = (uint32_t)u64_of(o, "run_window");
		w->label = str_of(o, "label");
		w->reason = str_of(o, "reason") ? str_of(o, "reason") : "command";
		const struct xs_json *reset = xs_json_get(o, "reset");
		w->reset = reset && reset->type == XS_JSON_TRUE;
		w->begin_ns = u64_of(o, "begin_ns");
		w->time_ns = u64_of(o, "time_ns");
		return 0;
	}
	int pid = (int)u64_of(o, "pid");
	if (pid <= 0)
		return 0;
	struct xs_tree_proc *p = proc_of(t, pid, true);
	if (!p)
		return -ENOMEM;
	const char *s;
	if (!strcmp(event, "start") || !strcmp(event, "exec")) {
		if (!p->start_ns || !strcmp(event, "start"))
			p->start_ns = u64_of(o, "time_ns");
		if (u64_of(o, "ppid"))
			p->ppid = (int)u64_of(o, "ppid");
		if ((s = str_of(o, "exe")))
			p->exe = s;
		const struct xs_json *argv = xs_json_get(o, "argv");
		p->argv0 = argv && argv->type == XS_JSON_ARRAY && argv->first && argv->first->type == XS_JSON_STRING
				   ? argv->first->str : NULL;
		p->images++;
	} else if (!strcmp(event, "end")) {
		p->end_ns = u64_of(o, "time_ns");
		p->how = str_of(o, "how");
		const struct xs_json *st = xs_json_get(o, "status");
		uint64_t v;
		if (st && xs_json_u64(st, &v))
			p->status = (long)v;
	}
	if ((s = str_of(o, "comm")))
		p->comm = s;
	if ((s = str_of(o, "title")))
		p->title = s;
	return 0;
}

/* The program a process is summed under: its image's name; a title that
 * the program set itself in the form "NAME: ROLE" (postgres, nginx)
 * names its role as well; any other title the program rewrote (not its
 * argv[0] any more) names it by its first word: redis's BGSAVE child is
 * "redis-rdb-bgsave 127.0.0.1:PORT", and its image is redis-check-rdb
 * (Debian's redis-server is a link to it). */
static void name_program(struct xs_tree_proc *p)
{
	const char *base = strrchr(p->exe, '/');
	base = base ? base + 1 : *p->exe ? p->exe : p->comm;
	if (strstr(p->title, ": ")) {
		snprintf(p->program, sizeof(p->program), "%s", p->title);
	} else if (p->argv0 && *p->title && strcmp(p->title, p->argv0)) {
		const char *word = p->title, *slash;
		size_t n = strcspn(word, " ");
		while ((slash = memchr(word, '/', n)) && slash + 1 < word + n) {
			n -= (size_t)(slash + 1 - word);
			word = slash + 1;
		}
		snprintf(p->program, sizeof(p->program), "%.*s", (int)n, word);
	} else {
		snprintf(p->program, sizeof(p->program), "%s", base);
	}
}

static uint32_t assign(const struct xs_tree *t, const struct xs_record *r, uint32_t *lower)
{
	uint64_t rw = 0;
	if (xs_json_u64(xs_json_get(xs_json_root(r->doc), "run_window"), &rw) && rw > 0) {
		*lower = (uint32_t)rw + 1;
		return (uint32_t)rw;
	}
	uint32_t n = (uint32_t)t->window_count;	/* the rest */
	for (size_t i = 0; i + 1 < t->window_count; i++)
		if (t->windows[i].time_ns >= r->end_ns) {
			n = t->windows[i].number;
			break;
		}
	return n < *lower ? *lower : n;
}

static int load_records(struct xs_tree *t, struct xs_tree_proc *p)
{
	char path[8192];
	struct xs_record_file rf;
	snprintf(path, sizeof(path), "%s/exitscope-%d.jsonl", t->dir, p->pid);
	if (xs_record_file_open(&rf, path) < 0)
		return 0;	/* no records (refused, or --no-records): counted as none */
	uint32_t lower = 1;
	for (;;) {
		struct xs_record rec;
		int r = xs_record_file_next(&rf, &rec);
		if (r == -EINVAL) {
			fprintf(stderr, "exitscope: warning: '%s': %s; line skipped\n", path, rf.msg);
			continue;
		}
		if (r <= 0)
			break;
		struct xs_record *grown = realloc(p->records, (p->count + 1) * sizeof(*grown));
		uint32_t *rgrown = realloc(p->rwin, (p->count + 1) * sizeof(*rgrown));
		if (grown)
			p->records = grown;
		if (rgrown)
			p->rwin = rgrown;
		if (!grown || !rgrown) {
			xs_record_release(&rec);
			xs_record_file_close(&rf);
			return -ENOMEM;
		}
		p->rwin[p->count] = assign(t, &rec, &lower);
		p->records[p->count++] = rec;
		if (xs_rec_counters_add(&p->total, &rec.window) < 0) {
			xs_record_file_close(&rf);
			return -ENOMEM;
		}
	}
	xs_record_file_close(&rf);
	return 0;
}

int xs_tree_load(struct xs_tree *t, const char *path)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->file, sizeof(t->file), "%s", path);
	snprintf(t->dir, sizeof(t->dir), "%s", path);
	char *slash = strrchr(t->dir, '/');
	if (slash)
		*slash = 0;
	else
		strcpy(t->dir, ".");
	FILE *f = fopen(path, "re");
	if (!f) {
		xs_error("cannot open run file '%s': %s", path, strerror(errno));
		return XS_EXIT_DATA;
	}
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int status = XS_EXIT_OK;
	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		struct xs_json_doc *doc;
		struct xs_json_error err;
		if (line[n - 1] != '\n' || xs_json_parse(line, (size_t)n, &doc, &err) < 0) {
			if (line[n - 1] == '\n')
				fprintf(stderr, "exitscope: warning: '%s': line %zu: not a JSON line; line skipped\n",
					path, lineno);
			continue;
		}
		struct xs_json_doc **grown = realloc(t->docs, (t->doc_count + 1) * sizeof(*grown));
		if (!grown) {
			xs_json_free(doc);
			status = XS_EXIT_DATA;
			break;
		}
		t->docs = grown;
		t->docs[t->doc_count++] = doc;
		if (take_line(t, xs_json_root(doc)) < 0) {
			status = XS_EXIT_DATA;
			break;
		}
	}
	free(line);
	fclose(f);
	if (status != XS_EXIT_OK) {
		xs_error("out of memory reading '%s'", path);
		return status;
	}
	if (!t->proc_count) {
		xs_error("run file '%s' names no process", path);
		return XS_EXIT_DATA;
	}
	/* the rest: from the last run-wide window to the end */
	struct xs_tree_window *grown = realloc(t->windows, (t->window_count + 1) * sizeof(*grown));
	if (!grown)
		return XS_EXIT_DATA;
	t->windows = grown;
	t->windows[t->window_count] = (struct xs_tree_window){ (uint32_t)t->window_count + 1, NULL, "end", false,
								t->window_count ? t->windows[t->window_count - 1].time_ns : 0, 0 };
	t->window_count++;
	for (size_t i = 0; i < t->proc_count; i++) {
		name_program(&t->procs[i]);
		if (load_records(t, &t->procs[i]) < 0) {
			xs_error("out of memory reading the records of '%s'", t->dir);
			return XS_EXIT_DATA;
		}
	}
	return XS_EXIT_OK;
}

void xs_tree_release(struct xs_tree *t)
{
	for (size_t i = 0; i < t->proc_count; i++) {
		struct xs_tree_proc *p = &t->procs[i];
		for (size_t k = 0; k < p->count; k++)
			xs_record_release(&p->records[k]);
		free(p->records);
		free(p->rwin);
		xs_rec_counters_release(&p->total);
	}
	free(t->procs);
	for (size_t i = 0; i < t->doc_count; i++)
		xs_json_free(t->docs[i]);
	free(t->docs);
	free(t->windows);
	memset(t, 0, sizeof(*t));
}

int xs_tree_proc_window(const struct xs_tree_proc *p, uint32_t number, struct xs_rec_counters *out)
{
	counters_clear(out);
	for (size_t k = 0; k < p->count; k++)
		if ((!number || p->rwin[k] == number) && xs_rec_counters_add(out, &p->records[k].window) < 0)
			return -ENOMEM;
	return 0;
}

/* The sum of every process's window number (0: all) into out. */
static int tree_sum(const struct xs_tree *t, uint32_t number, struct xs_rec_counters *out)
{
	counters_clear(out);
	for (size_t i = 0; i < t->proc_count; i++) {
		struct xs_rec_counters c;
		int r = xs_tree_proc_window(&t->procs[i], number, &c);
		if (!r)
			r = xs_rec_counters_add(out, &c);
		xs_rec_counters_release(&c);
		if (r < 0)
			return r;
	}
	return 0;
}

int xs_tree_window_record(const struct xs_tree *t, uint32_t number, struct xs_record *out)
{
	memset(out, 0, sizeof(*out));
	const struct xs_tree_window *w = NULL;
	for (size_t i = 0; i < t->window_count; i++)
		if (t->windows[i].number == number)
			w = &t->windows[i];
	if (number && !w)
		return -ENOENT;
	uint64_t first = 0, last = 0;
	for (size_t i = 0; i < t->proc_count; i++) {
		const struct xs_tree_proc *p = &t->procs[i];
		if (p->start_ns && (!first || p->start_ns < first))
			first = p->start_ns;
		if (p->end_ns > last)
			last = p->end_ns;
	}
	out->pid = t->proc_count ? (uint64_t)t->procs[0].pid : 0;
	out->seq = number;
	out->reason = w ? w->reason : "run";
	out->label = w ? w->label : NULL;
	/* a window spans from the one before it (or the run's start) to its end */
	out->start_ns = first;
	for (size_t i = 0; w && i < t->window_count && &t->windows[i] != w; i++)
		out->start_ns = t->windows[i].time_ns;
	out->end_ns = w && strcmp(w->reason, "end") ? w->time_ns : last;
	if (out->end_ns < out->start_ns)
		out->end_ns = out->start_ns;
	if (tree_sum(t, number, &out->window) < 0 || tree_sum(t, 0, &out->total) < 0) {
		xs_record_release(out);
		return -ENOMEM;
	}
	return 0;
}
