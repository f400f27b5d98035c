/*
 * The perf.data writer: one profile file in the format `perf report` and
 * `perf script` read (the file format of perf 6.1, see
 * shared/notes/perf-data.md), written with raw system calls only, so the
 * runtime's service thread can drive it inside the program: no malloc, no
 * stdio, no locks. Its memory (a record buffer, the table of mapped files
 * for the build ids) is mmap'd by xs_perf_open and released by
 * xs_perf_close.
 *
 * Ownership: the caller owns struct xs_perf_file (any storage; nothing
 * points into it) and everything it passes in; the writer copies what it
 * keeps. One file is used by one thread at a time: the caller serializes.
 *
 * Every function returns 0 or a negative errno. The first error (ENOSPC,
 * EIO, ...) is sticky: later calls return it and write nothing, and the
 * file on disk stays exactly as valid as after the last successful flush
 * (its header only ever counts records that were completely written).
 *
 * Crash safety: xs_perf_flush writes the buffered records and rewrites the
 * header with their size, so a process killed after it (even with SIGKILL)
 * leaves a file perf reads up to that flush. Feature sections (build ids,
 * host, command line, event name, ...) are written by xs_perf_close only.
 *
 * Time: every record carries a time (sample_id_all); use one clock for all
 * of them (the config's clockid, CLOCK_MONOTONIC by default). perf sorts
 * records by time, so a mapping or COMM must carry a time no later than
 * the first sample that needs it (0 is always safe before the first
 * flush). Each xs_perf_flush ends a perf "round": perf then assumes no
 * later record is older than the newest record of the round before. The
 * writer enforces it: an older time is raised to that bound (counted in
 * xs_perf_stats.raised_times), so a late COMM or mmap with time 0 still
 * lands before the samples that follow it. Callers that flush after
 * draining every sample buffer never trigger it for samples.
 */
#ifndef XS_PROFILE_PERFDATA_H
#define XS_PROFILE_PERFDATA_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

