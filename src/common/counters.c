/*
 * Arithmetic on counter blocks, shared by the runtime (folding threads into
 * windows) and the CLI (diffs between records).
 */
#include <stddef.h>
#include "common/counters.h"

void xs_counters_add(struct xs_counters *dst, const struct xs_counters *src)
{
	const uint64_t *s = (const uint64_t *)src;
	uint64_t *d = (uint64_t *)dst;
	for (size_t i = 0; i < sizeof(*src) / sizeof(uint64_t); i++)
		d[i] += s[i];
}
