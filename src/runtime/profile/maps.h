/*
 * The process's own mappings (/proc/self/maps) and the GNU build ids of the
 * files behind them, read with raw system calls only: no allocation, no
 * stdio, no locks, so the profiler can call it from the service thread of
 * a program it does not own. Memory comes from the caller (a scratch
 * buffer); nothing here keeps state between calls.
 */
#ifndef XS_PROFILE_MAPS_H
#define XS_PROFILE_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line of /proc/self/maps. path is NUL-terminated, valid only during
 * the callback, with " (deleted)" removed (deleted is set instead); it is
 * "" for an anonymous mapping and "[heap]", "[vdso]", ... for the special
 * ones. prot is PROT_* and flags MAP_SHARED or MAP_PRIVATE. */
struct xs_map {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min;
	uint32_t prot, flags;
	bool deleted;
	const char *path;
};

/* Call fn for every mapping of the calling process, in address order; a
 * non-zero return from fn stops the walk and is returned. scratch (at
 * least 8 KiB; a line longer than scratch_size - 1 is skipped) holds the
 * text while it is parsed. Returns 0, fn's value, or a negative errno
 * (-EINVAL for a scratch buffer that is too small). */
int xs_maps_walk(int (*fn)(const struct xs_map *m, void *arg), void *arg, char *scratch,
		 size_t scratch_size);

#define XS_BUILD_ID_MAX 20

/* Read the GNU build id of the ELF file mapped as m into id (at least
 * XS_BUILD_ID_MAX bytes); returns its size in bytes, 0 when the file has
 * none or is not ELF, or a negative errno when it cannot be read. The
 * file at m->path is used only if its device and inode are m's (so a
 * binary rebuilt since it was mapped is not mistaken for it); otherwise,
 * and for deleted files, /proc/self/map_files/ is tried (it needs
 * CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE; without it the result is
 * -EACCES or -ENOENT). scratch: at least 4 KiB. */
int xs_build_id_read(const struct xs_map *m, uint8_t *id, char *scratch, size_t scratch_size);

#endif
