/*
 * /proc/self/maps and build ids for the profiler, with raw system calls
 * only (see maps.h). The maps file is read in chunks into the caller's
 * scratch buffer and cut into lines there; an ELF file's build id is found
 * in its PT_NOTE segments, read with pread.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include "runtime/runtime.h"
#include "runtime/profile/maps.h"

static long read_retry(int fd, char *p, size_t n)
{
	long r;
	do
		r = xs_sys3(SYS_read, fd, p, n);
	while (r == -EINTR);
	return r;
}

static long pread_full(int fd, void *p, size_t n, uint64_t off)
{
	size_t done = 0;
	while (done < n) {
		long r = xs_sys4(SYS_pread64, fd, (char *)p + done, n - done, off + done);
		if (r == -EINTR)
			continue;
		if (r < 0)
			return r;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (long)done;
}

/* Parse a hexadecimal number at *p, moving *p past it. */
static uint64_t hex(const char **p, const char *end)
{
	uint64_t v = 0;
	for (; *p < end; (*p)++) {
		char c = **p;
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		v = v * 16 + d;
	}
	return v;
}

static uint64_t dec(const char **p, const char *end)
{
	uint64_t v = 0;
	for (; *p < end && **p >= '0' && **p <= '9'; (*p)++)
		v = v * 10 + (uint64_t)(**p - '0');
	return v;
}

static bool expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

static void skip_spaces(const char **p, const char *end)
{
	while (*p < end && **p == ' ')
		(*p)++;
}

/* One line, without its newline, NUL-writable at end. false: malformed. */
static bool parse_line(char *line, char *end, struct xs_map *m)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	const char *p = line;

	memset(m, 0, sizeof(*m));
	m->start = hex(&p, end);
	if (!expect(&p, end, '-'))
		return false;
	m->end = hex(&p, end);
	if (!expect(&p, end, ' ') || end - p < 5)
		return false;
	m->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	m->flags = p[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	p += 4;
	if (!expect(&p, end, ' '))
		return false;
	m->pgoff = hex(&p, end);
	if (!expect(&p, end, ' '))
		return false;
	m->maj = (uint32_t)hex(&p, end);
	if (!expect(&p, end, ':'))
		return false;
	m->min = (uint32_t)hex(&p, end);
	if (!expect(&p, end, ' '))
		return false;
	m->ino = dec(&p, end);
	skip_spaces(&p, end);
	*end = '\0';
	if ((size_t)(end - p) > dlen && memcmp(end - dlen, deleted, dlen) == 0) {
		m->deleted = true;
		end[-dlen] = '\0';
	}
	m->path = p;
	return true;
}

