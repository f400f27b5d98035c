/* strace -c's table rows (stracetab.h). No libc beyond what buf.c uses: the
 * runtime links this too. */
#include "common/stracetab.h"

const char g_xs_strace_rule[] = "  ------ ----------- ----------- --------- --------- ----------------\n";

void xs_strace_row(struct xs_buf *b, uint64_t ns, uint64_t all_ns, uint64_t calls, uint64_t errors)
{
	uint64_t pct = all_ns ? (ns * 10000 + all_ns / 2) / all_ns : 0;
	xs_buf_fixed(b, pct, 2, 8);
	xs_buf_fixed(b, ns / 1000, 6, 12);
	xs_buf_u64(b, calls ? ns / 1000 / calls : 0, 12);
	xs_buf_u64(b, calls, 10);
	if (errors)
		xs_buf_u64(b, errors, 10);
	else
		xs_buf_add(b, "          ");
	xs_buf_addc(b, ' ');
}
