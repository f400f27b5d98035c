/*
 * The rewriter: dispatch is the catch-all and finds the sites. When a plain
 * call traps (entry/dispatch.c), the instruction before its `syscall` says
 * whether the site can take the fast entry:
 *
 *   b8 imm32 0f 05   mov $nr,%eax; syscall  (436 of this glibc's 526 sites)
 *                    the 5-byte mov becomes `jmp rel32` to the site's stub;
 *   4c 8b 4c 24 08 0f 05   mov 0x8(%rsp),%r9; syscall  (glibc's syscall(2))
 *                    the same, with the number taken from rax at run time;
 *   31 c0 0f 05      xor %eax,%eax; syscall  (glibc's read)
 *                    the 2-byte xor becomes `jmp rel8` to alignment padding
 *                    within reach (multi-byte nops or int3s right after a
 *                    `ret`, ending on a 16-byte boundary: never executed),
 *                    which becomes `jmp rel32` to the stub;
 *   [REX] 89|8b /r 0f 05   a register-to-register mov; syscall  (Go's
 *                    Syscall6 `mov %rbx,%rdi`, musl's and glibc's
 *                    `mov %r9,%rax`...): the same way as the xor, with the
 *                    number in rax at run time. Before the bytes are
 *                    trusted to be that mov (and not the tail of a longer
 *                    instruction), the trap's registers must show its
 *                    effect: destination == source.
 *
 * The `syscall` stays in place, so a thread that reaches it directly (a call
 * the kernel restarts, code that jumps to it, a thread stopped between the
 * two instructions) traps and dispatch takes it, as before. The number in
 * the mov says before anything is written whether the call may ever take
 * the fast entry (xs_call_needs_dispatch).
 *
 * Only code mapped from a file, private, readable, executable and not
 * writable is rewritten: never the vDSO, a shared mapping, anonymous code
 * (a JIT's) or memory that is writable and executable. Each page the patch
 * touches is made writable (and stays executable: other threads run it)
 * for the write, then gets its own protection back. The write is atomic
 * for any thread running the site: one locked compare-and-swap of 8 bytes
 * that hold it within a cache line, or, for a mov that crosses a line (or
 * a page), a jump-to-self first, then the tail, then the head; each step is
 * followed by membarrier(SYNC_CORE), so that no CPU runs stale bytes.
 * A site that cannot be rewritten stays on dispatch and is not tried again.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include "runtime/call.h"

enum site_kind { SITE_MOV, SITE_XOR, SITE_GENERIC, SITE_REGMOV };

/* syscall(2)'s last instruction before its syscall: the number is in rax
 * already, and this one moves it into the stub unchanged. */
static const unsigned char g_generic_insn[5] = { 0x4c, 0x8b, 0x4c, 0x24, 0x08 };	/* mov 0x8(%rsp),%r9 */

/* Sites that could not be rewritten: not tried again. (A fork child keeps
 * them; exec starts afresh.) Open addressing; when full, nothing is added
 * and a refused site costs a look at /proc/self/maps per trap. */
#define REFUSED_MAX 4096
static unsigned long g_refused[REFUSED_MAX];
static uint32_t g_nrefused;

static uint32_t refused_slot(unsigned long site)
{
	return (uint32_t)((site * 0x9e3779b97f4a7c15UL) >> 52) % REFUSED_MAX;
}

static bool refused(unsigned long site)
{
	for (uint32_t i = refused_slot(site), n = 0; n < REFUSED_MAX; i = (i + 1) % REFUSED_MAX, n++) {
		unsigned long v = __atomic_load_n(&g_refused[i], __ATOMIC_RELAXED);
		if (v == site)
			return true;
		if (!v)
			return false;
	}
	return false;
}

static void refuse(unsigned long site)
{
	if (g_nrefused >= REFUSED_MAX * 3 / 4)
		return;
	uint32_t i = refused_slot(site);
	while (g_refused[i] && g_refused[i] != site)
		i = (i + 1) % REFUSED_MAX;
	if (!g_refused[i])
		g_nrefused++;
	__atomic_store_n(&g_refused[i], site, __ATOMIC_RELAXED);
}

