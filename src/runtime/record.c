/*
 * A closed window: its counters collected from the thread blocks, then
 * written as one JSON line (the record) and as a text block for the log, in
 * the format the user chose (text, gramine or none). Everything here runs
 * with the world stopped and allocates only with mmap, so it is safe in a
 * signal handler and on a small stack.
 */
#include <string.h>
#include <sys/syscall.h>
#include "common/stracetab.h"
#include "runtime/runtime.h"

static const char *call_name(long nr, char *tmp, size_t size)
{
	const char *name = xs_syscall_name(nr);
	if (name)
		return name;
	struct xs_buf b = { tmp, 0, size, false, NULL };
	xs_buf_add(&b, "syscall_");
	xs_buf_u64(&b, (uint64_t)nr, 0);
	xs_buf_addc(&b, 0);
	return tmp;
}

static void json_field(struct xs_buf *b, const char *name, uint64_t v, bool comma)
{
	xs_buf_addc(b, '"');
	xs_buf_add(b, name);
	xs_buf_add(b, "\": ");
	xs_buf_u64(b, v, 0);
	if (comma)
		xs_buf_add(b, ", ");
}

/* The ns of a call in counters c: c is a total, or a window of total (then
 * the difference of the converted totals at its two ends, so that the
 * windows add up to the total exactly). */
static uint64_t call_ns(const struct xs_counters *c, const struct xs_counters *total, long nr)
{
	if (!total)
		return xs_ticks_to_ns(c->sys[nr].ticks);
	uint64_t end = total->sys[nr].ticks;
	return xs_ticks_to_ns(end) - xs_ticks_to_ns(end - c->sys[nr].ticks);
}

/* c: a window of total, or (total NULL) a total. */
static void json_counters(struct xs_buf *b, const struct xs_counters *c, const struct xs_counters *total)
{
	char tmp[32];
	xs_buf_addc(b, '{');
	json_field(b, "exits", c->exits, true);
	json_field(b, "exits_fast", c->exits_fast, true);
	json_field(b, "exits_dispatch", c->exits - c->exits_fast, true);
	json_field(b, "enters", c->enters, true);
	json_field(b, "sync_signals", c->sync_signals, true);
	json_field(b, "async_signals", c->async_signals, true);
	json_field(b, "minor_faults", c->minor_faults, true);
	json_field(b, "major_faults", c->major_faults, true);
	json_field(b, "preemptions", c->preemptions, true);
	xs_buf_add(b, "\"syscalls\": {");
	bool first = true;
	for (long nr = 0; nr < XS_NR_SYSCALLS; nr++) {
		const struct xs_syscall_count *s = &c->sys[nr];
		if (!s->calls && !s->errors && !s->ticks)
			continue;
		if (!first)
			xs_buf_add(b, ", ");
		first = false;
		xs_buf_json_str(b, call_name(nr, tmp, sizeof(tmp)));
		xs_buf_add(b, ": {");
		json_field(b, "calls", s->calls, true);
		json_field(b, "errors", s->errors, true);
		json_field(b, "ns", call_ns(c, total, nr), false);
		xs_buf_addc(b, '}');
	}
	xs_buf_add(b, "}}");
}

void xs_format_thread(struct xs_buf *b, int tid, const char *comm, bool exited,
		      const struct xs_counters *window, const struct xs_counters *total)
{
	xs_buf_add(b, "{\"tid\": ");
	xs_buf_u64(b, (uint64_t)tid, 0);
	xs_buf_add(b, ", \"comm\": ");
	xs_buf_json_str(b, comm);
	xs_buf_add(b, ", \"exited\": ");
	xs_buf_add(b, exited ? "true" : "false");
	xs_buf_add(b, ", \"window\": ");
	json_counters(b, window, total);
	xs_buf_add(b, ", \"total\": ");
	json_counters(b, total, NULL);
	xs_buf_addc(b, '}');
}

