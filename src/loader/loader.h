/*
 * exitscope-ld: the loader that runs a statically linked program behind
 * the boundary (DESIGN.md §4.8). load.c maps the program; loader.c builds
 * its initial stack, starts the runtime and enters it.
 */
#ifndef XS_LOADER_H
#define XS_LOADER_H

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>

#define XS_LD_MAX_PHDR 128

struct xs_ld_program {
	int fd;
	Elf64_Ehdr eh;
	Elf64_Phdr ph[XS_LD_MAX_PHDR];
	int nload;
	uintptr_t bias;			/* load address - link address */
	uintptr_t phdr, entry;		/* for the auxv */
	uintptr_t start_code, end_code, start_data, end_data;
	bool exec_stack;		/* PT_GNU_STACK asks for it */
};

/* NULL, or why p->fd cannot be run by exitscope-ld. */
const char *xs_ld_check(struct xs_ld_program *p);
/* Map a checked program: NULL, or what failed. */
const char *xs_ld_map(struct xs_ld_program *p);

#endif