/* A site is rewritten at its REWRITE_AFTER-th trap: a rewrite costs about
 * 50 µs (the mappings read, protections changed twice, other CPUs
 * serialised), twenty trapped calls; most start-up sites run once or twice
 * and stay trapping. Counted per site in a small table where a collision
 * just starts the count again. */
#define REWRITE_AFTER 4
#define TRAPS_MAX 4096
static struct {
	unsigned long site;
	uint32_t traps;
} g_traps[TRAPS_MAX];

static bool hot_enough(unsigned long site)
{
	uint32_t i = (uint32_t)((site * 0x9e3779b97f4a7c15UL) >> 52) % TRAPS_MAX;
	if (__atomic_load_n(&g_traps[i].site, __ATOMIC_RELAXED) != site) {
		__atomic_store_n(&g_traps[i].site, site, __ATOMIC_RELAXED);
		__atomic_store_n(&g_traps[i].traps, 1, __ATOMIC_RELAXED);
		return REWRITE_AFTER <= 1;
	}
	return __atomic_add_fetch(&g_traps[i].traps, 1, __ATOMIC_RELAXED) >= REWRITE_AFTER;
}

/* ---- the mappings ---- */

struct vma {
	unsigned long start, end;
	int prot;
	bool ok;	/* private code from a file, not writable */
};

static char g_maps_buf[4096];	/* (rewrite lock held) */

static unsigned long parse_hex(const char **p)
{
	unsigned long v = 0;
	for (;; (*p)++) {
		char c = **p;
		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned long)(c - 'a' + 10);
		else
			return v;
	}
}

/* One line of /proc/self/maps: "start-end rwxp offset dev inode   path". */
static bool parse_line(const char *line, struct vma *v)
{
	const char *p = line;
	v->start = parse_hex(&p);
	if (*p++ != '-')
		return false;
	v->end = parse_hex(&p);
	if (*p++ != ' ' || strlen(p) < 4)
		return false;
	v->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) | (p[2] == 'x' ? PROT_EXEC : 0);
	bool private = p[3] == 'p';
	const char *path = p;
	for (int field = 0; field < 4 && *path; field++) {	/* perms offset dev inode */
		while (*path && *path != ' ')
			path++;
		while (*path == ' ')
			path++;
	}
	v->ok = private && v->prot == (PROT_READ | PROT_EXEC) && *path == '/';
	return true;
}

