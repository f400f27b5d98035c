/*
 * Folding profile samples into a call tree (see fold.h): interning frames,
 * growing the tree, and the three inputs (perf script text, folded text,
 * perf.data through `perf script`).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli/fold.h"

#define NO_FRAME UINT32_MAX

static int fail(struct xs_fold *f, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct xs_fold *f, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	return err;
}

/* The message for a failed xs_fold_frame_id() or tree growth. */
static int frame_fail(struct xs_fold *f, int err)
{
	if (err == -E2BIG)
		return fail(f, err, "more than %d frames, %d MiB of frame names or %d call paths: too large to draw",
			    XS_FOLD_MAX_NODES, XS_FOLD_MAX_NAME_SIZE >> 20, XS_FOLD_MAX_NODES);
	return fail(f, err, "out of memory");
}

/*
 * Read one line of at most XS_FOLD_MAX_LINE bytes into *line (grown as
 * needed, NUL-terminated, newline kept). Returns its length, -1 at the
 * end of input, -E2BIG for a longer line: a file with no newline (or
 * /dev/zero) must not grow the buffer without bound.
 */
static ssize_t read_line(FILE *in, char **line, size_t *cap)
{
	size_t n = 0;
	int c;
	while ((c = getc_unlocked(in)) != EOF) {
		if (n + 2 > *cap) {
			if (n + 2 > XS_FOLD_MAX_LINE)
				return -E2BIG;
			size_t ncap = *cap ? *cap * 2 : 256;
			char *grown = realloc(*line, ncap);
			if (!grown)
				return -ENOMEM;
			*line = grown;
			*cap = ncap;
		}
		(*line)[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (!n)
		return -1;
	(*line)[n] = 0;
	return (ssize_t)n;
}

static int line_fail(struct xs_fold *f, int err, size_t lineno)
{
	if (err == -E2BIG)
		return fail(f, err, "line %zu: longer than %d KiB", lineno, XS_FOLD_MAX_LINE >> 10);
	return fail(f, err, "out of memory");
}

static uint64_t hash_bytes(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t frame_hash(const struct xs_fold_frame *fr)
{
	uint64_t h = hash_bytes(0xcbf29ce484222325ull, fr->name, strlen(fr->name) + 1);
	h = hash_bytes(h, fr->dso, strlen(fr->dso) + 1);
	return h ^ (fr->inlined ? 0x9e3779b97f4a7c15ull : 0) ^ (fr->thread ? 0xc2b2ae3d27d4eb4full : 0);
}

static bool frame_equal(const struct xs_fold_frame *a, const struct xs_fold_frame *b)
{
	return a->inlined == b->inlined && a->thread == b->thread && !strcmp(a->name, b->name) &&
	       !strcmp(a->dso, b->dso);
}

static uint64_t child_hash(uint32_t parent, uint32_t frame)
{
	uint64_t h = ((uint64_t)parent << 32 | frame) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* Rebuild an index of cap slots (a power of two) holding count entries. */
static int index_grow(struct xs_fold *f, uint32_t **index, size_t *cap, size_t count, bool frames)
{
	if ((count + 1) * 2 <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 1024;
	uint32_t *n = malloc(ncap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memset(n, 0xff, ncap * sizeof(*n));
	for (size_t i = 0; i < *cap; i++) {
		uint32_t v = (*index)[i];
		if (v == UINT32_MAX)
			continue;
		uint64_t h = frames ? frame_hash(&f->frames[v])
				    : child_hash(f->nodes[v].parent, f->nodes[v].frame);
		size_t j = h & (ncap - 1);
		while (n[j] != UINT32_MAX)
			j = (j + 1) & (ncap - 1);
		n[j] = v;
	}
	free(*index);
	*index = n;
	*cap = ncap;
	return 0;
}

static int grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 256;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

int xs_fold_init(struct xs_fold *f, bool per_thread)
{
	memset(f, 0, sizeof(*f));
	f->per_thread = per_thread;
	if (grow_array((void **)&f->nodes, &f->node_cap, 1, sizeof(*f->nodes)) < 0)
		return -ENOMEM;
	memset(&f->nodes[0], 0, sizeof(f->nodes[0]));
	f->nodes[0].frame = NO_FRAME;
	f->node_count = 1;
	return 0;
}

void xs_fold_release(struct xs_fold *f)
{
	for (size_t i = 0; i < f->frame_count; i++)
		free((char *)f->frames[i].name);
	free(f->frames);
	free(f->nodes);
	free(f->frame_index);
	free(f->child_index);
	memset(f, 0, sizeof(*f));
}

int64_t xs_fold_frame_id(struct xs_fold *f, const struct xs_fold_frame *fr)
{
	if (f->frame_index_cap) {
		size_t mask = f->frame_index_cap - 1;
		for (size_t j = frame_hash(fr) & mask; f->frame_index[j] != UINT32_MAX; j = (j + 1) & mask)
			if (frame_equal(&f->frames[f->frame_index[j]], fr))
				return f->frame_index[j];
	}
	/* one allocation holds "name\0dso\0" */
	size_t nlen = strlen(fr->name), dlen = strlen(fr->dso);
	if (f->frame_count >= XS_FOLD_MAX_NODES || f->name_size + nlen + dlen + 2 > XS_FOLD_MAX_NAME_SIZE)
		return -E2BIG;
	if (index_grow(f, &f->frame_index, &f->frame_index_cap, f->frame_count, true) < 0 ||
	    grow_array((void **)&f->frames, &f->frame_cap, f->frame_count + 1, sizeof(*f->frames)) < 0)
		return -ENOMEM;
	char *s = malloc(nlen + dlen + 2);
	if (!s)
		return -ENOMEM;
	memcpy(s, fr->name, nlen + 1);
	memcpy(s + nlen + 1, fr->dso, dlen + 1);
	f->name_size += nlen + dlen + 2;
	uint32_t id = (uint32_t)f->frame_count++;
	f->frames[id] = (struct xs_fold_frame){ s, s + nlen + 1, fr->inlined, fr->thread };
	size_t mask = f->frame_index_cap - 1, j = frame_hash(fr) & mask;
	while (f->frame_index[j] != UINT32_MAX)
		j = (j + 1) & mask;
	f->frame_index[j] = id;
	return id;
}

static int64_t child_of(struct xs_fold *f, uint32_t parent, uint32_t frame)
{
	if (f->child_index_cap) {
		size_t mask = f->child_index_cap - 1;
		for (size_t j = child_hash(parent, frame) & mask; f->child_index[j] != UINT32_MAX; j = (j + 1) & mask) {
			const struct xs_fold_node *n = &f->nodes[f->child_index[j]];
			if (n->parent == parent && n->frame == frame)
				return f->child_index[j];
		}
	}
	if (f->node_count >= XS_FOLD_MAX_NODES)
		return -E2BIG;
	if (index_grow(f, &f->child_index, &f->child_index_cap, f->node_count, false) < 0 ||
	    grow_array((void **)&f->nodes, &f->node_cap, f->node_count + 1, sizeof(*f->nodes)) < 0)
		return -ENOMEM;
	uint32_t id = (uint32_t)f->node_count++;
	struct xs_fold_node *n = &f->nodes[id];
	memset(n, 0, sizeof(*n));
	n->frame = frame;
	n->parent = parent;
	n->depth = f->nodes[parent].depth + 1;
	n->next_sibling = f->nodes[parent].first_child;
	f->nodes[parent].first_child = id;
	size_t mask = f->child_index_cap - 1, j = child_hash(parent, frame) & mask;
	while (f->child_index[j] != UINT32_MAX)
		j = (j + 1) & mask;
	f->child_index[j] = id;
	return id;
}

int xs_fold_add(struct xs_fold *f, int side, const uint32_t *frames, size_t depth, uint64_t count)
{
	uint32_t at = 0;
	f->nodes[0].total[side] += count;
	for (size_t i = 0; i < depth; i++) {
		int64_t c = child_of(f, at, frames[i]);
		if (c < 0)
			return frame_fail(f, (int)c);
		at = (uint32_t)c;
		f->nodes[at].total[side] += count;
	}
	f->nodes[at].self[side] += count;
	return 0;
}

/* --- perf script text --- */

struct raw_frame {
	uint64_t ip;
	char *name;
	char *dso;		/* basename, or "inlined" until resolved */
};

struct sample {
	char comm[64];
	bool open;
	struct raw_frame *frames;	/* leaf first, as perf prints them */
	size_t count, cap;
	size_t size;			/* bytes of the frames' names */
	uint32_t *ids;			/* outermost first, for xs_fold_add */
	size_t ids_cap;
};

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/* Split "SYM (DSO)" in place; false when there is no "(DSO)" at the end. */
static bool split_sym_dso(char *s, char **sym, char **dso)
{
	size_t n = strlen(s);
	if (!n || s[n - 1] != ')')
		return false;
	char *open = NULL;
	for (char *p = s + n - 1; p > s; p--)
		if (p[-1] == ' ' && *p == '(') {
			open = p;
			break;
		}
	if (!open)
		return false;
	s[n - 1] = 0;
	open[-1] = 0;
	*dso = open + 1;
	*sym = trim(s);
	return true;
}

static bool all_digits(const char *s, size_t n, bool hex)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!(c >= '0' && c <= '9') && !(hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))))
			return false;
	}
	return true;
}

static int sample_push(struct xs_fold *f, struct sample *s, uint64_t ip, const char *name, const char *dso)
{
	s->size += strlen(name) + strlen(dso) + 2;
	if (s->count >= XS_FOLD_MAX_CHAIN || s->size > XS_FOLD_MAX_CHAIN_SIZE)
		return fail(f, -E2BIG, "a call chain of more than %d frames or %d MiB: too large to draw",
			    XS_FOLD_MAX_CHAIN, XS_FOLD_MAX_CHAIN_SIZE >> 20);
	if (grow_array((void **)&s->frames, &s->cap, s->count + 1, sizeof(*s->frames)) < 0)
		return fail(f, -ENOMEM, "out of memory");
	struct raw_frame *r = &s->frames[s->count];
	r->ip = ip;
	r->name = strdup(name[0] ? name : "[unknown]");
	r->dso = strdup(strcmp(dso, "[unknown]") ? basename_of(dso) : "");
	if (!r->name || !r->dso) {
		free(r->name);
		free(r->dso);
		return fail(f, -ENOMEM, "out of memory");
	}
	s->count++;
	return 0;
}

static void sample_clear(struct sample *s)
{
	for (size_t i = 0; i < s->count; i++) {
		free(s->frames[i].name);
		free(s->frames[i].dso);
	}
	s->count = 0;
	s->size = 0;
	s->open = false;
}

/* Add the sample read so far to the tree. */
static int sample_flush(struct xs_fold *f, int side, struct sample *s)
{
	if (!s->open)
		return 0;
	if (!s->count && sample_push(f, s, 0, "[unknown]", "[unknown]") < 0)
		return -ENOMEM;
	/*
	 * perf's DWARF unwinding (libdw) repeats the leaf when a sample lands
	 * right after a `syscall` in glibc's cancellable read or write paths:
	 * "f838f __GI___libc_write" twice (or "f82ec __GI___libc_read
	 * (inlined)" twice), also in a plain `perf record --call-graph dwarf`
	 * of a threaded writer. A caller is printed at its return address
	 * minus one, so a real caller never prints the leaf's own address:
	 * drop that copy.
	 */
	if (s->count >= 2 && s->frames[0].ip == s->frames[1].ip && s->frames[0].ip &&
	    !strcmp(s->frames[0].name, s->frames[1].name) && !strcmp(s->frames[0].dso, s->frames[1].dso)) {
		free(s->frames[1].name);
		free(s->frames[1].dso);
		memmove(&s->frames[1], &s->frames[2], (s->count - 2) * sizeof(s->frames[0]));
		s->count--;
	}
	size_t depth = s->count + (f->per_thread ? 1 : 0);
	if (grow_array((void **)&s->ids, &s->ids_cap, depth, sizeof(*s->ids)) < 0)
		return fail(f, -ENOMEM, "out of memory");
	size_t n = 0;
	if (f->per_thread) {
		int64_t id = xs_fold_frame_id(f, &(struct xs_fold_frame){ s->comm, "", false, true });
		if (id < 0)
			return frame_fail(f, (int)id);
		s->ids[n++] = (uint32_t)id;
	}
	/* perf prints an inlined frame's library as "(inlined)"; it is the
	 * library of the real frame at the same address, when perf prints
	 * one, else unknown. */
	for (size_t k = s->count; k-- > 0;) {
		/* outermost (printed last) to leaf */
		struct raw_frame *r = &s->frames[k];
		bool inlined = !strcmp(r->dso, "inlined");
		const char *owner = "";
		for (size_t j = k + 1; inlined && j < s->count && s->frames[j].ip == r->ip; j++)
			if (strcmp(s->frames[j].dso, "inlined")) {
				owner = s->frames[j].dso;
				break;
			}
		int64_t id = xs_fold_frame_id(f, &(struct xs_fold_frame){ r->name, inlined ? owner : r->dso,
									  inlined, false });
		if (id < 0)
			return frame_fail(f, (int)id);
		s->ids[n++] = (uint32_t)id;
	}
	if (n > XS_FOLD_MAX_DEPTH) {
		n = XS_FOLD_MAX_DEPTH;
		f->truncated_stacks++;
	}
	int err = xs_fold_add(f, side, s->ids, n, 1);
	sample_clear(s);
	return err;
}

static void set_comm(struct sample *s, const char *from, const char *to)
{
	size_t n = (size_t)(to - from);
	if (n >= sizeof(s->comm))
		n = sizeof(s->comm) - 1;
	memcpy(s->comm, from, n);
	s->comm[n] = 0;
	s->open = true;
}

/*
 * A sample's first line: "COMM TID PERIOD" when call chain lines follow,
 * or "COMM TID PERIOD IP SYM (DSO)" without call chains. COMM and SYM may
 * hold spaces and digits: the first form is known by its two trailing
 * decimals; in the second, the rightmost "TID PERIOD IP" wins.
 */
static int parse_header(struct xs_fold *f, struct sample *s, char *line, size_t lineno)
{
	char *tok[128];
	size_t tok_len[128], ntok = 0;
	for (char *p = line; *p && ntok < 128;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		tok[ntok] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		tok_len[ntok] = (size_t)(p - tok[ntok]);
		ntok++;
	}
	if (ntok >= 3 && all_digits(tok[ntok - 1], tok_len[ntok - 1], false) &&
	    all_digits(tok[ntok - 2], tok_len[ntok - 2], false)) {
		set_comm(s, tok[0], tok[ntok - 3] + tok_len[ntok - 3]);
		return 0;
	}
	for (size_t i = ntok >= 4 ? ntok - 4 : 0; i >= 1 && i + 3 < ntok; i--) {
		char *sym, *dso;
		if (!all_digits(tok[i], tok_len[i], false) || !all_digits(tok[i + 1], tok_len[i + 1], false) ||
		    !all_digits(tok[i + 2], tok_len[i + 2], true))
			continue;
		uint64_t ip = strtoull(tok[i + 2], NULL, 16);
		char *comm_end = tok[i - 1] + tok_len[i - 1];
		if (!split_sym_dso(tok[i + 2] + tok_len[i + 2], &sym, &dso))
			break;
		set_comm(s, tok[0], comm_end);
		return sample_push(f, s, ip, sym, dso);
	}
	return fail(f, -EINVAL, "line %zu: expected a sample's 'COMM TID PERIOD' line", lineno);
}

/* A call chain line: "\tIP SYM (DSO)". */
static int parse_frame(struct xs_fold *f, struct sample *s, char *line, size_t lineno)
{
	char *p = trim(line), *sym, *dso;
	size_t iplen = strcspn(p, " \t");
	if (!s->open || !all_digits(p, iplen, true) || !split_sym_dso(p + iplen, &sym, &dso))
		return fail(f, -EINVAL, "line %zu: expected a call chain line 'IP SYMBOL (LIBRARY)'", lineno);
	return sample_push(f, s, strtoull(p, NULL, 16), sym, dso);
}

int xs_fold_read_script(struct xs_fold *f, int side, FILE *in)
{
	struct sample s = { 0 };
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int err = 0;
	uint64_t size = 0;
	while (!err && (n = read_line(in, &line, &cap)) >= 0) {
		lineno++;
		if ((size += (uint64_t)n) > XS_FOLD_MAX_TEXT_SIZE) {
			err = fail(f, -E2BIG, "line %zu: more than %llu GiB of text: too large to draw", lineno,
				   (unsigned long long)(XS_FOLD_MAX_TEXT_SIZE >> 30));
			break;
		}
		if (memchr(line, 0, (size_t)n)) {
			err = fail(f, -EINVAL, "line %zu: a NUL byte: not perf script output", lineno);
			break;
		}
		if (line[0] == '\t')
			err = parse_frame(f, &s, line, lineno);
		else if (!*trim(line))
			err = sample_flush(f, side, &s);
		else if (!(err = sample_flush(f, side, &s)))
			err = parse_header(f, &s, line, lineno);
	}
	if (!err && n < -1)
		err = line_fail(f, (int)n, lineno + 1);
	if (!err && ferror(in))
		err = fail(f, -EIO, "read error");
	if (!err)
		err = sample_flush(f, side, &s);
	sample_clear(&s);
	free(s.frames);
	free(s.ids);
	free(line);
	return err;
}

/* --- folded text --- */

/* Parse one folded frame "NAME [DSO]", "NAME [DSO] (inlined)", "NAME [thread]" or "NAME". */
static void parse_folded_frame(char *text, struct xs_fold_frame *fr)
{
	*fr = (struct xs_fold_frame){ text, "", false, false };
	size_t n = strlen(text);
	static const char inl[] = " (inlined)";
	if (n > sizeof(inl) - 1 && !strcmp(text + n - (sizeof(inl) - 1), inl)) {
		n -= sizeof(inl) - 1;
		text[n] = 0;
		fr->inlined = true;
	}
	if (n < 4 || text[n - 1] != ']')
		return;
	char *open = strrchr(text, '[');
	if (!open || open == text || open[-1] != ' ')
		return;
	text[n - 1] = 0;
	open[-1] = 0;
	fr->dso = open + 1;
	if (!strcmp(fr->dso, "thread") && !fr->inlined) {
		fr->dso = "";
		fr->thread = true;
	}
}

int xs_fold_read_folded(struct xs_fold *f, int side, FILE *in)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	uint32_t *ids = NULL;
	size_t ids_cap = 0;
	ssize_t n;
	int err = 0;
	uint64_t size = 0;
	while (!err && (n = read_line(in, &line, &cap)) >= 0) {
		lineno++;
		if ((size += (uint64_t)n) > XS_FOLD_MAX_TEXT_SIZE) {
			err = fail(f, -E2BIG, "line %zu: more than %llu GiB of text: too large to draw", lineno,
				   (unsigned long long)(XS_FOLD_MAX_TEXT_SIZE >> 30));
			break;
		}
		if (memchr(line, 0, (size_t)n)) {
			err = fail(f, -EINVAL, "line %zu: a NUL byte: not folded stacks", lineno);
			break;
		}
		char *text = trim(line);
		if (!*text || *text == '#')
			continue;
		char *sp = strrchr(text, ' ');
		char *end = NULL;
		errno = 0;
		unsigned long long count = sp ? strtoull(sp + 1, &end, 10) : 0;
		if (!sp || !all_digits(sp + 1, strlen(sp + 1), false) || errno || *end) {
			err = fail(f, -EINVAL, "line %zu: expected 'FRAME;FRAME;... COUNT'", lineno);
			break;
		}
		*sp = 0;
		size_t depth = 0;
		for (char *fr = text; fr;) {
			char *semi = strchr(fr, ';');
			if (semi)
				*semi = 0;
			struct xs_fold_frame frame;
			parse_folded_frame(fr, &frame);
			if (!*frame.name) {
				err = fail(f, -EINVAL, "line %zu: an empty frame", lineno);
				break;
			}
			int64_t id = xs_fold_frame_id(f, &frame);
			if (id < 0) {
				err = frame_fail(f, (int)id);
				break;
			}
			if (grow_array((void **)&ids, &ids_cap, depth + 1, sizeof(*ids)) < 0) {
				err = fail(f, -ENOMEM, "out of memory");
				break;
			}
			ids[depth++] = (uint32_t)id;
			fr = semi ? semi + 1 : NULL;
		}
		if (!err && depth > XS_FOLD_MAX_DEPTH) {
			depth = XS_FOLD_MAX_DEPTH;
			f->truncated_stacks++;
		}
		if (!err)
			err = xs_fold_add(f, side, ids, depth, count);
	}
	if (!err && n < -1)
		err = line_fail(f, (int)n, lineno + 1);
	if (!err && ferror(in))
		err = fail(f, -EIO, "read error");
	free(ids);
	free(line);
	return err;
}