static void format_json(struct xs_window *w, struct xs_buf *b)
{
	xs_buf_add(b, "{\"pid\": ");
	xs_buf_u64(b, (uint64_t)w->pid, 0);
	xs_buf_add(b, ", \"seq\": ");
	xs_buf_u64(b, w->seq, 0);
	xs_buf_add(b, ", \"reason\": ");
	xs_buf_json_str(b, w->reason);
	xs_buf_add(b, ", \"label\": ");
	if (w->has_label)
		xs_buf_json_str(b, w->label);
	else
		xs_buf_add(b, "null");
	xs_buf_add(b, ", \"start_ns\": ");
	xs_buf_u64(b, w->start_ns, 0);
	xs_buf_add(b, ", \"end_ns\": ");
	xs_buf_u64(b, w->end_ns, 0);
	xs_buf_add(b, ", \"window\": ");
	json_counters(b, &w->window, &w->total);
	xs_buf_add(b, ", \"total\": ");
	json_counters(b, &w->total, NULL);
	xs_buf_add(b, ", \"threads\": [");
	uint32_t i = 0;
	bool first = true;
	struct xs_thread *t;
	const char *comm;
	const struct xs_counters *window, *total;
	while (xs_window_thread(w, &i, &t, &comm, &window, &total)) {
		if (!first)
			xs_buf_add(b, ", ");
		first = false;
		xs_format_thread(b, t->tid, comm, t->state != XS_SLOT_LIVE, window, total);
	}
	/* threads whose slots were reclaimed since the last boundary */
	const struct xs_buf *reclaimed = xs_window_reclaimed();
	if (reclaimed->len > 2)
		xs_buf_addn(b, reclaimed->data + (first ? 2 : 0), reclaimed->len - (first ? 2 : 0));
	xs_buf_add(b, "], \"profile\": ");
	if (w->has_profile) {
		xs_buf_add(b, "{\"file\": ");
		xs_buf_json_str(b, w->profile_file);
		xs_buf_add(b, ", \"samples\": ");
		xs_buf_u64(b, w->profile_samples, 0);
		xs_buf_addc(b, '}');
	} else {
		xs_buf_add(b, "null");
	}
	if (w->run_window) {
		xs_buf_add(b, ", \"run_window\": ");
		xs_buf_u64(b, w->run_window, 0);
	}
	xs_buf_add(b, "}\n");
}

/* The reason as the log shows it: the control signal by name. */
static const char *reason_shown(const char *reason)
{
	return strcmp(reason, "signal") == 0 ? xs_control_signal_name() : reason;
}

static void text_row(struct xs_buf *b, const char *name, uint64_t window, uint64_t total)
{
	xs_buf_add(b, "  ");
	xs_buf_pad(b, name, 16);
	xs_buf_u64(b, window, 14);
	xs_buf_u64(b, total, 14);
	xs_buf_addc(b, '\n');
}

static void syscall_row(struct xs_buf *b, uint64_t ns, uint64_t all_ns, uint64_t calls, uint64_t errors,
			const char *name)
{
	xs_strace_row(b, ns, all_ns, calls, errors);
	xs_buf_add(b, name);
	xs_buf_addc(b, '\n');
}

/* strace -c's table for the window, sorted by time, then calls. */
static void format_syscall_table(struct xs_window *w, struct xs_buf *b)
{
	const struct xs_counters *c = &w->window;
	uint64_t all_ns = 0, all_calls = 0, all_errors = 0;
	int n = 0;
	for (int nr = 0; nr < XS_NR_SYSCALLS; nr++) {
		if (!c->sys[nr].calls)
			continue;
		all_ns += call_ns(c, &w->total, nr);
		all_calls += c->sys[nr].calls;
		all_errors += c->sys[nr].errors;
		int i = n++;
		while (i > 0) {
			const struct xs_syscall_count *o = &c->sys[w->order[i - 1]], *s = &c->sys[nr];
			if (o->ticks > s->ticks || (o->ticks == s->ticks && o->calls >= s->calls))
				break;
			w->order[i] = w->order[i - 1];
			i--;
		}
		w->order[i] = (uint16_t)nr;
	}
	xs_buf_add(b, "  % time   wall secs  usecs/call     calls    errors syscall      (this window; wall time, as strace -c -w)\n");
	xs_buf_add(b, g_xs_strace_rule);
	char tmp[32];
	for (int i = 0; i < n; i++) {
		const struct xs_syscall_count *s = &c->sys[w->order[i]];
		syscall_row(b, call_ns(c, &w->total, w->order[i]), all_ns, s->calls, s->errors,
			    call_name(w->order[i], tmp, sizeof(tmp)));
	}
	xs_buf_add(b, g_xs_strace_rule);
	syscall_row(b, all_ns, all_ns, all_calls, all_errors, "total");
}

