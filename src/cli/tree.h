/*
 * A whole run (DESIGN.md §3.11): its run file and every process's record
 * file, read into one view: the process tree, the run-wide windows, and
 * each process's records assigned to the run-wide window they belong to.
 *
 * Ownership: a struct xs_tree owns everything it points to (the run file's
 * document, every record); xs_tree_release() frees it all.
 */
#ifndef XS_CLI_TREE_H
#define XS_CLI_TREE_H

#include <stdbool.h>
#include <stdint.h>
#include "cli/records.h"

struct xs_tree_proc {
	int pid, ppid;
	const char *comm, *title, *exe;	/* the last image's; from the run file */
	const char *argv0;		/* the last image's argv[0] (NULL: none) */
	char program[128];		/* the name its records are summed under */
	uint64_t start_ns, end_ns;	/* end_ns 0: no end line (still running, or killed) */
	const char *how;		/* "exit", "signal", "exec", or NULL */
	long status;			/* -1: none */
	int images;			/* exec'd images seen */
	struct xs_record *records;	/* its record file, in order */
	size_t count;
	uint32_t *rwin;			/* the run-wide window of each record */
	struct xs_rec_counters total;	/* the sum of its records' windows */
};

struct xs_tree_window {
	uint32_t number;		/* 1.. for closed ones; the last is the open rest */
	const char *label;		/* NULL: none */
	const char *reason;		/* "command", "app", "signal"; "end" for the rest */
	bool reset;
	uint64_t begin_ns, time_ns;	/* when its closer began and finished */
};

struct xs_tree {
	char dir[4096];			/* the run directory (where the records are) */
	char file[4096];		/* the run file */
	struct xs_json_doc **docs;	/* one per run-file line */
	size_t doc_count;
	struct xs_tree_proc *procs;	/* in order of first appearance */
	size_t proc_count;
	struct xs_tree_window *windows;	/* run-wide windows 1..N, then the rest (N+1) */
	size_t window_count;
};

/*
 * Is arg a run: a run directory (holding run.jsonl), a run file
 * (run.jsonl, or run-PID.jsonl of -o DIR), or a pid whose run directory ./exitscope-PID/
 * is here? On true, path holds the run file's path.
 */
bool xs_tree_find(const char *arg, char *path, size_t size);

/* Read the run whose run file is path. XS_EXIT_OK, or XS_EXIT_DATA after
 * saying why; release the tree either way. */
int xs_tree_load(struct xs_tree *tree, const char *path);
void xs_tree_release(struct xs_tree *tree);

/* dst += src: every scalar, and each system call by name. 0 or -ENOMEM. */
int xs_rec_counters_add(struct xs_rec_counters *dst, const struct xs_rec_counters *src);
void xs_rec_counters_release(struct xs_rec_counters *c);

/* The sum over p's records in run-wide window number (0: all). */
int xs_tree_proc_window(const struct xs_tree_proc *p, uint32_t number, struct xs_rec_counters *out);

/*
 * Run-wide window number (0: the whole run) of the tree as one record, for
 * diff: window = the tree's sum in it, total = the whole run's, pid = the
 * first process's, seq = number, line 0 (no file line: a run). Its names
 * point into the tree, which must outlive it; xs_record_release frees it.
 * 0, -ENOENT (no such window) or -ENOMEM.
 */
int xs_tree_window_record(const struct xs_tree *tree, uint32_t number, struct xs_record *out);

/* exitscope report RUN: text (json false) or one JSON object into out. */
int xs_tree_report(const struct xs_tree *tree, bool json, struct xs_buf *out);

/* The sums of run-wide window number (0: the whole run): each process that
 * has records in it (heaviest first, by exits), each program (processes of
 * the same image summed, heaviest first), and the tree. */
struct xs_tree_heavy {
	const struct xs_tree_proc *p;
	struct xs_rec_counters c;
};
struct xs_tree_program {
	const char *name;
	size_t processes;
	struct xs_rec_counters c;
};
struct xs_tree_sums {
	struct xs_tree_heavy *procs;
	size_t proc_count;
	struct xs_tree_program *programs;
	size_t program_count;
	struct xs_rec_counters all;
};
/* 0, or -1 when out of memory (nothing to release then). */
int xs_tree_sums(const struct xs_tree *tree, uint32_t number, struct xs_tree_sums *out);
void xs_tree_sums_release(struct xs_tree_sums *s);

/* exitscope report --html RUN: one page (output NULL: beside the run file,
 * its name with .html; "-": standard output). */
int xs_tree_report_html(const struct xs_tree *tree, const char *output);

/* How p ended, as the reports show it: "exit N", "signal N", "exec",
 * "running, or killed". */
void xs_tree_proc_end(struct xs_buf *b, const struct xs_tree_proc *p);

/* The log's summary of a run at its end (report --summary). */
int xs_tree_summary(const struct xs_tree *tree, struct xs_buf *out);

#endif
