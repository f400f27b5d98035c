/*
 * Credentials follow the program. Linux keeps credentials per thread, and
 * glibc's setuid() and friends apply a change to every thread *it* knows;
 * the runtime's service thread is not one of them. A server that starts as
 * root and drops privileges would otherwise keep a root thread in a process
 * that has given root up.
 *
 * So after a program thread changes its credentials (uids, gids, fs ids,
 * supplementary groups, capabilities), it captures the whole set and waits
 * until the service thread has taken the same set. The service thread has
 * at least the old privileges, so it can always follow a drop, and it
 * follows a raise that the program was allowed (a saved uid of 0).
 *
 * Ownership: g_creds (one mapping, zeroed in a fork child) is written under
 * its lock by the program thread that asks, and read under the lock by the
 * service thread; `applied` is the futex word the asking thread waits on.
 */
#include <errno.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include "runtime/runtime.h"

#define MAX_GROUPS 65536	/* NGROUPS_MAX */

struct creds {
	uint32_t ruid, euid, suid, fsuid;
	uint32_t rgid, egid, sgid, fsgid;
	struct __user_cap_data_struct cap[2];
	uint32_t ngroups;
	uint32_t groups[MAX_GROUPS];
};

static struct {
	volatile int lock;
	volatile uint32_t wanted;	/* requests made */
	volatile uint32_t applied;	/* requests the service thread has served */
	struct creds want;		/* the latest request */
	struct creds have;		/* the service thread's copy while applying */
	struct creds now;		/* ...and what it has after (too big for a stack) */
} *g_creds;

/* The calling thread's credentials. */
static void capture(struct creds *c)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	xs_sys3(SYS_getresuid, &c->ruid, &c->euid, &c->suid);
	xs_sys3(SYS_getresgid, &c->rgid, &c->egid, &c->sgid);
	c->fsuid = (uint32_t)xs_sys1(SYS_setfsuid, -1);	/* -1 changes nothing: a query */
	c->fsgid = (uint32_t)xs_sys1(SYS_setfsgid, -1);
	memset(c->cap, 0, sizeof(c->cap));
	xs_sys2(SYS_capget, &hdr, c->cap);
	long n = xs_sys2(SYS_getgroups, MAX_GROUPS, c->groups);
	c->ngroups = n > 0 ? (uint32_t)n : 0;
}

static size_t creds_size(const struct creds *c)
{
	return offsetof(struct creds, groups) + c->ngroups * sizeof(c->groups[0]);
}

int xs_creds_init(void)
{
	if (!g_creds)
		g_creds = xs_map(sizeof(*g_creds), true);
	return g_creds ? 0 : -ENOMEM;
}

void xs_creds_changed(struct xs_thread *t)
{
	static int warned;
	sigset_t old;
	if (!g_creds || t->kind != XS_KIND_THREAD || !g_service_tid)
		return;
	xs_lock_blocked(&g_creds->lock, &old);
	capture(&g_creds->want);
	/* nothing new since the set the service thread took last (glibc's
	 * setxid broadcast makes every thread ask for the same set) */
	bool same = g_creds->applied == g_creds->wanted && g_creds->wanted &&
		    creds_size(&g_creds->want) == creds_size(&g_creds->have) &&
		    !memcmp(&g_creds->want, &g_creds->have, creds_size(&g_creds->want));
	uint32_t mine = same ? g_creds->wanted : ++g_creds->wanted;
	xs_unlock_blocked(&g_creds->lock, &old);
	if (same)
		return;
	xs_control_poke();
	/* Wait (bounded: the service thread may be stuck behind a process
	 * end) until it has served this request or a later one. */
	for (int i = 0; i < 200; i++) {
		uint32_t done = __atomic_load_n(&g_creds->applied, __ATOMIC_ACQUIRE);
		if ((int32_t)(done - mine) >= 0)
			return;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		xs_sys4(SYS_futex, &g_creds->applied, FUTEX_WAIT_PRIVATE, done, &ts);
	}
	xs_warn_once(&warned, "exitscope: the service thread did not follow a credential change "
			      "within 2 s\n");
}

/* Take the set c (service thread). Groups and gids first, while the
 * thread may still have the right to set them; then uids, keeping the
 * capabilities across so that the wanted ones can be set exactly. */
static bool apply(const struct creds *c)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct creds *now = &g_creds->now;
	xs_sys5(SYS_prctl, PR_SET_KEEPCAPS, 1, 0, 0, 0);
	xs_sys2(SYS_setgroups, c->ngroups, c->groups);
	xs_sys3(SYS_setresgid, c->rgid, c->egid, c->sgid);
	xs_sys3(SYS_setresuid, c->ruid, c->euid, c->suid);
	xs_sys2(SYS_capset, &hdr, c->cap);
	xs_sys1(SYS_setfsgid, c->fsgid);
	xs_sys1(SYS_setfsuid, c->fsuid);
	xs_sys5(SYS_prctl, PR_SET_KEEPCAPS, 0, 0, 0, 0);
	capture(now);
	return creds_size(now) == creds_size(c) && !memcmp(now, c, creds_size(c));
}

bool xs_creds_follow(void)
{
	static int warned;
	sigset_t old;
	if (!g_creds)
		return false;
	uint32_t wanted = __atomic_load_n(&g_creds->wanted, __ATOMIC_ACQUIRE);
	if (wanted == g_creds->applied)
		return false;
	xs_lock_blocked(&g_creds->lock, &old);
	wanted = g_creds->wanted;
	memcpy(&g_creds->have, &g_creds->want, creds_size(&g_creds->want));
	xs_unlock_blocked(&g_creds->lock, &old);
	if (!apply(&g_creds->have))
		xs_warn_once(&warned, "exitscope: the service thread could not take the program's new "
				      "credentials exactly\n");
	__atomic_store_n(&g_creds->applied, wanted, __ATOMIC_RELEASE);
	xs_sys3(SYS_futex, &g_creds->applied, FUTEX_WAKE_PRIVATE, 0x7fffffff);
	return true;
}