/* "REASON[, label "…"], S s": what closed the window, and its length. */
static void window_heading(struct xs_window *w, struct xs_buf *b)
{
	xs_buf_add(b, reason_shown(w->reason));
	if (w->has_label) {
		xs_buf_add(b, ", label ");
		xs_buf_json_str(b, w->label);
	}
	xs_buf_add(b, ", ");
	xs_buf_fixed(b, w->duration_ns / 1000000, 3, 0);
	xs_buf_add(b, " s");
}

static void format_text(struct xs_window *w, struct xs_buf *b)
{
	xs_buf_add(b, "----- exitscope stats for process ");
	xs_buf_u64(b, (uint64_t)w->pid, 0);
	xs_buf_add(b, " (window #");
	xs_buf_u64(b, w->seq, 0);
	xs_buf_add(b, ", ");
	window_heading(w, b);
	/* the program too: in a process tree the pid alone says little */
	char comm[17];
	xs_run_comm(comm);
	xs_buf_add(b, "): ");
	xs_buf_json_str(b, comm);
	xs_buf_add(b, " -----\n");
	xs_buf_add(b, "                          window         total\n");
	text_row(b, "exits", w->window.exits, w->total.exits);
	text_row(b, "  fast path", w->window.exits_fast, w->total.exits_fast);
	text_row(b, "enters", w->window.enters, w->total.enters);
	text_row(b, "sync signals", w->window.sync_signals, w->total.sync_signals);
	text_row(b, "async signals", w->window.async_signals, w->total.async_signals);
	text_row(b, "minor faults", w->window.minor_faults, w->total.minor_faults);
	text_row(b, "major faults", w->window.major_faults, w->total.major_faults);
	text_row(b, "preemptions", w->window.preemptions, w->total.preemptions);
	text_row(b, "threads", w->nthreads, w->nthreads);
	format_syscall_table(w, b);
}

/* Gramine's SGX stats (pal/src/host/linux-sgx/host_thread.c): a block per
 * thread as it exits and, when the process exits, the block
 *   ----- Total SGX stats for process PID -----
 *     # of EENTERs:        N
 *   ... (EEXITs, AEXs, sync signals, async signals)
 * with the process's totals. Ours: EENTERs = enters, EEXITs = exits, AEXs =
 * preemptions + minor and major faults (the asynchronous exits of an
 * enclave). The counter lines are Gramine's, byte for byte, so that its
 * users' parsers read ours. Gramine has no windows: each of ours gets a
 * block under a header of our own that names the window, and the Total
 * header appears only at exit, over the totals, never over a window's
 * counts. A single-window run prints just the Total block, as Gramine does. */
static void gramine_counts(struct xs_buf *b, const struct xs_counters *c)
{
	xs_buf_add(b, "  # of EENTERs:        ");
	xs_buf_u64(b, c->enters, 0);
	xs_buf_add(b, "\n  # of EEXITs:         ");
	xs_buf_u64(b, c->exits, 0);
	xs_buf_add(b, "\n  # of AEXs:           ");
	xs_buf_u64(b, c->preemptions + c->minor_faults + c->major_faults, 0);
	xs_buf_add(b, "\n  # of sync signals:   ");
	xs_buf_u64(b, c->sync_signals, 0);
	xs_buf_add(b, "\n  # of async signals:  ");
	xs_buf_u64(b, c->async_signals, 0);
	xs_buf_addc(b, '\n');
}

static void format_gramine(struct xs_window *w, struct xs_buf *b)
{
	bool at_exit = strcmp(w->reason, "exit") == 0;
	if (!at_exit || w->seq > 0) {
		xs_buf_add(b, "----- exitscope window #");
		xs_buf_u64(b, w->seq, 0);
		xs_buf_add(b, " of process ");
		xs_buf_u64(b, (uint64_t)w->pid, 0);
		xs_buf_add(b, " (");
		window_heading(w, b);
		xs_buf_add(b, "): this window -----\n");
		gramine_counts(b, &w->window);
	}
	if (at_exit) {
		xs_buf_add(b, "----- Total SGX stats for process ");
		xs_buf_u64(b, (uint64_t)w->pid, 0);
		xs_buf_add(b, " -----\n");
		gramine_counts(b, &w->total);
	}
}

void xs_window_format(struct xs_window *w, struct xs_buf *json, struct xs_buf *text)
{
	format_json(w, json);
	if (!text)
		return;
	if (g_config.format == XS_FORMAT_TEXT)
		format_text(w, text);
	else if (g_config.format == XS_FORMAT_GRAMINE)
		format_gramine(w, text);
}

void xs_window_format_text(struct xs_window *w, struct xs_buf *text)
{
	format_text(w, text);
}
