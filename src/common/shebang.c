#include "common/shebang.h"

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

bool xs_shebang(char *head, size_t len, char **interp, char **arg, bool *complete)
{
	if (len < 2 || head[0] != '#' || head[1] != '!')
		return false;
	head[len] = 0;
	char *end = head + 2;
	while (*end && *end != '\n')
		end++;
	*complete = *end == '\n';
	*end = 0;
	char *p = head + 2;
	while (blank(*p))
		p++;
	*interp = p;
	while (*p && !blank(*p))
		p++;
	*arg = NULL;
	if (!*p)
		return true;
	*p++ = 0;
	while (blank(*p))
		p++;
	while (end > p && blank(end[-1]))
		*--end = 0;
	if (*p)
		*arg = p;
	return true;
}
