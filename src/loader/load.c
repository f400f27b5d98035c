/*
 * Mapping a statically linked program as the kernel's ELF loader would:
 * its PT_LOAD segments (ET_EXEC at their addresses, static-pie anywhere
 * the largest alignment allows), the zeroed tail of the last file page and
 * the bss, and the facts its auxv and memory map bounds need. TLS and RELRO
 * are the program's libc's business, as under the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "loader/loader.h"
#include "runtime/freestanding.h"
#include "runtime/runtime.h"

#define PAGE 4096UL
#define PAGE_DOWN(x) ((x) & ~(PAGE - 1))
#define PAGE_UP(x) (((x) + PAGE - 1) & ~(PAGE - 1))
/* the user half of the x86-64 address space (4-level paging) */
#define USER_TOP (1UL << 47)

static int prot_of(uint32_t flags)
{
	return (flags & PF_R ? PROT_READ : 0) | (flags & PF_W ? PROT_WRITE : 0) | (flags & PF_X ? PROT_EXEC : 0);
}

static long read_at(int fd, void *buf, size_t size, uint64_t off)
{
	long n = xs_sys4(SYS_pread64, fd, buf, size, off);
	return n == (long)size ? 0 : n < 0 ? n : -ENOEXEC;
}

/* One PT_LOAD at bias, over the reservation. */
static const char *map_segment(int fd, const Elf64_Phdr *ph, uintptr_t bias)
{
	uintptr_t start = bias + ph->p_vaddr, page = PAGE_DOWN(start);
	uintptr_t file_end = start + ph->p_filesz, mem_end = start + ph->p_memsz;
	int prot = prot_of(ph->p_flags);
	/* the last file page's bytes past p_filesz belong to the bss: zeroed
	 * (they hold whatever follows in the file), so writable for a moment */
	bool zero_tail = ph->p_memsz > ph->p_filesz && (file_end & (PAGE - 1));
	uintptr_t anon = page;

	if (ph->p_filesz) {
		long r = xs_syscall6(SYS_mmap, (long)page, (long)(PAGE_UP(file_end) - page),
				     prot | (zero_tail ? PROT_WRITE : 0), MAP_PRIVATE | MAP_FIXED, fd,
				     (long)PAGE_DOWN(ph->p_offset));
		if (r < 0)
			return r == -EPERM || r == -EACCES ? "cannot map its code (a noexec mount?)"
							   : "cannot map a segment";
		if (zero_tail) {
			memset((void *)file_end, 0, PAGE_UP(file_end) - file_end);
			if (!(prot & PROT_WRITE))
				xs_sys3(SYS_mprotect, PAGE_DOWN(file_end), PAGE, prot);
		}
		anon = PAGE_UP(file_end);
	}
	if (PAGE_UP(mem_end) > anon &&
	    xs_syscall6(SYS_mmap, (long)anon, (long)(PAGE_UP(mem_end) - anon), prot,
			MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0) < 0)
		return "cannot map its bss";
	return NULL;
}

/* Room for the whole image: at its own addresses (ET_EXEC), refused if
 * anything is there already, or anywhere at the largest alignment. */
