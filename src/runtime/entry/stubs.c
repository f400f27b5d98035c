/*
 * Stubs: one 64-byte piece of code per rewritten site, in memory of the
 * runtime's within 1 GiB of the site (a rel32 jump reaches it). A stub checks
 * that %gs points at a live thread block, without touching RFLAGS, rax or
 * the stack, runs the instruction the rewriter replaced (which sets eax, or
 * for syscall(2) loads its sixth argument), and enters the fast entry
 * (trampoline.S) with the number in eax and where to go on in r11;
 * otherwise it declines: it runs that instruction and jumps to the
 * program's own syscall, which traps.
 *
 *    0  mov %gs:XS_OFF_FAST_KEY,%rcx   (a fault here: xs_fast_fixup_fault)
 *    9  rdgsbase %r11
 *   14  lea (%rcx,%r11),%rcx           key + base: 0 for a live block
 *   18  jrcxz 30
 *   20  <the site's instruction>       decline
 *   25  jmp <the program's syscall>
 *   30  <the site's instruction>       enter
 *   35  lea <after the syscall>(%rip),%r11
 *   42  jmp *48(%rip)
 *   48  .quad xs_fast_entry
 *   56  .quad <the site>               (xs_stub_site, for signals)
 *
 * Stub memory is never unmapped: a stub whose site went away (munmap,
 * dlclose) is simply never reached again. Pages are read+execute; a new
 * stub is written with its page read+write+execute for the moment, so that
 * threads running other stubs of the page never fault.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "runtime/runtime.h"

#define CHUNK_SIZE (64 * 1024)
#define MAX_CHUNKS 512
#define REACH (1UL << 30)

struct chunk {
	unsigned long base;
	volatile uint32_t used;	/* stubs written */
};
static struct chunk g_chunks[MAX_CHUNKS];
static volatile uint32_t g_nchunks;

extern char xs_fast_entry[];

bool xs_stub_site(unsigned long addr, unsigned long *stub, unsigned long *site)
{
	uint32_t n = __atomic_load_n(&g_nchunks, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		unsigned long off = addr - g_chunks[i].base;
		if (off >= CHUNK_SIZE || off / XS_STUB_SIZE >= __atomic_load_n(&g_chunks[i].used, __ATOMIC_ACQUIRE))
			continue;
		*stub = g_chunks[i].base + off / XS_STUB_SIZE * XS_STUB_SIZE;
		*site = *(const unsigned long *)(*stub + 56);
		return true;
	}
	return false;
}

static bool near(unsigned long a, unsigned long b)
{
	return (a > b ? a - b : b - a) < REACH;
}

/* Map a chunk near addr: the kernel's choice if it is near, else the
 * first free place found stepping away from addr. */
static unsigned long map_near(unsigned long addr)
{
	unsigned long want = addr & ~(unsigned long)(CHUNK_SIZE - 1);
	for (unsigned long delta = 1UL << 20; delta < REACH; delta <<= 1) {
		for (int dir = -1; dir <= 1; dir += 2) {
			unsigned long hint = dir < 0 ? want - delta : want + delta;
			if (dir < 0 && hint > want)
				continue;
			long p = xs_syscall6(SYS_mmap, hint, CHUNK_SIZE, PROT_READ | PROT_EXEC,
					     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if ((unsigned long)p <= -4096UL) {
				if (near((unsigned long)p, addr))
					return (unsigned long)p;
				xs_sys2(SYS_munmap, p, CHUNK_SIZE);	/* an old kernel ignored the flag */
			}
		}
	}
	return 0;
}

static struct chunk *chunk_near(unsigned long addr)
{
	uint32_t n = g_nchunks;
	for (uint32_t i = 0; i < n; i++)
		if (g_chunks[i].used < CHUNK_SIZE / XS_STUB_SIZE && near(g_chunks[i].base, addr) &&
		    near(g_chunks[i].base + CHUNK_SIZE, addr))
			return &g_chunks[i];
	if (n == MAX_CHUNKS)
		return NULL;
	unsigned long base = map_near(addr);
	if (!base)
		return NULL;
	g_chunks[n].base = base;
	g_chunks[n].used = 0;
	__atomic_store_n(&g_nchunks, n + 1, __ATOMIC_RELEASE);
	return &g_chunks[n];
}

static void put32(unsigned char *p, long v)
{
	int32_t x = (int32_t)v;
	memcpy(p, &x, 4);
}

unsigned long xs_stub_make(unsigned long site, unsigned long call_insn, const unsigned char set_eax[5])
{
	struct chunk *c = chunk_near(site);
	if (!c)
		return 0;
	unsigned long stub = c->base + (unsigned long)c->used * XS_STUB_SIZE;
	unsigned char code[XS_STUB_SIZE] = {
		0x65, 0x48, 0x8b, 0x0c, 0x25, XS_OFF_FAST_KEY, 0, 0, 0,	/* mov %gs:KEY,%rcx */
		0xf3, 0x49, 0x0f, 0xae, 0xcb,				/* rdgsbase %r11 */
		0x4a, 0x8d, 0x0c, 0x19,					/* lea (%rcx,%r11),%rcx */
		0xe3, 30 - 20,						/* jrcxz enter */
	};
	memcpy(code + 20, set_eax, 5);
	code[25] = 0xe9;
	put32(code + 26, (long)call_insn - (long)(stub + 30));
	memcpy(code + 30, set_eax, 5);
	code[35] = 0x4c, code[36] = 0x8d, code[37] = 0x1d;	/* lea rel32(%rip),%r11 */
	put32(code + 38, (long)(call_insn + 2) - (long)(stub + 42));
	code[42] = 0xff, code[43] = 0x25;			/* jmp *0(%rip) */
	put32(code + 44, 0);
	unsigned long entry = (unsigned long)xs_fast_entry;
	memcpy(code + 48, &entry, 8);
	memcpy(code + 56, &site, 8);

	unsigned long page = stub & ~4095UL;
	if (xs_sys3(SYS_mprotect, page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		return 0;
	memcpy((void *)stub, code, sizeof(code));
	xs_sys3(SYS_mprotect, page, 4096, PROT_READ | PROT_EXEC);
	__atomic_store_n(&c->used, c->used + 1, __ATOMIC_RELEASE);
	return stub;
}