/* --- perf.data --- */

struct file_section {
	uint64_t offset, size;
};

/* The fixed part of a perf.data header (tools/perf/util/header.h). */
struct perf_header {
	char magic[8];
	uint64_t size;
	uint64_t attr_size;
	struct file_section attrs, data, event_types;
	uint64_t features[4];
};

static int check_section(struct xs_fold *f, const char *what, const struct file_section *sec, uint64_t file_size)
{
	if (sec->offset > file_size || sec->size > file_size - sec->offset)
		return fail(f, -EINVAL,
			    "truncated: the %s section runs to byte %llu but the file ends at byte %llu", what,
			    (unsigned long long)(sec->offset + sec->size), (unsigned long long)file_size);
	return 0;
}

static int check_perf_data_fd(struct xs_fold *f, int fd)
{
	struct stat st;
	struct perf_header h;
	int err = 0;
	if (fstat(fd, &st) < 0) {
		err = fail(f, -errno, "%s", strerror(errno));
		goto out_close;
	}
	if (S_ISDIR(st.st_mode)) {
		err = fail(f, -EISDIR, "is a directory");
		goto out_close;
	}
	ssize_t got = pread(fd, &h, sizeof(h), 0);
	if (got < 0) {
		err = fail(f, -errno, "%s", strerror(errno));
		goto out_close;
	}
	if (got < 8 || memcmp(h.magic, "PERFILE2", 8)) {
		err = fail(f, -EINVAL, "byte 0: not a perf.data file (no PERFILE2 magic)");
		goto out_close;
	}
	if (got >= 16 && h.size == 16) {
		err = fail(f, -EINVAL, "byte 8: a pipe-mode perf.data file; convert it with 'perf inject -o'");
		goto out_close;
	}
	if ((size_t)got < sizeof(h)) {
		err = fail(f, -EINVAL, "truncated: %zd bytes, shorter than a perf.data header (%zu)", got,
			   sizeof(h));
		goto out_close;
	}
	if (h.size != sizeof(h)) {
		err = fail(f, -EINVAL, "byte 8: header size %llu, expected %zu", (unsigned long long)h.size,
			   sizeof(h));
		goto out_close;
	}
	uint64_t size = (uint64_t)st.st_size;
	if ((err = check_section(f, "attribute", &h.attrs, size)) < 0 ||
	    (err = check_section(f, "data", &h.data, size)) < 0)
		goto out_close;
	/* the feature sections' table follows the data section */
	uint64_t table = h.data.offset + h.data.size;
	for (int bit = 0; bit < 256; bit++) {
		if (!(h.features[bit / 64] >> (bit % 64) & 1))
			continue;
		struct file_section sec;
		if (pread(fd, &sec, sizeof(sec), (off_t)table) != (ssize_t)sizeof(sec)) {
			err = fail(f, -EINVAL, "truncated: the feature table ends past byte %llu (file size %llu)",
				   (unsigned long long)table, (unsigned long long)size);
			goto out_close;
		}
		char what[32];
		snprintf(what, sizeof(what), "feature %d", bit);
		if ((err = check_section(f, what, &sec, size)) < 0)
			goto out_close;
		table += sizeof(sec);
	}
out_close:
	return err;
}

