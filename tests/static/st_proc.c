/* What a static program sees of itself in /proc (t950): cmdline, comm,
 * environ, auxv, and the links to its executable. One "key value" line
 * each; the test compares the lines with the native run's.
 * Addresses are printed only for an ET_EXEC program (fixed addresses);
 * for a static-pie they are checked against the program's own headers. */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

extern const Elf64_Ehdr __ehdr_start;
extern char _start[];
extern char **environ;

static size_t slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	size_t n = 0;
	ssize_t r;
	if (fd < 0)
		return 0;
	while (n < size && (r = read(fd, buf + n, size - n)) > 0)
		n += (size_t)r;
	close(fd);
	return n;
}

static void show_link(const char *key, const char *path)
{
	char buf[4096];
	ssize_t n = readlink(path, buf, sizeof buf - 1);
	buf[n < 0 ? 0 : n] = 0;
	printf("%s %s\n", key, n < 0 ? "(error)" : buf);
}

/* NUL-separated strings, printed one per line after KEY; EXITSCOPE_
 * variables counted apart */
static void show_strings(const char *key, const char *buf, size_t n)
{
	int hidden = 0;
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
		if (strncmp(buf + i, "EXITSCOPE_", 10) == 0)
			hidden++;
		printf("%s [%s]\n", key, buf + i);
	}
	printf("%s-exitscope-variables %d\n", key, hidden);
}

int main(int argc, char **argv, char **envp)
{
	static char buf[1 << 16];
	size_t n;

	n = slurp("/proc/self/cmdline", buf, sizeof buf);
	show_strings("cmdline", buf, n);
	n = slurp("/proc/self/comm", buf, sizeof buf);
	printf("comm %.*s", (int)n, buf);
	n = slurp("/proc/self/environ", buf, sizeof buf);
	show_strings("environ", buf, n);
	int vars = 0;
	for (char **e = environ; *e; e++)
		vars++;
	printf("environ-libc-count %d\n", vars);

	/* the auxv the program was started with: after envp's NULL on the
	 * initial stack; /proc/self/auxv must hold the same pairs */
	char **e = envp;
	while (*e)
		e++;
	const Elf64_auxv_t *stack = (const Elf64_auxv_t *)(e + 1);
	n = slurp("/proc/self/auxv", buf, sizeof buf);
	const Elf64_auxv_t *proc = (const Elf64_auxv_t *)buf;
	size_t count = n / sizeof *proc, i;
	for (i = 0; i < count; i++)
		if (proc[i].a_type != stack[i].a_type || proc[i].a_un.a_val != stack[i].a_un.a_val)
			break;
	printf("auxv-proc-equals-stack %s\n", count > 0 && i == count && stack[count - 1].a_type == AT_NULL ? "yes" : "no");
	unsigned long phdr = getauxval(AT_PHDR), entry = getauxval(AT_ENTRY);
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	printf("auxv-phdr-is-program %s\n", phdr == (unsigned long)&__ehdr_start + __ehdr_start.e_phoff ? "yes" : "no");
	printf("auxv-entry-is-program %s\n", entry == (unsigned long)_start ? "yes" : "no");
	printf("auxv-phnum %lu (program %u)\n", getauxval(AT_PHNUM), __ehdr_start.e_phnum);
	printf("auxv-phent %lu\n", getauxval(AT_PHENT));
	printf("auxv-base %#lx\n", getauxval(AT_BASE));
	printf("auxv-execfn %s\n", execfn ? execfn : "(none)");
	if (__ehdr_start.e_type == ET_EXEC)
		printf("auxv-addresses phdr %#lx entry %#lx\n", phdr, entry);

	show_link("exe", "/proc/self/exe");
	show_link("thread-self-exe", "/proc/thread-self/exe");
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)getpid());
	show_link("pid-exe", path);
	printf("argv0 %s argc %d\n", argv[0], argc);
	return 0;
}
