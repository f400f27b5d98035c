/*
 * A script's "#!" line, read as the kernel's binfmt_script reads it: the
 * interpreter up to the first blank, then at most one argument (the rest of
 * the line, blanks around it dropped). Shared by `exitscope run`, the
 * runtime's exec routing and exitscope-ld, so that all three judge a script
 * alike.
 */
#ifndef XS_COMMON_SHEBANG_H
#define XS_COMMON_SHEBANG_H

#include <stdbool.h>
#include <stddef.h>

/* The first bytes the kernel reads of a file to tell what it is. */
#define XS_SHEBANG_MAX 256

/* head holds the file's first len bytes (len < its size: a NUL is put
 * after them). True if they start "#!"; then *interp (empty when the line
 * names none) and *arg (NULL when none) point into head, split in place,
 * and *complete says whether the line ended within them. */
bool xs_shebang(char *head, size_t len, char **interp, char **arg, bool *complete);

#endif
