/*
 * The time of a call, in TSC ticks. Two clock_gettime reads a call (23 ns
 * each on this machine kind) cost as much as the fast entry itself; two
 * rdtsc cost 20 ns. Ticks become ns only when a record is written, with one
 * scale fixed for the life of the process: measured the first time it is
 * needed, over the time since start-up (CLOCK_MONOTONIC_RAW against the
 * TSC), and handed to exec'd images, so that a window's ns is the
 * difference of two converted totals and the windows add up to the total.
 *
 * Without an invariant TSC (CPUID 0x80000007 EDX bit 8) ticks are
 * CLOCK_MONOTONIC ns and the scale is 1.
 *
 * The clocks themselves are read through the vDSO's __vdso_clock_gettime
 * (found once, at start-up, before the first read), else with the system
 * call: no C library, no errno, no lock, so any handler may read them.
 */
#include <elf.h>
#include <time.h>
#include <sys/syscall.h>
#include <cpuid.h>
#include "runtime/runtime.h"

bool g_ticks_are_ns;
static uint64_t g_scale;	/* ns = ticks * g_scale >> 32; 0: not fixed yet */
static uint64_t g_start_ticks, g_start_raw;
/* (the vDSO's function returns 0 or a negative errno, as the call does) */
static int (*g_vdso_clock_gettime)(clockid_t clock, struct timespec *ts);

int xs_clock_gettime(clockid_t clock, struct timespec *ts)
{
	if (g_vdso_clock_gettime)
		return g_vdso_clock_gettime(clock, ts);
	return (int)xs_sys2(SYS_clock_gettime, clock, ts);
}

static uint64_t now_raw(void)
{
	struct timespec ts;
	xs_clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int xs_clock_init(void)
{
	unsigned a, b, c, d;
	g_vdso_clock_gettime = (int (*)(clockid_t, struct timespec *))xs_vdso_sym("__vdso_clock_gettime");
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8))) {
		g_ticks_are_ns = true;
		g_scale = 1ULL << 32;
		return 0;
	}
	const char *v = xs_getenv("EXITSCOPE_TICK_SCALE");	/* from the image before exec */
	if (v)
		g_scale = xs_strtoull(v, NULL, 10);
	g_start_raw = now_raw();
	g_start_ticks = xs_ticks();
	return 0;
}

uint64_t xs_clock_scale(void)
{
	return g_scale;
}

static void fix_scale(void)
{
	uint64_t raw = now_raw(), ticks = xs_ticks();
	uint64_t dns = raw - g_start_raw, dticks = ticks - g_start_ticks;
	if (!dticks || !dns) {
		g_scale = 1ULL << 32;	/* no time has passed: any scale converts 0 */
		return;
	}
	g_scale = (uint64_t)(((unsigned __int128)dns << 32) / dticks);
}

uint64_t xs_ticks_to_ns(uint64_t ticks)
{
	if (XS_UNLIKELY(!g_scale))
		fix_scale();
	return (uint64_t)(((unsigned __int128)ticks * g_scale) >> 32);
}
