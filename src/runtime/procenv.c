/*
 * The process's environment and auxiliary vector without the C library:
 * the start-up entry hands over the initial environment array (ld.so
 * passes it to a preloaded object's constructor; the loader of static
 * programs has it from the stack), and the auxiliary vector is the
 * (type, value) pairs after that array's NULL. The vector is copied at
 * once: clean_environment (runtime.c) zeroes the slots it frees, which
 * moves the array's end and makes the vector unreachable from it.
 *
 * The vDSO is found through AT_SYSINFO_EHDR and searched by its dynamic
 * symbol table; its addresses are link-time ones, moved by the load bias.
 */
#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include "runtime/freestanding.h"

char **g_envp;

/* Enough for every entry Linux passes today (about 25). */
#define AUXV_MAX 64
static unsigned long g_auxv[AUXV_MAX][2];
static unsigned g_auxv_count;

void xs_env_capture(char **envp, const void *auxv)
{
	char **p = envp;

	g_envp = envp;
	g_auxv_count = 0;
	if (!envp)
		return;
	while (*p)
		p++;
	const unsigned long *a = auxv ? auxv : (const void *)(p + 1);
	unsigned n = 0;
	bool have_pagesz = false;
	for (; n < AUXV_MAX && a[2 * n] != AT_NULL; n++) {
		g_auxv[n][0] = a[2 * n];
		g_auxv[n][1] = a[2 * n + 1];
		have_pagesz |= a[2 * n] == AT_PAGESZ && a[2 * n + 1] >= 4096 && !(a[2 * n + 1] & (a[2 * n + 1] - 1));
	}
	/* An array that is not the initial one (a dlopen after setenv moved
	 * environ) is followed by anything: no vector then, rather than
	 * pointers (AT_SYSINFO_EHDR) made of stray words. The kernel always
	 * passes AT_PAGESZ and ends the vector with AT_NULL. */
	g_auxv_count = n < AUXV_MAX && have_pagesz ? n : 0;
}

const char *xs_getenv(const char *name)
{
	size_t n = xs_strlen(name);

	if (!g_envp || !n)
		return NULL;
	for (char **e = g_envp; *e; e++)
		if (!xs_strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

unsigned long xs_getauxval(unsigned long type)
{
	for (unsigned i = 0; i < g_auxv_count; i++)
		if (g_auxv[i][0] == type)
			return g_auxv[i][1];
	return 0;
}

/* The number of dynamic symbols, from a GNU hash table: one past the last
 * symbol of the longest chain (the table has no count of its own). */
static uint32_t gnu_hash_symbols(const uint32_t *h)
{
	uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2];
	const uint32_t *buckets = h + 4 + 2 * bloom_size;	/* (64-bit bloom words) */
	const uint32_t *chain = buckets + nbuckets;
	uint32_t last = 0;

	for (uint32_t i = 0; i < nbuckets; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoffset)
		return symoffset;
	while (!(chain[last - symoffset] & 1))
		last++;
	return last + 1;
}

void *xs_vdso_sym(const char *name)
{
	uintptr_t base = xs_getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Phdr *ph;
	const Elf64_Dyn *dyn = NULL;
	const Elf64_Sym *syms = NULL;
	const char *strs = NULL;
	const uint32_t *hash = NULL, *gnu_hash = NULL;
	uintptr_t bias = 0;
	bool have_load = false;
	uint32_t count;

	if (!base || xs_memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			bias = base + ph[i].p_offset - ph[i].p_vaddr;
			have_load = true;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const Elf64_Dyn *)(uintptr_t)ph[i].p_vaddr;	/* (bias added below) */
		}
	}
	if (!have_load || !dyn)
		return NULL;
	dyn = (const Elf64_Dyn *)((uintptr_t)dyn + bias);
	for (; dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = dyn->d_un.d_ptr + bias;
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			syms = (const Elf64_Sym *)p;
			break;
		case DT_STRTAB:
			strs = (const char *)p;
			break;
		case DT_HASH:
			hash = (const uint32_t *)p;
			break;
		case DT_GNU_HASH:
			gnu_hash = (const uint32_t *)p;
			break;
		}
	}
	if (!syms || !strs || (!hash && !gnu_hash))
		return NULL;
	count = hash ? hash[1] : gnu_hash_symbols(gnu_hash);	/* (DT_HASH: nchain) */
	for (uint32_t i = 0; i < count; i++) {
		const Elf64_Sym *s = &syms[i];
		if (s->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s->st_info) != STT_FUNC)
			continue;
		if (!xs_strcmp(strs + s->st_name, name))
			return (void *)(bias + s->st_value);
	}
	return NULL;
}