int xs_maps_walk(int (*fn)(const struct xs_map *m, void *arg), void *arg, char *scratch,
		 size_t scratch_size)
{
	size_t have = 0;
	bool skipping = false;	/* inside a line too long for scratch */
	int ret = 0;
	long fd;

	if (scratch_size < 8192)
		return -EINVAL;
	fd = xs_sys4(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return (int)fd;
	for (;;) {
		long n = read_retry((int)fd, scratch + have, scratch_size - 1 - have);
		char *line, *nl, *end;

		if (n < 0) {
			ret = (int)n;
			break;
		}
		if (n == 0)
			break;	/* a last line without newline cannot happen */
		end = scratch + have + n;
		line = scratch;
		while ((nl = memchr(line, '\n', (size_t)(end - line))) != NULL) {
			struct xs_map m;
			if (!skipping && parse_line(line, nl, &m)) {
				ret = fn(&m, arg);
				if (ret)
					goto out;
			}
			skipping = false;
			line = nl + 1;
		}
		have = (size_t)(end - line);
		if (have == scratch_size - 1) {
			skipping = true;	/* drop this line's start */
			have = 0;
		} else if (have && line != scratch) {
			memmove(scratch, line, have);
		}
	}
out:
	xs_sys1(SYS_close, fd);
	return ret;
}

/* The build id in the notes of the ELF file open as fd. */
static int build_id_from_fd(int fd, uint8_t *id, char *scratch, size_t scratch_size)
{
	Elf64_Ehdr eh;
	struct {
		uint64_t off, size;
	} notes[16];
	unsigned nnotes = 0;
	long r = pread_full(fd, &eh, sizeof(eh), 0);

	if (r < 0)
		return (int)r;
	if ((size_t)r < sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
		return 0;
	{
		size_t nph = eh.e_phnum;
		Elf64_Phdr *ph = (Elf64_Phdr *)(void *)scratch;
		if (nph > scratch_size / sizeof(Elf64_Phdr))
			nph = scratch_size / sizeof(Elf64_Phdr);
		r = pread_full(fd, ph, nph * sizeof(Elf64_Phdr), eh.e_phoff);
		if (r < 0)
			return (int)r;
		nph = (size_t)r / sizeof(Elf64_Phdr);
		for (size_t i = 0; i < nph && nnotes < 16; i++) {
			if (ph[i].p_type != PT_NOTE)
				continue;
			notes[nnotes].off = ph[i].p_offset;
			notes[nnotes].size = ph[i].p_filesz;
			nnotes++;
		}
	}
	for (unsigned i = 0; i < nnotes; i++) {
		size_t size = notes[i].size < scratch_size ? notes[i].size : scratch_size;
		size_t pos = 0;
		r = pread_full(fd, scratch, size, notes[i].off);
		if (r < 0)
			return (int)r;
		size = (size_t)r;
		while (pos + sizeof(Elf64_Nhdr) <= size) {
			Elf64_Nhdr nh;
			size_t name, desc;
			memcpy(&nh, scratch + pos, sizeof(nh));
			name = pos + sizeof(nh);
			desc = name + ((nh.n_namesz + 3) & ~3u);
			if (desc + nh.n_descsz > size)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp(scratch + name, "GNU", 4) == 0 && nh.n_descsz > 0) {
				size_t n = nh.n_descsz < XS_BUILD_ID_MAX ? nh.n_descsz : XS_BUILD_ID_MAX;
				memcpy(id, scratch + desc, n);
				return (int)n;
			}
			pos = desc + ((nh.n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

/* "/proc/self/map_files/START-END" into out (64 bytes). */
static void map_files_path(const struct xs_map *m, char *out)
{
	static const char prefix[] = "/proc/self/map_files/";
	char *p = out + sizeof(prefix) - 1;
	uint64_t v[2] = {m->start, m->end};

	memcpy(out, prefix, sizeof(prefix) - 1);
	for (int k = 0; k < 2; k++) {
		char tmp[16];
		int n = 0;
		uint64_t x = v[k];
		do {
			tmp[n++] = "0123456789abcdef"[x & 15];
			x >>= 4;
		} while (x);
		while (n)
			*p++ = tmp[--n];
		*p++ = k == 0 ? '-' : '\0';
	}
}

static long open_ro(const char *path)
{
	return xs_sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOCTTY, 0);
}

int xs_build_id_read(const struct xs_map *m, uint8_t *id, char *scratch, size_t scratch_size)
{
	long fd = -ENOENT;
	int ret;

	if (scratch_size < 4096)
		return -EINVAL;
	if (m->path[0] == '/' && !m->deleted) {
		struct stat st;
		fd = open_ro(m->path);
		if (fd >= 0 && (xs_sys2(SYS_fstat, fd, &st) < 0 || st.st_ino != m->ino ||
				major(st.st_dev) != m->maj || minor(st.st_dev) != m->min)) {
			xs_sys1(SYS_close, fd);
			fd = -ESTALE;
		}
	}
	if (fd < 0) {
		char path[64];
		map_files_path(m, path);
		fd = open_ro(path);
		if (fd < 0)
			return (int)fd;
	}
	ret = build_id_from_fd((int)fd, id, scratch, scratch_size);
	xs_sys1(SYS_close, fd);
	return ret;
}
