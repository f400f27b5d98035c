/*
 * The runtime without a C library. The same runtime objects go into
 * libexitscope.so (preloaded into a dynamically linked program) and into
 * exitscope-ld (the loader of static programs), so they may not import
 * anything: the few C library functions they use are here.
 *
 * freestanding.c: the string and number functions, under xs_ names; the
 * runtime build (XS_RUNTIME) also defines the <string.h> names (memcpy,
 * strlen, ...) as hidden aliases of them, so callers keep the
 * usual names, gcc's own memcpy/memset calls for struct copies land here,
 * and the program's functions of those names are never touched. The unit
 * tests compile the file without XS_RUNTIME and call the xs_ names.
 *
 * procenv.c: the process's initial environment and auxiliary vector, as
 * the start-up entry found them, and symbols of the vDSO.
 *
 * Nothing here sets errno, takes a lock or allocates: all of it may run in
 * a signal handler.
 */
#ifndef XS_RUNTIME_FREESTANDING_H
#define XS_RUNTIME_FREESTANDING_H

#include <stddef.h>

/* ---- freestanding.c: as in C, without errno ---- */
void *xs_memcpy(void *dst, const void *src, size_t n);
void *xs_memmove(void *dst, const void *src, size_t n);
void *xs_memset(void *dst, int c, size_t n);
int xs_memcmp(const void *a, const void *b, size_t n);
void *xs_memchr(const void *s, int c, size_t n);
size_t xs_strlen(const char *s);
size_t xs_strnlen(const char *s, size_t max);
int xs_strcmp(const char *a, const char *b);
int xs_strncmp(const char *a, const char *b, size_t n);
char *xs_strcpy(char *dst, const char *src);
char *xs_strcat(char *dst, const char *src);
char *xs_strchr(const char *s, int c);
char *xs_strrchr(const char *s, int c);
size_t xs_strcspn(const char *s, const char *reject);
char *xs_strstr(const char *haystack, const char *needle);
/* Bases 0 and 2..36 as in C (leading space, a sign, 0x/0 prefixes); a
 * value out of range saturates as in C, without errno; another base
 * converts nothing (0, *end = s). */
long xs_strtol(const char *s, char **end, int base);
unsigned long xs_strtoul(const char *s, char **end, int base);
unsigned long long xs_strtoull(const char *s, char **end, int base);

/* ---- procenv.c: environment, auxiliary vector, vDSO ---- */

/* The environment array the process started with (the one on the initial
 * stack, which clean_environment edits in place); NULL when unknown. */
extern char **g_envp;

/* Take envp as g_envp and copy the auxiliary vector: auxv, or when NULL
 * the one that follows envp's NULL (the kernel's layout of the initial
 * stack). envp must be that array (what ld.so passes to an ELF
 * constructor) or exitscope-ld's copy of exitscope's variables, or NULL;
 * call before anything edits it. What follows the NULL is taken for an
 * auxiliary vector only if it has AT_PAGESZ and ends within 64 entries. */
void xs_env_capture(char **envp, const void *auxv);

/* The value of the variable name in g_envp, or NULL. */
const char *xs_getenv(const char *name);

/* The auxiliary vector's value for type (AT_*), or 0 when absent. */
unsigned long xs_getauxval(unsigned long type);

/* The address of the function name exported by the vDSO (version ignored),
 * or NULL when there is no vDSO or no such symbol. */
void *xs_vdso_sym(const char *name);

#endif
