/*
 * The perf.data writer (see perfdata.h for the contract). The file is
 *
 *   [file header, 104 bytes][one attr, 128 + 16 bytes][records ...]
 *   [feature index: {offset, size} per feature bit][feature payloads]
 *
 * Records are built in an mmap'd buffer and written with pwrite at the end
 * of the complete records; the header is rewritten after every write with
 * the data size of those records and no features, so the file is always
 * readable up to its last write. xs_perf_close appends the features after
 * the records and writes the final header. Layouts follow the kernel's
 * include/uapi/linux/perf_event.h and perf's util/header.c (perf 6.1).
 */
#include <asm/perf_regs.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include "runtime/runtime.h"
#include "runtime/profile/maps.h"
#include "runtime/profile/perfdata.h"

#define PERF_MAGIC2 0x32454c4946524550ULL /* "PERFILE2" */
#define ATTR_SIZE PERF_ATTR_SIZE_VER7	   /* perf 6.1 refuses larger attrs */
#define FILE_ATTR_SIZE (ATTR_SIZE + 16)	   /* attr + {offset, size} of its ids */
#define HEADER_SIZE 104
#define NAME_ALIGN 64			   /* strings in feature sections */
#define REC_MAX 65535			   /* perf_event_header.size is a u16 */
#define SCRATCH_MAPS 12288		   /* /proc/self/maps text */
#define SCRATCH_ELF 4096		   /* ELF headers and notes */
#define META_INITIAL 65536
#define STRINGS_MAX 4096		   /* cmdline and other kept strings */
#define PERF_RECORD_FINISHED_ROUND 68	   /* perf-internal record types */
#define PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15)

/* Feature bits (perf's enum in util/header.h). */
enum {
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_TOTAL_MEM = 10,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_SAMPLE_TIME = 21,
};
static const uint8_t k_features[] = {
	FEAT_BUILD_ID, FEAT_HOSTNAME, FEAT_OSRELEASE, FEAT_VERSION, FEAT_ARCH,
	FEAT_NRCPUS,   FEAT_TOTAL_MEM, FEAT_CMDLINE,  FEAT_EVENT_DESC, FEAT_SAMPLE_TIME,
};
#define NFEATURES (sizeof(k_features) / sizeof(k_features[0]))

struct file_section {
	uint64_t offset, size;
};

struct file_header {
	uint64_t magic, size, attr_size;
	struct file_section attrs, data, event_types;
	uint64_t features[4];
};
_Static_assert(sizeof(struct file_header) == HEADER_SIZE, "perf file header");
_Static_assert(sizeof(struct perf_event_attr) >= ATTR_SIZE, "attr size");

/* A file in the BUILD_ID table (in meta, after the kept strings). */
struct dso_entry {
	uint32_t size;		/* of the entry, name included, 8-aligned */
	uint32_t maj, min;
	uint32_t name_len;
	uint64_t ino;
	uint8_t bid_size;
	uint8_t bid[XS_BUILD_ID_MAX];
	char name[];
};

static inline uint64_t align8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

static size_t str_len(const char *s)
{
	return strlen(s);
}

#define XS_PERF_DISK_RESERVE (64 << 10)
#define XS_PERF_MARK_STEP (16 << 10)	/* 16 marks span 240 KiB at least */
#define XS_PERF_NMARKS (sizeof(((struct xs_perf_file *)0)->marks) / sizeof(struct xs_perf_mark))

static long header_write(struct xs_perf_file *f, const uint64_t features[4]);

/* The latest flush point at least XS_PERF_DISK_RESERVE bytes before the
 * end, but not before the first flush. */
static struct xs_perf_mark reserve_mark(const struct xs_perf_file *f)
{
	uint64_t limit = f->data_size > XS_PERF_DISK_RESERVE ? f->data_size - XS_PERF_DISK_RESERVE : 0;
	struct xs_perf_mark best = f->mark_first;
	for (unsigned i = 0; i < XS_PERF_NMARKS && i < f->mark_next; i++)
		if (f->marks[i].data_size <= limit && f->marks[i].data_size > best.data_size)
			best = f->marks[i];
	if (best.data_size > f->data_size)	/* nothing flushed yet */
		best = (struct xs_perf_mark){ f->data_size, f->disk_samples };
	return best;
}

/* Keep a flush point that follows a write-out (see reserve_mark). */
static void mark_flush(struct xs_perf_file *f)
{
	struct xs_perf_mark now = { f->data_size, f->samples };
	if (!f->mark_first.data_size)
		f->mark_first = now;
	if (f->mark_next &&
	    now.data_size - f->marks[(f->mark_next - 1) % XS_PERF_NMARKS].data_size < XS_PERF_MARK_STEP)
		return;
	f->marks[f->mark_next++ % XS_PERF_NMARKS] = now;
}