/* The mapping that holds addr. */
static bool vma_of(unsigned long addr, struct vma *out)
{
	long fd = xs_fd_make(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool found = false;
	size_t have = 0;
	for (;;) {
		long n = xs_sys3(SYS_read, fd, g_maps_buf + have, sizeof(g_maps_buf) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		g_maps_buf[have] = 0;
		char *line = g_maps_buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			struct vma v;
			if (parse_line(line, &v) && addr >= v.start && addr < v.end) {
				*out = v;
				found = true;
				goto done;
			}
			line = nl + 1;
		}
		have = strlen(line);
		memmove(g_maps_buf, line, have);
	}
done:
	xs_sys1(SYS_close, fd);
	return found;
}

/* Make [addr, addr + len) writable for a patch, noting each page's own
 * protection in old[] (at most two mappings). */
struct patch_window {
	struct vma vma[2];
	int n;
};

static bool open_window(struct patch_window *w, unsigned long addr, unsigned long len)
{
	w->n = 0;
	for (unsigned long a = addr; a < addr + len;) {
		if (w->n == 2 || !vma_of(a, &w->vma[w->n]) || !w->vma[w->n].ok)
			return false;
		a = w->vma[w->n++].end;
	}
	unsigned long lo = addr & ~4095UL, hi = (addr + len + 4095) & ~4095UL;
	if (xs_sys3(SYS_mprotect, lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		return false;	/* (a policy that refuses writable code) */
	return true;
}

static void close_window(struct patch_window *w, unsigned long addr, unsigned long len)
{
	unsigned long lo = addr & ~4095UL, hi = (addr + len + 4095) & ~4095UL;
	for (int i = 0; i < w->n; i++) {
		unsigned long s = lo > w->vma[i].start ? lo : w->vma[i].start;
		unsigned long e = hi < w->vma[i].end ? hi : w->vma[i].end;
		if (s < e)
			xs_sys3(SYS_mprotect, s, e - s, w->vma[i].prot);
	}
}

/* ---- atomic writes to running code ---- */

static void sync_cores(void)
{
	xs_sys3(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
}

/* Write n bytes (n <= 8) at addr with one locked compare-and-swap of 8
 * bytes that hold them within one cache line: aligned where that covers
 * them, else the 8 bytes that end where they end (a locked operation that
 * stays within a cache line is atomic, aligned or not, and is no split
 * lock). False if the bytes cross a cache line. */
static bool cas_write(unsigned long addr, const unsigned char *bytes, unsigned n)
{
	unsigned long line = addr & ~63UL;
	if (addr + n > line + 64)
		return false;
	unsigned long w = addr & ~7UL;
	if (w + 8 < addr + n)
		w = addr + n - 8;	/* >= line: n <= 8 and addr + n <= line + 64 */
	if (w < line)
		w = line;
	volatile uint64_t *word = (volatile uint64_t *)w;
	uint64_t old = *word, new;
	bool done;
	do {
		new = old;
		memcpy((char *)&new + (addr - w), bytes, n);
		__asm__ __volatile__("lock cmpxchgq %3, %1\n\tsete %0"
				     : "=q"(done), "+m"(*word), "+a"(old)
				     : "r"(new)
				     : "memory", "cc");
	} while (!done);
	return true;
}

/* Replace the n-byte instruction at addr (n <= 8) by new, atomically for
 * the threads that run it. */
static bool replace_insn(unsigned long addr, const unsigned char *new, unsigned n)
{
	if (cas_write(addr, new, n)) {
		sync_cores();
		return true;
	}
	static const unsigned char self_jump[2] = { 0xeb, 0xfe };
	if (n < 2 || !cas_write(addr, self_jump, 2))
		return false;
	sync_cores();	/* from here no thread gets past addr */
	memcpy((void *)(addr + 2), new + 2, n - 2);
	sync_cores();
	cas_write(addr, new, 2);
	sync_cores();
	return true;
}

/* ---- the sites ---- */

/* Alignment padding within a rel8 jump of from (the end of the jump):
 * a multi-byte nop of at least 5 bytes right after a `ret`, the nops
 * from there ending on a 16-byte boundary. 0 if none. */
static unsigned nop_length(const unsigned char *p)
{
	unsigned prefixes = 0;
	while (p[prefixes] == 0x66 && prefixes < 8)
		prefixes++;
	const unsigned char *q = p + prefixes;
	if (q[0] == 0x2e && prefixes)
		q++;
	if (q[0] == 0x90 && q == p)
		return 1;
	if (q[0] != 0x0f || q[1] != 0x1f)
		return 0;
	unsigned base = (unsigned)(q - p) + 2;
	switch (q[2]) {
	case 0x00: return base + 1;
	case 0x40: return q[3] == 0 ? base + 2 : 0;
	case 0x44: return q[3] == 0 && q[4] == 0 ? base + 3 : 0;
	case 0x80: return !q[3] && !q[4] && !q[5] && !q[6] ? base + 5 : 0;
	case 0x84: return !q[3] && !q[4] && !q[5] && !q[6] && !q[7] ? base + 6 : 0;
	}
	return 0;
}

/* int3 bytes from p (Go's linker pads functions with them). */
static unsigned int3_run(const unsigned char *p, const unsigned char *end)
{
	unsigned n = 0;
	while (p + n < end && p[n] == 0xcc)
		n++;
	return n;
}

static unsigned long find_padding(unsigned long from)
{
	unsigned char code[320];
	unsigned long lo = from - 128 - 32;
	if (xs_copy_user(code, (const void *)lo, sizeof(code)) < 0)
		return 0;
	for (unsigned long p = from - 128; p <= from + 127; p++) {
		const unsigned char *c = code + (p - lo);
		if (c[-1] != 0xc3)
			continue;
		unsigned traps = int3_run(c, code + sizeof(code));
		if (traps >= 5 && !((p + traps) & 15))
			return p;
		unsigned first = nop_length(c);
		if (first < 5)
			continue;
		unsigned long q = p;
		for (unsigned len = first; len && q + len <= lo + sizeof(code) - 16; len = nop_length(code + (q - lo))) {
			q += len;
			if (!(q & 15))
				return p;
		}
	}
	return 0;
}

static void jump_rel32(unsigned char out[5], unsigned long from, unsigned long to)
{
	int32_t rel = (int32_t)((long)to - (long)(from + 5));
	out[0] = 0xe9;
	memcpy(out + 1, &rel, 4);
}

/* A 5-byte instruction right before the syscall, replaced by a jump; the
 * stub runs it (set_eax: the same bytes). */
static bool rewrite_five(unsigned long site, const unsigned char set_eax[5])
{
	struct patch_window w;
	if (!open_window(&w, site, 5))
		return false;
	bool ok = false;
	unsigned long stub = xs_stub_make(site, site + 5, set_eax);
	if (stub) {
		unsigned char jump[5];
		jump_rel32(jump, site, stub);
		ok = replace_insn(site, jump, 5);
	}
	close_window(&w, site, 5);
	return ok;
}

/* A 2- or 3-byte instruction right before the syscall (len), replaced by
 * a `jmp rel8` to padding that jumps on to the stub; the stub runs the
 * instruction (insn: its bytes, filled with a nop to 5). The jump takes
 * the instruction's first two bytes: a third is never reached (no thread
 * can be inside an instruction), and the syscall stays. */
static bool rewrite_short(unsigned long site, unsigned len, const unsigned char insn[5])
{
	unsigned long pad = find_padding(site + 2);
	if (!pad)
		return false;
	unsigned long lo = pad < site ? pad : site, hi = pad + 5 > site + 2 ? pad + 5 : site + 2;
	struct patch_window w;
	if (!open_window(&w, lo, hi - lo))
		return false;
	bool ok = false;
	unsigned long stub = xs_stub_make(site, site + len, insn);
	if (stub) {
		unsigned char jump[5], short_jump[2] = { 0xeb, (unsigned char)(int8_t)((long)pad - (long)(site + 2)) };
		jump_rel32(jump, pad, stub);
		memcpy((void *)pad, jump, 5);	/* never executed until the next write */
		sync_cores();
		ok = cas_write(site, short_jump, 2);
		sync_cores();
	}
	close_window(&w, lo, hi - lo);
	return ok;
}

/* The register number (0 rax ... 15 r15) of a ModRM field. */
#define MODRM_REG(modrm, rex) ((((modrm) >> 3) & 7) | (((rex) & 4) << 1))
#define MODRM_RM(modrm, rex) (((modrm) & 7) | (((rex) & 1) << 3))

/* Is b[0..len) (len 2 or 3) a mov between two registers whose source is
 * not rcx or r11 (the stub has used them before it runs the mov)? */
static bool reg_mov(const unsigned char *b, unsigned len, int *dst, int *src, bool *wide)
{
	unsigned rex = len == 3 ? b[0] : 0;
	const unsigned char *op = b + (len == 3);
	if ((len == 3 && (rex & 0xf0) != 0x40) || (op[0] != 0x89 && op[0] != 0x8b) || (op[1] & 0xc0) != 0xc0)
		return false;
	int reg = MODRM_REG(op[1], rex), rm = MODRM_RM(op[1], rex);
	*src = op[0] == 0x89 ? reg : rm;
	*dst = op[0] == 0x89 ? rm : reg;
	*wide = rex & 8;
	return *src != 1 && *src != 11;
}

/* A register's value at the trap, before the call (rax held the number),
 * by its ModRM number. */
static unsigned long trap_reg(const greg_t *regs, long nr, int r)
{
	static const int greg_of[16] = {
		REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
		REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
	};
	return r == 0 ? (unsigned long)nr : (unsigned long)regs[greg_of[r]];
}

/* A legacy prefix byte (operand or address size, segment, lock, rep). In
 * front of a short instruction it would belong to it, and to the jump put
 * there: 66 eb truncates the target on AMD. */
static bool legacy_prefix(unsigned char c)
{
	return c == 0x66 || c == 0x67 || c == 0xf0 || c == 0xf2 || c == 0xf3 || c == 0x2e || c == 0x3e ||
	       c == 0x26 || c == 0x36 || c == 0x64 || c == 0x65;
}

/* The instruction before a syscall, when it is a register-to-register mov
 * that the trap's registers show ran: its length (2 or 3), else 0. A REX
 * byte before a 2-byte mov would make it a 3-byte one: such bytes are taken
 * as 3 or not at all. */
static unsigned regmov_site(const unsigned char b[5], const greg_t *regs, long nr)
{
	for (unsigned len = 3; len >= 2; len--) {
		int dst, src;
		bool wide;
		if (!reg_mov(b + 5 - len, len, &dst, &src, &wide)) {
			if (len == 3 && (b[2] & 0xf0) == 0x40)
				return 0;
			continue;
		}
		unsigned long want = trap_reg(regs, nr, src);
		if (!wide)
			want = (uint32_t)want;
		return trap_reg(regs, nr, dst) == want && !legacy_prefix(b[4 - len]) ? len : 0;
	}
	return 0;
}

void xs_rewrite_site(unsigned long rip, long nr, const greg_t *regs)
{
	unsigned char b[7];
	unsigned long call_insn = rip - 2, site;
	enum site_kind kind;
	unsigned short_len = 2;
	int32_t imm;

	if (!g_fast_on)
		return;
	if (xs_copy_user(b, (const void *)(call_insn - 5), 7) < 0 || b[5] != 0x0f || b[6] != 0x05)
		return;
	memcpy(&imm, b + 1, 4);
	if (!memcmp(b, g_generic_insn, 5)) {
		kind = SITE_GENERIC;	/* whatever this call's number: each call decides */
		site = call_insn - 5;
	} else if (xs_call_needs_dispatch(nr)) {
		return;
	} else if (b[0] == 0xb8 && imm == nr) {
		kind = SITE_MOV;
		site = call_insn - 5;
	} else if (nr == 0 && b[3] == 0x31 && b[4] == 0xc0 && !legacy_prefix(b[2])) {
		kind = SITE_XOR;
		site = call_insn - 2;
	} else if ((short_len = regmov_site(b, regs, nr))) {
		kind = SITE_REGMOV;	/* the number is in rax: each call decides */
		site = call_insn - short_len;
	} else {
		return;
	}
	if (refused(site) || !hot_enough(site))
		return;
	unsigned char before[5];
	memcpy(before, b, 5);
	sigset_t old;
	xs_lock_blocked(&g_proc->rewrite_lock, &old);
	/* another thread may have been first */
	if (xs_copy_user(b, (const void *)(call_insn - 5), 7) == 0 && !memcmp(b, before, 5)) {
		/* the short forms: the stub runs the instruction, then a nop
		 * (nopl (%rax) after 2 bytes, xchg %ax,%ax after 3) */
		unsigned char insn[5] = { 0x31, 0xc0, 0x0f, 0x1f, 0x00 };	/* xor %eax,%eax */
		if (kind == SITE_REGMOV)
			memcpy(insn, b + 5 - short_len, short_len);
		if (short_len == 3)
			insn[3] = 0x66, insn[4] = 0x90;
		bool ok = kind == SITE_XOR || kind == SITE_REGMOV ? rewrite_short(site, short_len, insn)
								  : rewrite_five(site, b);
		if (!ok)
			refuse(site);
	}
	xs_unlock_blocked(&g_proc->rewrite_lock, &old);
}
