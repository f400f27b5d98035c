/*
 * Where the fast entry's fields sit in a thread block (struct xs_thread,
 * runtime.h, which checks them): the stubs and entry/trampoline.S address
 * them directly.
 */
#ifndef XS_ENTRY_OFFSETS_H
#define XS_ENTRY_OFFSETS_H

#define XS_OFF_FAST_KEY		8
#define XS_OFF_FAST_STACK	16
#define XS_OFF_FAST_IN		24
#define XS_OFF_FAST_FINISH	32
#define XS_OFF_FAST_FINISH_RAX	40
#define XS_OFF_FAST_FINISH_RIP	48
#define XS_OFF_HELD		56
#define XS_OFF_FAST_RSP		64

/* The number the finish trap carries (no system call has it). */
#define XS_NR_FAST_FINISH	0x58530001

#endif