/* sample_type presets, one per call-graph mode. */
#define XS_PERF_SAMPLE_NONE \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD)
#define XS_PERF_SAMPLE_FP (XS_PERF_SAMPLE_NONE | PERF_SAMPLE_CALLCHAIN)
#define XS_PERF_SAMPLE_DWARF \
	(XS_PERF_SAMPLE_FP | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
/* What the writer accepts: the presets, plus PERF_SAMPLE_CPU. */
#define XS_PERF_SAMPLE_SUPPORTED (XS_PERF_SAMPLE_DWARF | PERF_SAMPLE_CPU)

/* The registers perf record takes for DWARF unwinding (AX..SS, R8..R15). */
#define XS_PERF_REGS_MASK_DEFAULT 0xff0fffULL
/* Registers by perf number (enum perf_event_x86_regs), x86-64. */
#define XS_PERF_REG_COUNT 24
/* Largest stack copy one sample can carry (records are at most 64 KiB). */
#define XS_PERF_STACK_MAX 60000u

struct xs_perf_config {
	uint64_t sample_type;	/* XS_PERF_SAMPLE_* (required) */
	uint64_t period_ns;	/* sampling interval in ns of thread CPU time (required) */
	uint64_t regs_mask;	/* DWARF: registers; 0 = XS_PERF_REGS_MASK_DEFAULT */
	uint32_t stack_size;	/* DWARF: most stack bytes per sample; 0 = 8192 */
	int clockid;		/* clock of all record times; 0 = CLOCK_MONOTONIC */
	uint32_t buf_size;	/* record buffer; 0 = 64 KiB; at least 64 KiB */
	const char *event_name;	/* NULL = "task-clock:u" */
	/* The command line shown by `perf report --header-only`: words
	 * separated by NUL bytes, as /proc/self/cmdline has them
	 * (cmdline_size bytes), or one C string when cmdline_size is 0.
	 * NULL: none. At most 4096 bytes are kept. */
	const char *cmdline;
	size_t cmdline_size;
	const char *version;	/* NULL = "exitscope" (the "perf version" line) */
};

/* The writer's state. Treat as opaque; the caller provides the storage. */
struct xs_perf_file {
	int fd;
	int err;			/* first error, sticky */
	bool open;
	struct xs_perf_config cfg;	/* strings cleared; copies below */
	uint32_t nregs;
	unsigned char attr[PERF_ATTR_SIZE_VER7];
	uint64_t data_offset;		/* where the records start */
	uint64_t data_size;		/* complete records on disk */
	char *buf;			/* mmap: buf_size bytes of records, then scratch */
	size_t buf_size, buf_len;
	bool round_open;		/* records since the last FINISHED_ROUND */
	uint64_t samples, lost;
	uint64_t disk_samples;		/* of them, in the complete records */
	/* Flush points, so that a full disk can be given back at least
	 * XS_PERF_DISK_RESERVE bytes and not much more: the last 16 flushes
	 * that are at least XS_PERF_MARK_STEP apart (a ring; mark_next counts
	 * them), and the first one, the set-up records. */
	struct xs_perf_mark {
		uint64_t data_size, samples;
	} marks[16], mark_first;
	unsigned mark_next;
	uint64_t first_time, last_time;	/* of samples */
	uint64_t max_time;		/* newest record time so far */
	uint64_t round_max;		/* newest at the last round's end */
	uint64_t floor;			/* no record may be older (see above) */
	uint64_t raised_times;
	/* mmap: the mapped files for the BUILD_ID feature, then strings. */
	char *meta;
	size_t meta_len, meta_cap;
	uint32_t ndsos, build_id_errors;
	size_t event_name_off, cmdline_off, cmdline_len, version_off, dso_start;
};

/* What a sample carries. Fields the file's sample_type does not include
 * are ignored. */
struct xs_perf_sample {
	uint64_t ip;
	int pid, tid;
	uint64_t time;
	uint64_t period;		/* 0: the config's period_ns */
	uint32_t cpu;
	/* FP mode: the return addresses above ip, innermost first (ip itself
	 * is not repeated). The writer adds PERF_CONTEXT_USER and ip. */
	const uint64_t *callers;
	uint32_t ncallers;
	/* DWARF mode: the interrupted registers by perf number
	 * (XS_PERF_REG_COUNT values; see xs_perf_regs_from_gregs), or NULL
	 * for none (abi 0). The writer keeps the mask's registers. */
	const uint64_t *regs;
	/* DWARF mode: stack_size bytes copied from regs[SP] upwards (more
	 * than the config's stack_size are cut). */
	const void *stack;
	uint32_t stack_size;
};

struct xs_perf_stats {
	uint64_t samples;		/* sample records written */
	uint64_t lost;			/* samples reported lost */
	uint64_t bytes;			/* record bytes so far (written or buffered) */
	uint64_t raised_times;		/* record times raised to the round bound */
	uint32_t dsos;			/* files in the BUILD_ID table */
	uint32_t build_id_errors;	/* files whose build id could not be read */
};

/* Start a perf.data file on fd, a new empty file opened for writing (the
 * caller creates it, mode 0600: stack copies may hold secrets), and write
 * the header and the event description. f is initialized here and owns fd
 * from now on; on error fd is closed, nothing stays mapped, and the other
 * calls on f return the error (xs_perf_close: -EBADF). -EINVAL for a bad
 * config. The runtime should hide fd from the program like its other
 * descriptors. */
int xs_perf_open(struct xs_perf_file *f, int fd, const struct xs_perf_config *cfg);

/* A COMM record: thread tid of process pid is named comm (at most 15
 * bytes kept). Emit one for every thread, or perf shows it as ":tid". */
int xs_perf_comm(struct xs_perf_file *f, int pid, int tid, const char *comm, uint64_t time);

/* An MMAP2 record. filename: the path ("//anon", "[vdso]" for the
 * special ones); a " (deleted)" suffix is removed, as perf does. data:
 * a non-executable mapping (PERF_RECORD_MISC_MMAP_DATA); DWARF unwinding
 * needs the read-only ones of each file. A file (a path starting with
 * '/') is added to the BUILD_ID table, its build id read now, once per
 * file (failures only counted in the stats: a missing build id does not
 * stop the profile). */
int xs_perf_mmap2(struct xs_perf_file *f, int pid, int tid, uint64_t start, uint64_t len,
		  uint64_t pgoff, uint32_t maj, uint32_t min, uint64_t ino, uint32_t prot,
		  uint32_t flags, const char *filename, bool data, uint64_t time);

/* MMAP2 records for the calling process's mappings (/proc/self/maps) as
 * pid: every executable one (anonymous ones as "//anon"), and in DWARF
 * mode every readable file mapping as data; [vsyscall] and [vvar] are
 * left out. Deleted files are kept, named without " (deleted)". An error
 * reading /proc/self/maps is returned but does not stop the file. */
int xs_perf_maps(struct xs_perf_file *f, int pid, uint64_t time);

/* A SAMPLE record (see struct xs_perf_sample). */
int xs_perf_sample(struct xs_perf_file *f, const struct xs_perf_sample *s);

/* A LOST_SAMPLES record: lost samples that were taken but not written
 * (perf report shows them as "Total Lost Samples"). */
int xs_perf_lost(struct xs_perf_file *f, uint64_t lost, uint64_t time);

/* Write what is buffered, end the round, and rewrite the header with the
 * size of the complete records: the file opens in perf as it is now. Does
 * not fsync (a killed process's writes survive in the page cache). */
int xs_perf_flush(struct xs_perf_file *f);

/* Flush, write the feature sections (BUILD_ID, HOSTNAME, OSRELEASE,
 * VERSION, ARCH, NRCPUS, TOTAL_MEM, CMDLINE, EVENT_DESC, SAMPLE_TIME) and
 * the final header, fsync and close. Everything is released even on
 * error; the return value is the first error of the file's life (its
 * content is then what the last successful flush left). */
int xs_perf_close(struct xs_perf_file *f);

/* Release f's memory and descriptor without writing anything: for a fork
 * child, whose copy of f shares the parent's file (the parent completes
 * it; the child opens its own). */
void xs_perf_abandon(struct xs_perf_file *f);

/* Samples written (buffered ones included). */
uint64_t xs_perf_samples(const struct xs_perf_file *f);
void xs_perf_stats(const struct xs_perf_file *f, struct xs_perf_stats *out);

/* The interrupted registers of a signal handler's context, by perf
 * number, for xs_perf_sample's regs. No system calls. */
void xs_perf_regs_from_gregs(const greg_t *g, uint64_t regs[XS_PERF_REG_COUNT]);

#endif