int xs_fold_check_perf_data(struct xs_fold *f, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(f, -errno, "%s", strerror(errno));
	int err = check_perf_data_fd(f, fd);
	close(fd);
	return err;
}

/* Keep the last lines of perf's complaint, on one line, in msg. */
static void perf_complaint(struct xs_fold *f, FILE *err_file, const char *what)
{
	char text[4096];
	size_t n = 0;
	rewind(err_file);
	n = fread(text, 1, sizeof(text) - 1, err_file);
	text[n] = 0;
	for (char *p = text; *p; p++)
		if (*p == '\n')
			*p = *(p + 1) ? ' ' : 0;
	char *t = trim(text);
	if (strlen(t) > 160)
		t += strlen(t) - 160;
	fail(f, -EINVAL, "%s%s%s", what, *t ? ": " : "", t);
}

/* perf script of the perf.data file open at fd, which perf opens as path,
 * or as /proc/self/fd/N when path is NULL. */
static int read_perf_data(struct xs_fold *f, int side, int fd, const char *path)
{
	int err = check_perf_data_fd(f, fd);
	if (err < 0)
		return err;
	char fd_path[32];
	if (!path) {
		snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", fd);
		path = fd_path;
	}
	const char *perf = getenv("PERF");
	if (!perf || !*perf)
		perf = "perf";
	FILE *err_file = tmpfile();
	int pipefd[2];
	if (!err_file)
		return fail(f, -errno, "cannot make a temporary file: %s", strerror(errno));
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		err = fail(f, -errno, "pipe: %s", strerror(errno));
		goto out_close;
	}
	pid_t pid = fork();
	if (pid < 0) {
		err = fail(f, -errno, "fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		goto out_close;
	}
	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(fileno(err_file), 2);
		if (path == fd_path)
			fcntl(fd, F_SETFD, 0);	/* perf opens it by number */
		execlp(perf, perf, "script", "-i", path, "-F", "comm,tid,period,ip,sym,dso", (char *)NULL);
		fprintf(stderr, "cannot run '%s': %s (perf comes with Debian's linux-perf package)", perf,
			strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	FILE *in = fdopen(pipefd[0], "r");
	if (!in) {
		close(pipefd[0]);
		kill(pid, SIGKILL);
		err = fail(f, -ENOMEM, "out of memory");
	} else {
		err = xs_fold_read_script(f, side, in);
		if (err < 0)
			kill(pid, SIGKILL);
		fclose(in);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!err && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		char what[64];
		if (WIFEXITED(status))
			snprintf(what, sizeof(what), "perf script failed (status %d)", WEXITSTATUS(status));
		else
			snprintf(what, sizeof(what), "perf script died of signal %d", WTERMSIG(status));
		perf_complaint(f, err_file, what);
		err = -EINVAL;
	} else if (err == -EINVAL) {
		char why[sizeof(f->msg)];
		memcpy(why, f->msg, sizeof(why));
		fail(f, err, "perf script printed what exitscope cannot read (%.200s)", why);
	}
out_close:
	fclose(err_file);
	return err;
}

/* Fold fd (at offset 0) as perf.data when it has the magic or data_name
 * says so, else as folded stacks; perf opens perf_path (NULL: fd itself). */
static int read_fd(struct xs_fold *f, int side, int fd, bool data_name, const char *perf_path)
{
	char magic[8] = { 0 };
	ssize_t got = pread(fd, magic, sizeof(magic), 0);
	if (got < 0)
		return fail(f, -errno, "%s", strerror(errno));
	if ((got == sizeof(magic) && !memcmp(magic, "PERFILE2", 8)) || data_name)
		return read_perf_data(f, side, fd, perf_path);
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	FILE *in = copy < 0 ? NULL : fdopen(copy, "r");
	if (!in) {
		if (copy >= 0)
			close(copy);
		return fail(f, -ENOMEM, "out of memory");
	}
	int err = xs_fold_read_folded(f, side, in);
	fclose(in);
	return err;
}

int xs_fold_read_file(struct xs_fold *f, int side, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(f, -errno, "%s", strerror(errno));
	size_t len = strlen(path);
	int err = read_fd(f, side, fd, len > 5 && !strcmp(path + len - 5, ".data"), path);
	close(fd);
	return err;
}

int xs_fold_read_fd(struct xs_fold *f, int side, int fd, bool perf_data)
{
	return read_fd(f, side, fd, perf_data, NULL);
}

/* --- output --- */

static int compare_nodes(const void *x, const void *y, void *fold)
{
	const struct xs_fold *f = fold;
	const struct xs_fold_frame *a = &f->frames[f->nodes[*(const uint32_t *)x].frame];
	const struct xs_fold_frame *b = &f->frames[f->nodes[*(const uint32_t *)y].frame];
	int c = strcmp(a->name, b->name);
	if (!c)
		c = strcmp(a->dso, b->dso);
	if (!c)
		c = (int)a->inlined - (int)b->inlined;
	return c;
}

void xs_fold_sort(struct xs_fold *f)
{
	uint32_t *kids = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < f->node_count; i++) {
		size_t n = 0;
		for (uint32_t c = f->nodes[i].first_child; c; c = f->nodes[c].next_sibling) {
			if (grow_array((void **)&kids, &cap, n + 1, sizeof(*kids)) < 0)
				goto out;	/* out of memory: the order stays as it was */
			kids[n++] = c;
		}
		if (n < 2)
			continue;
		qsort_r(kids, n, sizeof(*kids), compare_nodes, f);
		f->nodes[i].first_child = kids[0];
		for (size_t k = 0; k < n; k++)
			f->nodes[kids[k]].next_sibling = k + 1 < n ? kids[k + 1] : 0;
	}
out:
	free(kids);
}