static const char *reserve(struct xs_ld_program *p, uintptr_t lo, uintptr_t hi, uintptr_t align)
{
	size_t span = hi - lo;
	if (p->eh.e_type == ET_EXEC) {
		long r = xs_syscall6(SYS_mmap, (long)lo, (long)span, PROT_NONE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		if (r == -EEXIST || (r >= 0 && (uintptr_t)r != lo)) {
			if (r >= 0)	/* a kernel before MAP_FIXED_NOREPLACE took it as a hint */
				xs_sys2(SYS_munmap, r, span);
			return "its fixed addresses collide with exitscope-ld's own memory";
		}
		if (r < 0)
			return "cannot reserve its fixed addresses";
		p->bias = 0;
		return NULL;
	}
	long r = xs_syscall6(SYS_mmap, 0, (long)(span + align), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			     -1, 0);
	if (r < 0)
		return "no room for it in the address space";
	uintptr_t base = ((uintptr_t)r + align - 1) & ~(align - 1);
	if (base > (uintptr_t)r)
		xs_sys2(SYS_munmap, r, base - (uintptr_t)r);
	if ((uintptr_t)r + span + align > base + span)
		xs_sys2(SYS_munmap, base + span, (uintptr_t)r + span + align - (base + span));
	p->bias = base - lo;
	return NULL;
}

const char *xs_ld_check(struct xs_ld_program *p)
{
	struct stat st;
	if (xs_sys2(SYS_fstat, p->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return "not a regular file";
	if (read_at(p->fd, &p->eh, sizeof(p->eh), 0) < 0 || memcmp(p->eh.e_ident, ELFMAG, SELFMAG) != 0)
		return "not an ELF executable or script";
	if (p->eh.e_ident[EI_CLASS] != ELFCLASS64 || p->eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    p->eh.e_machine != EM_X86_64)
		return "not an x86-64 program";
	if (p->eh.e_type != ET_EXEC && p->eh.e_type != ET_DYN)
		return "not an executable";
	if (p->eh.e_phentsize != sizeof(Elf64_Phdr) || p->eh.e_phnum == 0 || p->eh.e_phnum > XS_LD_MAX_PHDR)
		return "bad program headers";
	if (read_at(p->fd, p->ph, p->eh.e_phnum * sizeof(Elf64_Phdr), p->eh.e_phoff) < 0)
		return "truncated program headers";
	p->nload = 0;
	for (int i = 0; i < p->eh.e_phnum; i++) {
		const Elf64_Phdr *ph = &p->ph[i];
		if (ph->p_type == PT_INTERP)
			return "dynamically linked: exitscope runs it with its preloaded runtime, not with exitscope-ld";
		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_filesz > ph->p_memsz || ph->p_vaddr >= USER_TOP || ph->p_memsz >= USER_TOP ||
		    ph->p_vaddr + ph->p_memsz >= USER_TOP || (ph->p_vaddr - ph->p_offset) % PAGE ||
		    ph->p_offset > (uint64_t)st.st_size || ph->p_filesz > (uint64_t)st.st_size - ph->p_offset)
			return "a segment that cannot be loaded";
		if (ph->p_align & (ph->p_align - 1) || ph->p_align > (1UL << 30))
			return "a segment alignment that cannot be honoured";
		p->nload++;
	}
	if (!p->nload)
		return "nothing to load";
	if ((st.st_mode & S_ISUID && st.st_uid != (uid_t)xs_sys0(SYS_geteuid)) ||
	    (st.st_mode & S_ISGID && st.st_gid != (gid_t)xs_sys0(SYS_getegid)))
		return "setuid/setgid: exitscope-ld would run it without its privileges";
	return NULL;
}

const char *xs_ld_map(struct xs_ld_program *p)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0, align = PAGE;
	for (int i = 0; i < p->eh.e_phnum; i++) {
		const Elf64_Phdr *ph = &p->ph[i];
		if (ph->p_type == PT_GNU_STACK)
			p->exec_stack = ph->p_flags & PF_X;
		if (ph->p_type != PT_LOAD)
			continue;
		if (PAGE_DOWN(ph->p_vaddr) < lo)
			lo = PAGE_DOWN(ph->p_vaddr);
		if (PAGE_UP(ph->p_vaddr + ph->p_memsz) > hi)
			hi = PAGE_UP(ph->p_vaddr + ph->p_memsz);
		if (ph->p_align > align)
			align = ph->p_align;
	}
	if (p->eh.e_type == ET_EXEC && lo < 65536)
		return "it wants addresses below mmap_min_addr";
	const char *err = reserve(p, lo, hi, align);
	if (err)
		return err;

	/* what the kernel's loader computes for /proc/PID/stat and prctl's
	 * memory map: code is the executable segments, data up to the last
	 * segment's file end */
	p->start_code = UINTPTR_MAX;
	p->end_code = p->start_data = p->end_data = 0;
	p->phdr = 0;
	for (int i = 0; i < p->eh.e_phnum; i++) {
		const Elf64_Phdr *ph = &p->ph[i];
		if (ph->p_type == PT_PHDR)
			p->phdr = p->bias + ph->p_vaddr;
		if (ph->p_type != PT_LOAD)
			continue;
		if ((err = map_segment(p->fd, ph, p->bias)))
			return err;
		if (!p->phdr && p->eh.e_phoff >= ph->p_offset &&
		    p->eh.e_phoff + p->eh.e_phnum * sizeof(Elf64_Phdr) <= ph->p_offset + ph->p_filesz)
			p->phdr = p->bias + ph->p_vaddr + (p->eh.e_phoff - ph->p_offset);
		uintptr_t start = p->bias + ph->p_vaddr, end = start + ph->p_filesz;
		if (ph->p_flags & PF_X) {
			if (start < p->start_code)
				p->start_code = start;
			if (end > p->end_code)
				p->end_code = end;
		}
		if (start > p->start_data)
			p->start_data = start;
		if (end > p->end_data)
			p->end_data = end;
	}
	if (p->start_code == UINTPTR_MAX)
		p->start_code = p->end_code = p->start_data;
	if (!p->phdr)
		return "its program headers are not in a loaded segment (its libc could not find them)";
	p->entry = p->bias + p->eh.e_entry;
	return NULL;
}
