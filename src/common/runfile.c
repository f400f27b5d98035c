/*
 * Scanning a run file without a JSON parser (see runfile.h): the runtime
 * does it inside the program, before it closes a run-wide window.
 */
#include <string.h>
#include "common/runfile.h"

static const char *field_u64(const char *p, const char *end, const char *name, uint64_t *v)
{
	size_t n = strlen(name);
	if ((size_t)(end - p) < n || memcmp(p, name, n))
		return NULL;
	p += n;
	uint64_t x = 0;
	const char *digits = p;
	while (p < end && *p >= '0' && *p <= '9')
		x = x * 10 + (uint64_t)(*p++ - '0');
	if (p == digits)
		return NULL;
	*v = x;
	return p;
}

static void live_remove(struct xs_runfile_scan *s, int pid)
{
	for (size_t i = 0; i < s->live_count; i++)
		if (s->live[i] == pid) {
			memmove(&s->live[i], &s->live[i + 1], (s->live_count - i - 1) * sizeof(int));
			s->live_count--;
			return;
		}
}

static void live_add(struct xs_runfile_scan *s, int pid)
{
	for (size_t i = 0; i < s->live_count; i++)
		if (s->live[i] == pid)
			return;
	if (s->live_count < s->live_max)
		s->live[s->live_count++] = pid;
	else
		s->live_dropped++;
}

void xs_runfile_scan(const char *data, size_t size, struct xs_runfile_scan *s)
{
	static const char head[] = "{\"event\": \"";
	const char *p = data, *end = data + size;
	s->live_count = s->live_dropped = 0;
	s->last_window = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *q = p;
		p = nl ? nl + 1 : end;
		if (!nl)
			break;	/* a line being written */
		if ((size_t)(eol - q) < sizeof(head) || memcmp(q, head, sizeof(head) - 1))
			continue;
		q += sizeof(head) - 1;
		const char *kind = q;
		while (q < eol && *q != '"')
			q++;
		size_t kind_len = (size_t)(q - kind);
		q++;
		uint64_t v;
		if (kind_len == 6 && !memcmp(kind, "window", 6)) {
			if (field_u64(q, eol, ", \"run_window\": ", &v) && v > s->last_window && v < 0xffffffffu)
				s->last_window = (uint32_t)v;
			continue;
		}
		if (!field_u64(q, eol, ", \"pid\": ", &v) || v == 0 || v > 0x3fffffff)
			continue;
		if ((kind_len == 5 && !memcmp(kind, "start", 5)) || (kind_len == 4 && !memcmp(kind, "exec", 4)))
			live_add(s, (int)v);
		else if (kind_len == 3 && !memcmp(kind, "end", 3))
			live_remove(s, (int)v);
	}
}