void xs_fold_frame_text(struct xs_buf *out, const struct xs_fold *f, uint32_t frame)
{
	const struct xs_fold_frame *fr = &f->frames[frame];
	for (const char *p = fr->name; *p; p++)
		xs_buf_addc(out, *p == ';' ? ':' : *p);
	if (fr->thread) {
		xs_buf_add(out, " [thread]");
	} else if (*fr->dso) {
		xs_buf_add(out, " [");
		xs_buf_add(out, fr->dso);
		xs_buf_addc(out, ']');
	}
	if (fr->inlined)
		xs_buf_add(out, " (inlined)");
}

static void path_text(struct xs_buf *out, const struct xs_fold *f, uint32_t node)
{
	uint32_t chain[XS_FOLD_MAX_DEPTH + 1];
	size_t n = 0;
	for (uint32_t at = node; at && n < XS_FOLD_MAX_DEPTH + 1; at = f->nodes[at].parent)
		chain[n++] = at;
	while (n-- > 0) {
		xs_fold_frame_text(out, f, f->nodes[chain[n]].frame);
		if (n)
			xs_buf_addc(out, ';');
	}
}

double xs_fold_share(const struct xs_fold *f, uint32_t node, int side)
{
	uint64_t all = f->nodes[0].total[side];
	return all ? (double)f->nodes[node].total[side] * 1e6 / (double)all : 0;
}

