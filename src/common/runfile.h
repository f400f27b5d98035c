/*
 * The run file (run.jsonl in a run directory, DESIGN.md §3.11): one JSON
 * object a line, each starting {"event": "KIND", ... in the fixed form the
 * writers use (the runtime for start, exec and end; whoever closes a
 * run-wide window for window). What both sides need without a JSON parser:
 * which processes of the run are alive, and the last run-wide window
 * number. The report reads the same lines with the full JSON reader.
 */
#ifndef XS_COMMON_RUNFILE_H
#define XS_COMMON_RUNFILE_H

#include <stddef.h>
#include <stdint.h>

#define XS_RUN_FILE "run.jsonl"

struct xs_runfile_scan {
	int *live;		/* caller's array of live_max pids */
	size_t live_max;
	size_t live_count;	/* out: started or exec'd, not ended (in order of start) */
	size_t live_dropped;	/* out: more than live_max were live */
	uint32_t last_window;	/* out: the highest run_window of a window line, 0 if none */
};

/* Scan size bytes of a run file. Lines of another shape are ignored. */
void xs_runfile_scan(const char *data, size_t size, struct xs_runfile_scan *s);

#endif
