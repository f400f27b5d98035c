/*
 * Folding CPU profile samples into a call tree, the model behind
 * `exitscope flame` and the flame graphs of `exitscope report --html`.
 *
 * A tree holds one or two sides: side 0 (a single profile, or BASE of a
 * diff) and side 1 (NEW of a diff). Each node is one frame on one call
 * path from the root (outermost caller) to a leaf, with the number of
 * samples whose stack passes through it (inclusive) and ends in it
 * (self), per side. Frames are symbolized by perf itself: a .data file is
 * read through `perf script`, whose unwinding (frame pointers or DWARF)
 * and symbol lookup are the ones `perf report` uses.
 *
 * Ownership: a struct xs_fold owns every frame name and node; pointers
 * into it are valid until xs_fold_release(). Functions return 0 or a
 * negative errno and, on a bad input, say why in fold->msg (without the
 * file name, which the caller prints).
 */
#ifndef XS_CLI_FOLD_H
#define XS_CLI_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "common/buf.h"

#define XS_FOLD_MAX_DEPTH 1024		/* deeper stacks keep their outermost frames */

/*
 * Bounds on what one input may cost, whoever wrote it (a profiled program
 * names its own functions and threads): a longer line, more frames, names
 * or call paths, or more text is an error (-E2BIG, with fold->msg), not
 * an unbounded allocation. A line of 1 MiB holds a 1024-frame folded
 * stack of 1 KiB names; one sample's call chain holds at most 65536 frames
 * and 16 MiB of names; the frame and path counts keep a tree under about
 * 500 MiB; 16 GiB of perf script text is over 10 million DWARF samples,
 * far more than a graph can show.
 */
#define XS_FOLD_MAX_LINE (1 << 20)
#define XS_FOLD_MAX_CHAIN 65536
#define XS_FOLD_MAX_CHAIN_SIZE (16 << 20)
#define XS_FOLD_MAX_NODES (4 << 20)
#define XS_FOLD_MAX_NAME_SIZE (128 << 20)
#define XS_FOLD_MAX_TEXT_SIZE (16ull << 30)

struct xs_fold_frame {
	const char *name;		/* function, "[unknown]", or a thread name */
	const char *dso;		/* library basename; "" when unknown (folded input) */
	bool inlined;
	bool thread;			/* the per-thread root frame (--per-thread) */
};

struct xs_fold_node {
	uint32_t frame;			/* index into frames; the root has none */
	uint32_t parent;
	uint32_t first_child;		/* 0: none (node 0 is the root, never a child) */
	uint32_t next_sibling;
	uint32_t depth;			/* root 0, outermost frames 1 */
	uint64_t total[2];		/* inclusive samples per side */
	uint64_t self[2];
};

struct xs_fold {
	bool per_thread;		/* add the thread name as the outermost frame */
	struct xs_fold_frame *frames;
	size_t frame_count, frame_cap;
	struct xs_fold_node *nodes;	/* nodes[0] is the root */
	size_t node_count, node_cap;
	/* open-addressing indexes: frame identity -> frame, (parent, frame) -> node */
	uint32_t *frame_index, *child_index;
	size_t frame_index_cap, child_index_cap;
	size_t name_size;		/* bytes of frame names and libraries held */
	uint64_t truncated_stacks;	/* stacks cut at XS_FOLD_MAX_DEPTH */
	char msg[256];
};

int xs_fold_init(struct xs_fold *f, bool per_thread);
void xs_fold_release(struct xs_fold *f);

/* Intern a frame; returns its index or a negative errno. */
int64_t xs_fold_frame_id(struct xs_fold *f, const struct xs_fold_frame *fr);

/* Add count samples on side of one stack, frames[0] the outermost. */
int xs_fold_add(struct xs_fold *f, int side, const uint32_t *frames, size_t depth, uint64_t count);

/*
 * Read `perf script -F comm,tid,period,ip,sym,dso` output (with or without
 * call chains) from in onto side. -EINVAL with fold->msg ("line N: ...")
 * for text that is not perf script output.
 */
int xs_fold_read_script(struct xs_fold *f, int side, FILE *in);

/* Read folded stacks ("a [lib];b [lib] COUNT" per line) onto side;
 * -EINVAL with fold->msg ("line N: ...") for a malformed line. */
int xs_fold_read_folded(struct xs_fold *f, int side, FILE *in);

/*
 * Check that path is a complete perf.data file: -EINVAL with fold->msg
 * ("byte 0: not a perf.data file", "truncated: ...") when it is not, or
 * the negative errno of opening or reading it.
 */
int xs_fold_check_perf_data(struct xs_fold *f, const char *path);

/*
 * Fold a profile file onto side: a perf.data file (recognised by its
 * magic, or named *.data) through `perf script` (the program named by $PERF, else "perf"),
 * or any other file as folded stacks. fold->msg says why on failure,
 * including perf's own complaint.
 */
int xs_fold_read_file(struct xs_fold *f, int side, const char *path);

/*
 * The same for a file the caller opened (and keeps): perf script reads it
 * as /proc/self/fd/N, so what is folded is the file that was checked,
 * whatever its name points to by then. perf_data: read it as perf.data
 * even without the magic.
 */
int xs_fold_read_fd(struct xs_fold *f, int side, int fd, bool perf_data);

/* Sort every node's children by frame name (then library), as flame
 * graphs order them; call once after the last add. */
void xs_fold_sort(struct xs_fold *f);

/* Append frame i as folded text: "name [dso]" (" (inlined)" after an
 * inlined frame; ';' in names becomes ':'). */
void xs_fold_frame_text(struct xs_buf *out, const struct xs_fold *f, uint32_t frame);

/* Folded stacks of a sorted tree: per leaf-ending path, "stack COUNT" for
 * one side, or "stack BASE NEW" for both (diff). */
void xs_fold_print_folded(struct xs_buf *out, const struct xs_fold *f, bool both_sides);

/*
 * One line per node of a sorted tree, depth first: the path, then its
 * inclusive and self samples; with both sides, BASE and NEW inclusive
 * counts, their shares of their side's samples in percent, and the change
 * in percentage points, all with 4 decimals:
 *   "PATH\tBASE\tNEW\tBASE%\tNEW%\tDELTA_PP"
 */
void xs_fold_print_frames(struct xs_buf *out, const struct xs_fold *f, bool both_sides);

/* Share of a node on side in parts per million of the side's samples. */
double xs_fold_share(const struct xs_fold *f, uint32_t node, int side);

#endif