static void add_fixed4(struct xs_buf *out, double v)
{
	char text[48];
	snprintf(text, sizeof(text), "%.4f", v);
	xs_buf_add(out, strcmp(text, "-0.0000") ? text : "0.0000");
}

/* Depth-first walk in child order, calling visit(node) for every node but the root. */
static void walk(const struct xs_fold *f, void (*visit)(struct xs_buf *, const struct xs_fold *, uint32_t, bool),
		 struct xs_buf *out, bool both)
{
	uint32_t at = f->nodes[0].first_child;
	while (at) {
		visit(out, f, at, both);
		if (f->nodes[at].first_child) {
			at = f->nodes[at].first_child;
			continue;
		}
		while (at && !f->nodes[at].next_sibling)
			at = f->nodes[at].parent;
		if (at)
			at = f->nodes[at].next_sibling;
	}
}

static void visit_folded(struct xs_buf *out, const struct xs_fold *f, uint32_t node, bool both)
{
	const struct xs_fold_node *n = &f->nodes[node];
	if (!n->self[0] && !(both && n->self[1]))
		return;
	path_text(out, f, node);
	xs_buf_addc(out, ' ');
	xs_buf_u64(out, n->self[0], 0);
	if (both) {
		xs_buf_addc(out, ' ');
		xs_buf_u64(out, n->self[1], 0);
	}
	xs_buf_addc(out, '\n');
}

static void visit_frames(struct xs_buf *out, const struct xs_fold *f, uint32_t node, bool both)
{
	const struct xs_fold_node *n = &f->nodes[node];
	path_text(out, f, node);
	xs_buf_addc(out, '\t');
	xs_buf_u64(out, n->total[0], 0);
	xs_buf_addc(out, '\t');
	if (!both) {
		xs_buf_u64(out, n->self[0], 0);
	} else {
		double base = xs_fold_share(f, node, 0) / 1e4, now = xs_fold_share(f, node, 1) / 1e4;
		xs_buf_u64(out, n->total[1], 0);
		xs_buf_addc(out, '\t');
		add_fixed4(out, base);
		xs_buf_addc(out, '\t');
		add_fixed4(out, now);
		xs_buf_addc(out, '\t');
		add_fixed4(out, now - base);
	}
	xs_buf_addc(out, '\n');
}

void xs_fold_print_folded(struct xs_buf *out, const struct xs_fold *f, bool both_sides)
{
	walk(f, visit_folded, out, both_sides);
}

void xs_fold_print_frames(struct xs_buf *out, const struct xs_fold *f, bool both_sides)
{
	walk(f, visit_frames, out, both_sides);
}