/*
 * The first error sticks, and the profile stops. The file is cut back to
 * its complete records (a failed write may have left part of one), with
 * the header and the sample count to match. On a full disk it is cut
 * further, to the latest flush point at least XS_PERF_DISK_RESERVE bytes
 * before its end (but never before its first flush, the set-up records
 * that make it readable): those blocks go to the stats records, which
 * matter more than the profile's last samples.
 */
static int fail(struct xs_perf_file *f, int err)
{
	if (f->err)
		return f->err;
	f->err = err;
	if (f->data_offset && f->fd >= 0) {
		struct xs_perf_mark keep = { f->data_size, f->disk_samples };
		if (err == -ENOSPC || err == -EDQUOT)
			keep = reserve_mark(f);
		f->data_size = keep.data_size;
		f->samples = f->disk_samples = keep.samples;
		f->buf_len = 0;
		header_write(f, NULL);	/* best effort: the error that stopped us is reported */
		xs_sys2(SYS_ftruncate, f->fd, f->data_offset + f->data_size);
	}
	return f->err;
}

static long pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
	size_t done = 0;
	while (done < n) {
		long r = xs_sys4(SYS_pwrite64, fd, (const char *)p + done, n - done, off + done);
		if (r == -EINTR)
			continue;
		if (r < 0)
			return r;
		if (r == 0)
			return -EIO;
		done += (size_t)r;
	}
	return 0;
}

/* ---- the header ---- */

static int write_header(struct xs_perf_file *f, const uint64_t features[4])
{
	long r = header_write(f, features);
	return r < 0 ? fail(f, (int)r) : 0;
}

/* The header as the file stands: 0 or a negative errno. */
static long header_write(struct xs_perf_file *f, const uint64_t features[4])
{
	struct file_header h;

	memset(&h, 0, sizeof(h));
	h.magic = PERF_MAGIC2;
	h.size = HEADER_SIZE;
	h.attr_size = FILE_ATTR_SIZE;
	h.attrs.offset = HEADER_SIZE;
	h.attrs.size = FILE_ATTR_SIZE;
	h.data.offset = f->data_offset;
	h.data.size = f->data_size;
	if (features)
		memcpy(h.features, features, sizeof(h.features));
	return pwrite_all(f->fd, &h, sizeof(h), 0);
}

/* Write the buffered records after the complete ones, then count them in
 * the header. On error the header keeps the previous size. */
static int write_out(struct xs_perf_file *f)
{
	long r;

	if (f->err)
		return f->err;
	if (!f->buf_len)
		return 0;
	r = pwrite_all(f->fd, f->buf, f->buf_len, f->data_offset + f->data_size);
	if (r < 0)
		return fail(f, (int)r);
	f->data_size += f->buf_len;
	f->buf_len = 0;
	f->disk_samples = f->samples;
	mark_flush(f);
	return write_header(f, NULL);
}

/* Room for one record of size bytes (8-aligned, at most REC_MAX) in the
 * buffer, zeroed; NULL after an error. */
static void *reserve(struct xs_perf_file *f, size_t size)
{
	char *p;

	if (!f->open)
		fail(f, -EBADF);
	if (f->err)
		return NULL;
	if (f->buf_len + size > f->buf_size && write_out(f) < 0)
		return NULL;
	p = f->buf + f->buf_len;
	memset(p, 0, size);
	f->buf_len += size;
	f->round_open = true;
	return p;
}

static void put_event_header(void *p, uint32_t type, uint16_t misc, size_t size)
{
	struct perf_event_header h = {.type = type, .misc = misc, .size = (uint16_t)size};
	memcpy(p, &h, sizeof(h));
}

/* ---- times and the sample-id trailer ---- */

/* The time a record gets: never older than the round bound. */
static uint64_t order_time(struct xs_perf_file *f, uint64_t t)
{
	if (t < f->floor) {
		t = f->floor;
		f->raised_times++;
	}
	if (t > f->max_time)
		f->max_time = t;
	return t;
}

static size_t trailer_size(const struct xs_perf_file *f)
{
	uint64_t st = f->cfg.sample_type;
	return 8 * (!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_CPU));
}

static char *put_u64(char *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

static char *put_u32x2(char *p, uint32_t a, uint32_t b)
{
	memcpy(p, &a, 4);
	memcpy(p + 4, &b, 4);
	return p + 8;
}

static char *put_trailer(const struct xs_perf_file *f, char *p, int pid, int tid, uint64_t time)
{
	uint64_t st = f->cfg.sample_type;
	if (st & PERF_SAMPLE_TID)
		p = put_u32x2(p, (uint32_t)pid, (uint32_t)tid);
	if (st & PERF_SAMPLE_TIME)
		p = put_u64(p, time);
	if (st & PERF_SAMPLE_CPU)
		p = put_u32x2(p, 0, 0);
	return p;
}

/* ---- meta: kept strings and the BUILD_ID table ---- */

static int meta_grow(struct xs_perf_file *f, size_t need)
{
	size_t cap = f->meta_cap;
	void *p;

	if (f->meta_len + need <= cap)
		return 0;
	while (cap < f->meta_len + need)
		cap *= 2;
	p = (void *)xs_sys5(SYS_mremap, f->meta, f->meta_cap, cap, MREMAP_MAYMOVE, 0);
	if ((long)p < 0 && (long)p > -4096)
		return (int)(long)p;
	f->meta = p;
	f->meta_cap = cap;
	return 0;
}

/* Keep n bytes of s plus a NUL in meta; the offset, or a negative errno. */
static long meta_keep(struct xs_perf_file *f, const char *s, size_t n)
{
	size_t off = f->meta_len;
	int r = meta_grow(f, align8(n + 1));
	if (r < 0)
		return r;
	memcpy(f->meta + off, s, n);
	f->meta[off + n] = '\0';
	f->meta_len += align8(n + 1);
	return (long)off;
}


static struct dso_entry *dso_next(struct xs_perf_file *f, size_t *off)
{
	struct dso_entry *e;
	if (*off >= f->meta_len)
		return NULL;
	e = (struct dso_entry *)(void *)(f->meta + *off);
	*off += e->size;
	return e;
}

static void dso_add(struct xs_perf_file *f, const char *name, size_t name_len, uint64_t start,
		    uint64_t end, uint32_t maj, uint32_t min, uint64_t ino, bool deleted)
{
	size_t off = f->dso_start, size;
	struct dso_entry *e;
	struct xs_map m;
	int r;

	while ((e = dso_next(f, &off)) != NULL)
		if (e->ino == ino && e->maj == maj && e->min == min && e->name_len == name_len &&
		    memcmp(e->name, name, name_len) == 0)
			return;
	size = align8(sizeof(*e) + name_len + 1);
	if (meta_grow(f, size) < 0) {
		f->build_id_errors++;
		return;
	}
	e = (struct dso_entry *)(void *)(f->meta + f->meta_len);
	memset(e, 0, sizeof(*e));
	e->size = (uint32_t)size;
	e->maj = maj;
	e->min = min;
	e->ino = ino;
	e->name_len = (uint32_t)name_len;
	memcpy(e->name, name, name_len);
	e->name[name_len] = '\0';
	f->meta_len += size;
	f->ndsos++;

	memset(&m, 0, sizeof(m));
	m.start = start;
	m.end = end;
	m.maj = maj;
	m.min = min;
	m.ino = ino;
	m.deleted = deleted;
	m.path = e->name;
	r = xs_build_id_read(&m, e->bid, f->buf + f->buf_size + SCRATCH_MAPS, SCRATCH_ELF);
	if (r > 0)
		e->bid_size = (uint8_t)r;
	else if (r < 0)
		f->build_id_errors++;
}

/* ---- open ---- */

static void build_attr(struct xs_perf_file *f)
{
	struct perf_event_attr a;
	uint64_t st = f->cfg.sample_type;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = ATTR_SIZE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = f->cfg.period_ns;
	a.sample_type = st;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.exclude_guest = 1;
	a.mmap = 1;
	a.comm = 1;
	a.task = 1;
	a.mmap2 = 1;
	a.comm_exec = 1;
	a.sample_id_all = 1;
	a.use_clockid = 1;
	a.clockid = f->cfg.clockid;
	if (st & PERF_SAMPLE_REGS_USER) {
		a.sample_regs_user = f->cfg.regs_mask;
		a.exclude_callchain_user = 1;
		a.mmap_data = 1;
	}
	if (st & PERF_SAMPLE_STACK_USER)
		a.sample_stack_user = f->cfg.stack_size;
	memcpy(f->attr, &a, ATTR_SIZE);
}

static int check_config(const struct xs_perf_config *cfg)
{
	uint64_t need = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	uint64_t st = cfg->sample_type;

	if ((st & ~(uint64_t)XS_PERF_SAMPLE_SUPPORTED) || (st & need) != need || !cfg->period_ns)
		return -EINVAL;
	if (!!(st & PERF_SAMPLE_REGS_USER) != !!(st & PERF_SAMPLE_STACK_USER))
		return -EINVAL;
	if (cfg->regs_mask >> XS_PERF_REG_COUNT || cfg->stack_size > XS_PERF_STACK_MAX)
		return -EINVAL;
	if (cfg->buf_size && cfg->buf_size < 65536)
		return -EINVAL;
	return 0;
}

int xs_perf_open(struct xs_perf_file *f, int fd, const struct xs_perf_config *cfg)
{
	const char *name = cfg->event_name ? cfg->event_name : "task-clock:u";
	const char *version = cfg->version ? cfg->version : "exitscope";
	size_t cmd_len = 0;
	long r;
	void *p;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	r = check_config(cfg);
	if (r < 0) {
		xs_sys1(SYS_close, fd);
		return f->err = (int)r;
	}
	f->cfg = *cfg;
	f->cfg.event_name = f->cfg.cmdline = f->cfg.version = NULL;
	if (!f->cfg.regs_mask)
		f->cfg.regs_mask = XS_PERF_REGS_MASK_DEFAULT;
	if (!f->cfg.stack_size)
		f->cfg.stack_size = 8192;
	f->cfg.stack_size = (uint32_t)align8(f->cfg.stack_size);
	if (!f->cfg.clockid)
		f->cfg.clockid = CLOCK_MONOTONIC;
	if (!f->cfg.buf_size)
		f->cfg.buf_size = 65536;
	if (!(cfg->sample_type & PERF_SAMPLE_REGS_USER))
		f->cfg.regs_mask = 0, f->cfg.stack_size = 0;
	f->nregs = (uint32_t)__builtin_popcountll(f->cfg.regs_mask);
	f->buf_size = f->cfg.buf_size;

	p = (void *)xs_syscall6(SYS_mmap, 0, f->buf_size + SCRATCH_MAPS + SCRATCH_ELF,
				PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((long)p < 0 && (long)p > -4096) {
		xs_sys1(SYS_close, fd);
		return f->err = (int)(long)p;
	}
	f->buf = p;
	p = (void *)xs_syscall6(SYS_mmap, 0, META_INITIAL, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((long)p < 0 && (long)p > -4096) {
		r = (long)p;
		goto out_unmap_buf;
	}
	f->meta = p;
	f->meta_cap = META_INITIAL;

	if (cfg->cmdline)
		cmd_len = cfg->cmdline_size ? cfg->cmdline_size : str_len(cfg->cmdline);
	if (cmd_len > STRINGS_MAX)
		cmd_len = STRINGS_MAX;
	while (cmd_len && cfg->cmdline[cmd_len - 1] == '\0')
		cmd_len--;	/* /proc/self/cmdline ends with a NUL */
	if ((r = meta_keep(f, name, str_len(name) < 256 ? str_len(name) : 255)) < 0)
		goto out_unmap_meta;
	f->event_name_off = (size_t)r;
	if ((r = meta_keep(f, cfg->cmdline ? cfg->cmdline : "", cmd_len)) < 0)
		goto out_unmap_meta;
	f->cmdline_off = (size_t)r;
	f->cmdline_len = cmd_len;
	if ((r = meta_keep(f, version, str_len(version) < 256 ? str_len(version) : 255)) < 0)
		goto out_unmap_meta;
	f->version_off = (size_t)r;
	f->dso_start = f->meta_len;
	build_attr(f);

	f->fd = fd;
	f->open = true;
	f->data_offset = HEADER_SIZE + FILE_ATTR_SIZE;
	{
		/* The attr, with an empty id list (one event needs no ids). */
		char a[FILE_ATTR_SIZE];
		memset(a, 0, sizeof(a));
		memcpy(a, f->attr, ATTR_SIZE);
		r = pwrite_all(f->fd, a, sizeof(a), HEADER_SIZE);
		if (r < 0 || (r = write_header(f, NULL)) < 0)
			goto out_close;
	}
	return 0;

out_close:
	xs_sys1(SYS_close, f->fd);
	f->fd = -1;
	f->open = false;
out_unmap_meta:
	xs_sys2(SYS_munmap, f->meta, f->meta_cap);
out_unmap_buf:
	xs_sys2(SYS_munmap, f->buf, f->buf_size + SCRATCH_MAPS + SCRATCH_ELF);
	if (f->fd < 0)
		xs_sys1(SYS_close, fd);
	f->buf = f->meta = NULL;
	f->err = (int)r;	/* later calls return it */
	return (int)r;
}

/* ---- records ---- */

int xs_perf_comm(struct xs_perf_file *f, int pid, int tid, const char *comm, uint64_t time)
{
	size_t n = str_len(comm), size;
	char *p;

	if (n > 15)
		n = 15;
	size = 8 + 8 + align8(n + 1) + trailer_size(f);
	time = order_time(f, time);
	if (!(p = reserve(f, size)))
		return f->err;
	put_event_header(p, PERF_RECORD_COMM, 0, size);
	put_u32x2(p + 8, (uint32_t)pid, (uint32_t)tid);
	memcpy(p + 16, comm, n);
	put_trailer(f, p + 16 + align8(n + 1), pid, tid, time);
	return 0;
}

int xs_perf_mmap2(struct xs_perf_file *f, int pid, int tid, uint64_t start, uint64_t len,
		  uint64_t pgoff, uint32_t maj, uint32_t min, uint64_t ino, uint32_t prot,
		  uint32_t flags, const char *filename, bool data, uint64_t time)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	size_t n = str_len(filename), size;
	bool is_deleted = false;
	char *p, *q;

	if (n > dlen && memcmp(filename + n - dlen, deleted, dlen) == 0) {
		n -= dlen;
		is_deleted = true;
	}
	if (n > 4095)
		n = 4095;
	size = 8 + 8 + 5 * 8 + 8 + 8 + align8(n + 1) + trailer_size(f);
	time = order_time(f, time);
	if (f->err)
		return f->err;
	if (filename[0] == '/' && ino)
		dso_add(f, filename, n, start, start + len, maj, min, ino, is_deleted);
	if (!(p = reserve(f, size)))
		return f->err;
	put_event_header(p, PERF_RECORD_MMAP2,
			 PERF_RECORD_MISC_USER | (data ? PERF_RECORD_MISC_MMAP_DATA : 0), size);
	q = put_u32x2(p + 8, (uint32_t)pid, (uint32_t)tid);
	q = put_u64(q, start);
	q = put_u64(q, len);
	q = put_u64(q, pgoff);
	q = put_u32x2(q, maj, min);
	q = put_u64(q, ino);
	q = put_u64(q, 0);	/* ino_generation */
	q = put_u32x2(q, prot, flags);
	memcpy(q, filename, n);
	put_trailer(f, q + align8(n + 1), pid, tid, time);
	return 0;
}

struct maps_walk {
	struct xs_perf_file *f;
	int pid;
	uint64_t time;
	bool dwarf;
};

static int maps_one(const struct xs_map *m, void *arg)
{
	struct maps_walk *w = arg;
	const char *name = m->path;
	bool data = false;

	if (m->prot & PROT_EXEC) {
		if (!name[0])
			name = "//anon";
		else if (strcmp(name, "[vsyscall]") == 0)
			return 0;
	} else if (w->dwarf && (m->prot & PROT_READ) && name[0] == '/') {
		data = true;
	} else {
		return 0;
	}
	return xs_perf_mmap2(w->f, w->pid, w->pid, m->start, m->end - m->start, m->pgoff, m->maj,
			     m->min, m->ino, m->prot, m->flags, name, data, w->time);
}

int xs_perf_maps(struct xs_perf_file *f, int pid, uint64_t time)
{
	struct maps_walk w = {
		.f = f, .pid = pid, .time = time,
		.dwarf = !!(f->cfg.sample_type & PERF_SAMPLE_STACK_USER),
	};
	int r;

	if (!f->open)
		return fail(f, -EBADF);
	if (f->err)
		return f->err;
	/* A failure to read /proc/self/maps is returned but leaves the file
	 * usable; a failure to write is already sticky in f->err. */
	r = xs_maps_walk(maps_one, &w, f->buf + f->buf_size, SCRATCH_MAPS);
	return f->err ? f->err : r;
}

int xs_perf_sample(struct xs_perf_file *f, const struct xs_perf_sample *s)
{
	uint64_t st = f->cfg.sample_type;
	bool dwarf = !!(st & PERF_SAMPLE_REGS_USER);
	uint32_t ncallers = 0, stack = 0;
	uint64_t time;
	size_t size, fixed;
	char *p;

	fixed = 8 + 8 * (1 + 1 + 1 + !!(st & PERF_SAMPLE_CPU) + 1);
	if (dwarf) {
		fixed += 8 + 8 + (s->regs ? 8 * f->nregs : 0) + 8;
		stack = s->stack ? s->stack_size : 0;
		if (stack > f->cfg.stack_size)
			stack = f->cfg.stack_size;
		size = fixed + (stack ? align8(stack) + 8 : 0);
	} else if (st & PERF_SAMPLE_CALLCHAIN) {
		ncallers = s->callers ? s->ncallers : 0;
		fixed += 8 + 16;	/* nr, PERF_CONTEXT_USER, ip */
		if (fixed + 8ULL * ncallers > REC_MAX)
			ncallers = (uint32_t)((REC_MAX - fixed) / 8);
		size = fixed + 8 * (size_t)ncallers;
	} else {
		size = fixed;
	}
	time = order_time(f, s->time);
	if (!(p = reserve(f, size)))
		return f->err;
	put_event_header(p, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, size);
	p += 8;
	p = put_u64(p, s->ip);
	p = put_u32x2(p, (uint32_t)s->pid, (uint32_t)s->tid);
	p = put_u64(p, time);
	if (st & PERF_SAMPLE_CPU)
		p = put_u32x2(p, s->cpu, 0);
	p = put_u64(p, s->period ? s->period : f->cfg.period_ns);
	if (dwarf) {
		p = put_u64(p, 0);	/* no callchain: perf unwinds the stack copy */
		p = put_u64(p, s->regs ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_NONE);
		if (s->regs)
			for (int i = 0; i < XS_PERF_REG_COUNT; i++)
				if (f->cfg.regs_mask >> i & 1)
					p = put_u64(p, s->regs[i]);
		p = put_u64(p, stack ? align8(stack) : 0);
		if (stack) {
			memcpy(p, s->stack, stack);
			p = put_u64(p + align8(stack), stack);
		}
	} else if (st & PERF_SAMPLE_CALLCHAIN) {
		p = put_u64(p, 2 + (uint64_t)ncallers);
		p = put_u64(p, PERF_CONTEXT_USER);
		p = put_u64(p, s->ip);
		if (ncallers)
			memcpy(p, s->callers, 8 * (size_t)ncallers);
	}
	if (!f->samples++)
		f->first_time = time;
	if (time > f->last_time)
		f->last_time = time;
	return 0;
}

int xs_perf_lost(struct xs_perf_file *f, uint64_t lost, uint64_t time)
{
	size_t size = 8 + 8 + trailer_size(f);
	char *p;

	time = order_time(f, time);
	if (!(p = reserve(f, size)))
		return f->err;
	put_event_header(p, PERF_RECORD_LOST_SAMPLES, 0, size);
	put_u64(p + 8, lost);
	put_trailer(f, p + 16, 0, 0, time);
	f->lost += lost;
	return 0;
}

int xs_perf_flush(struct xs_perf_file *f)
{
	if (f->err)
		return f->err;
	if (f->round_open) {
		char *p = reserve(f, 8);
		if (!p)
			return f->err;
		put_event_header(p, PERF_RECORD_FINISHED_ROUND, 0, 8);
		f->round_open = false;
		f->floor = f->round_max;
		f->round_max = f->max_time;
	}
	return write_out(f);
}

/* ---- features ---- */

/* A sequential writer through the (empty) record buffer. */
struct feat_out {
	struct xs_perf_file *f;
	uint64_t pos;		/* file offset of buf[0] */
};

static void feat_put(struct feat_out *o, const void *data, size_t n)
{
	struct xs_perf_file *f = o->f;
	const char *s = data;

	while (n && !f->err) {
		size_t room = f->buf_size - f->buf_len, k = n < room ? n : room;
		if (s)
			memcpy(f->buf + f->buf_len, s, k);
		else
			memset(f->buf + f->buf_len, 0, k);
		f->buf_len += k;
		n -= k;
		if (s)
			s += k;
		if (f->buf_len == f->buf_size) {
			long r = pwrite_all(f->fd, f->buf, f->buf_len, o->pos);
			if (r < 0)
				fail(f, (int)r);
			o->pos += f->buf_len;
			f->buf_len = 0;
		}
	}
}

static uint64_t feat_tell(const struct feat_out *o)
{
	return o->pos + o->f->buf_len;
}

static void feat_u32(struct feat_out *o, uint32_t v)
{
	feat_put(o, &v, 4);
}

static void feat_u64(struct feat_out *o, uint64_t v)
{
	feat_put(o, &v, 8);
}

/* perf's do_write_string: u32 padded length, the string, NUL padding. */
static void feat_string(struct feat_out *o, const char *s, size_t n)
{
	uint32_t padded = (uint32_t)((n + 1 + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN);
	feat_u32(o, padded);
	feat_put(o, s, n);
	feat_put(o, NULL, padded - n);
}

static void feat_cstring(struct feat_out *o, const char *s)
{
	feat_string(o, s, str_len(s));
}

static int read_small_file(const char *path, char *buf, size_t size)
{
	long fd = xs_sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0), n;
	if (fd < 0)
		return (int)fd;
	n = xs_sys3(SYS_read, fd, buf, size - 1);
	xs_sys1(SYS_close, fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return (int)n;
}

/* A CPU list such as "0-3,8": count and highest + 1; false if unreadable. */
static bool cpu_list(const char *path, uint32_t *count, uint32_t *top)
{
	char text[256];
	const char *p = text;

	if (read_small_file(path, text, sizeof(text)) <= 0)
		return false;
	*count = *top = 0;
	while (*p >= '0' && *p <= '9') {
		uint32_t a = 0, b;
		while (*p >= '0' && *p <= '9')
			a = a * 10 + (uint32_t)(*p++ - '0');
		b = a;
		if (*p == '-') {
			p++;
			b = 0;
			while (*p >= '0' && *p <= '9')
				b = b * 10 + (uint32_t)(*p++ - '0');
		}
		if (b >= a) {
			*count += b - a + 1;
			if (b + 1 > *top)
				*top = b + 1;
		}
		if (*p == ',')
			p++;
	}
	return *count > 0;
}

static void feat_nrcpus(struct feat_out *o)
{
	uint32_t online = 0, avail = 0, n, top;

	if (cpu_list("/sys/devices/system/cpu/online", &n, &top))
		online = n;
	if (cpu_list("/sys/devices/system/cpu/present", &n, &top))
		avail = top;
	if (!online || !avail) {
		uint64_t set[16];
		long r = xs_sys3(SYS_sched_getaffinity, 0, sizeof(set), set);
		uint32_t c = 0;
		for (long i = 0; r > 0 && i < r / 8; i++)
			c += (uint32_t)__builtin_popcountll(set[i]);
		if (!c)
			c = 1;
		if (!online)
			online = c;
		if (!avail)
			avail = c;
	}
	feat_u32(o, avail);	/* perf: nr_cpus_avail, then nr_cpus_online */
	feat_u32(o, online);
}

static void feat_build_ids(struct feat_out *o)
{
	struct xs_perf_file *f = o->f;
	size_t off = f->dso_start;
	struct dso_entry *e;

	while ((e = dso_next(f, &off)) != NULL) {
		/* perf_record_header_build_id: header, pid, 24-byte id union,
		 * then the name padded to NAME_ALIGN. */
		char rec[36];
		size_t name = (e->name_len + 1 + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
		int32_t pid = -1;	/* the host machine */
		if (!e->bid_size)
			continue;
		memset(rec, 0, sizeof(rec));
		put_event_header(rec, 0, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_BUILD_ID_SIZE,
				 sizeof(rec) + name);
		memcpy(rec + 8, &pid, 4);
		memcpy(rec + 12, e->bid, e->bid_size);
		rec[12 + 20] = (char)e->bid_size;
		feat_put(o, rec, sizeof(rec));
		feat_put(o, e->name, e->name_len);
		feat_put(o, NULL, name - e->name_len);
	}
}

static void feat_cmdline(struct feat_out *o)
{
	struct xs_perf_file *f = o->f;
	const char *s = f->meta + f->cmdline_off, *end = s + f->cmdline_len;
	uint32_t n = 0;

	for (const char *p = s; p < end; p += str_len(p) + 1)
		n++;
	feat_u32(o, n);
	for (const char *p = s; p < end; p += str_len(p) + 1)
		feat_cstring(o, p);
}

static void feat_payload(struct feat_out *o, int feat, const struct utsname *u)
{
	struct xs_perf_file *f = o->f;

	switch (feat) {
	case FEAT_BUILD_ID:
		feat_build_ids(o);
		break;
	case FEAT_HOSTNAME:
		feat_cstring(o, u->nodename);
		break;
	case FEAT_OSRELEASE:
		feat_cstring(o, u->release);
		break;
	case FEAT_VERSION:
		feat_cstring(o, f->meta + f->version_off);
		break;
	case FEAT_ARCH:
		feat_cstring(o, u->machine);
		break;
	case FEAT_NRCPUS:
		feat_nrcpus(o);
		break;
	case FEAT_TOTAL_MEM: {
		struct sysinfo si;
		uint64_t kb = 0;
		if (xs_sys1(SYS_sysinfo, &si) == 0)
			kb = (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1) / 1024;
		feat_u64(o, kb);
		break;
	}
	case FEAT_CMDLINE:
		feat_cmdline(o);
		break;
	case FEAT_EVENT_DESC:
		feat_u32(o, 1);			/* events */
		feat_u32(o, ATTR_SIZE);
		feat_put(o, f->attr, ATTR_SIZE);
		feat_u32(o, 0);			/* ids */
		feat_cstring(o, f->meta + f->event_name_off);
		break;
	case FEAT_SAMPLE_TIME:
		feat_u64(o, f->first_time);
		feat_u64(o, f->last_time);
		break;
	}
}

static int write_features(struct xs_perf_file *f)
{
	struct file_section index[NFEATURES];
	struct feat_out o = {.f = f, .pos = f->data_offset + f->data_size};
	uint64_t bits[4] = {0, 0, 0, 0};
	struct utsname u;
	long r;

	if (xs_sys1(SYS_uname, &u) < 0)
		memset(&u, 0, sizeof(u));
	feat_put(&o, NULL, sizeof(index));	/* filled in below */
	for (size_t i = 0; i < NFEATURES; i++) {
		index[i].offset = feat_tell(&o);
		feat_payload(&o, k_features[i], &u);
		index[i].size = feat_tell(&o) - index[i].offset;
		bits[k_features[i] / 64] |= 1ULL << (k_features[i] % 64);
	}
	if (f->buf_len && !f->err) {
		r = pwrite_all(f->fd, f->buf, f->buf_len, o.pos);
		if (r < 0)
			fail(f, (int)r);
	}
	f->buf_len = 0;
	if (f->err)
		return f->err;
	r = pwrite_all(f->fd, index, sizeof(index), f->data_offset + f->data_size);
	if (r < 0)
		return fail(f, (int)r);
	return write_header(f, bits);
}

int xs_perf_close(struct xs_perf_file *f)
{
	int err;

	if (!f->open)
		return -EBADF;
	if (!f->err && xs_perf_flush(f) == 0 && write_features(f) == 0) {
		long r = xs_sys1(SYS_fsync, f->fd);
		if (r < 0 && r != -EINVAL && r != -EROFS)
			fail(f, (int)r);
	}
	err = f->err;
	{
		long r = xs_sys1(SYS_close, f->fd);
		if (r < 0 && r != -EINTR && !err)
			err = (int)r;
	}
	xs_sys2(SYS_munmap, f->buf, f->buf_size + SCRATCH_MAPS + SCRATCH_ELF);
	xs_sys2(SYS_munmap, f->meta, f->meta_cap);
	f->buf = f->meta = NULL;
	f->fd = -1;
	f->open = false;
	return err;
}

void xs_perf_abandon(struct xs_perf_file *f)
{
	if (!f->open)
		return;
	xs_sys1(SYS_close, f->fd);
	xs_sys2(SYS_munmap, f->buf, f->buf_size + SCRATCH_MAPS + SCRATCH_ELF);
	xs_sys2(SYS_munmap, f->meta, f->meta_cap);
	f->buf = f->meta = NULL;
	f->fd = -1;
	f->open = false;
	fail(f, -EBADF);
}

uint64_t xs_perf_samples(const struct xs_perf_file *f)
{
	return f->samples;
}

void xs_perf_stats(const struct xs_perf_file *f, struct xs_perf_stats *out)
{
	out->samples = f->samples;
	out->lost = f->lost;
	out->bytes = f->data_size + f->buf_len;
	out->raised_times = f->raised_times;
	out->dsos = f->ndsos;
	out->build_id_errors = f->build_id_errors;
}

void xs_perf_regs_from_gregs(const greg_t *g, uint64_t regs[XS_PERF_REG_COUNT])
{
	uint64_t segs = (uint64_t)g[REG_CSGSFS];	/* cs, gs, fs, ss: 16 bits each */

	regs[PERF_REG_X86_AX] = (uint64_t)g[REG_RAX];
	regs[PERF_REG_X86_BX] = (uint64_t)g[REG_RBX];
	regs[PERF_REG_X86_CX] = (uint64_t)g[REG_RCX];
	regs[PERF_REG_X86_DX] = (uint64_t)g[REG_RDX];
	regs[PERF_REG_X86_SI] = (uint64_t)g[REG_RSI];
	regs[PERF_REG_X86_DI] = (uint64_t)g[REG_RDI];
	regs[PERF_REG_X86_BP] = (uint64_t)g[REG_RBP];
	regs[PERF_REG_X86_SP] = (uint64_t)g[REG_RSP];
	regs[PERF_REG_X86_IP] = (uint64_t)g[REG_RIP];
	regs[PERF_REG_X86_FLAGS] = (uint64_t)g[REG_EFL];
	regs[PERF_REG_X86_CS] = segs & 0xffff;
	regs[PERF_REG_X86_SS] = (segs >> 48) & 0xffff;
	regs[PERF_REG_X86_DS] = 0;
	regs[PERF_REG_X86_ES] = 0;
	regs[PERF_REG_X86_FS] = (segs >> 32) & 0xffff;
	regs[PERF_REG_X86_GS] = (segs >> 16) & 0xffff;
	regs[PERF_REG_X86_R8] = (uint64_t)g[REG_R8];
	regs[PERF_REG_X86_R9] = (uint64_t)g[REG_R9];
	regs[PERF_REG_X86_R10] = (uint64_t)g[REG_R10];
	regs[PERF_REG_X86_R11] = (uint64_t)g[REG_R11];
	regs[PERF_REG_X86_R12] = (uint64_t)g[REG_R12];
	regs[PERF_REG_X86_R13] = (uint64_t)g[REG_R13];
	regs[PERF_REG_X86_R14] = (uint64_t)g[REG_R14];
	regs[PERF_REG_X86_R15] = (uint64_t)g[REG_R15];
}
