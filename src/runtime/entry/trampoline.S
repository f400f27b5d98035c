/*
 * The fast entry: where every stub (entry/stubs.c) jumps once it has found
 * the thread's block through %gs. On entry: eax = the call's number, r11 =
 * where the program goes on after its `syscall`, rcx free; every other
 * register, the stack pointer and RFLAGS are the program's.
 *
 * Nothing is written below the program's stack pointer (no red zone to step
 * over, and a goroutine's 2 KiB stack is safe): the entry switches to the
 * thread's runtime stack at once and builds there, from its top down, the
 * frame xs_fast_call reads (struct xs_fast_frame, entry/fast.c):
 *   top-8  the program's rsp     top-16 its RFLAGS    top-24 resume
 *   top-32 its rbp               top-40 nr            top-88 a[0..5]
 * xs_fast_call returns the program's rax and may change resume (a decline
 * goes to the program's own `syscall`, which then traps). Then every
 * register the kernel preserves comes back, rcx = where it goes, r11 = its
 * RFLAGS, as after a real syscall. The C code uses no vector register.
 *
 * Signals: a runtime handler that interrupts these instructions makes its
 * context the program's first (xs_fast_normalize, which knows the labels
 * below): before the call for the entry part, after it for the exit part.
 * The exit part first looks for signals held while the call ran, and for a
 * seccomp trap of the program's call: those end through the finish trap,
 * so that the SIGSYS handler delivers them at the program's context.
 * Entered and left with jmp, never a fabricated ret (shadow stacks).
 */
#include "runtime/entry/offsets.h"

#define FRAME_RESUME	64

.macro RESTORE_ARGS_AND_LEAVE_STACK
	leaq 8(%rsp), %rsp		/* the alignment slot; rsp = the frame */
	popq %rdi
	popq %rsi
	popq %rdx
	popq %r10
	popq %r8
	popq %r9
	movq 16(%rsp), %rcx		/* resume */
	movq 24(%rsp), %r11		/* RFLAGS, as the kernel leaves them in r11 */
	leaq 24(%rsp), %rsp
.endm

	.text
	.p2align 4
	.globl xs_fast_code_start, xs_fast_entry, xs_fast_entry_switched, xs_fast_entry_framed
	.globl xs_fast_exit, xs_fast_exit_late, xs_fast_exit_on_program_stack
	.globl xs_fast_finish_on_program_stack, xs_fast_finish, xs_fast_code_end
	.hidden xs_fast_code_start, xs_fast_entry, xs_fast_entry_switched, xs_fast_entry_framed
	.hidden xs_fast_exit, xs_fast_exit_late, xs_fast_exit_on_program_stack
	.hidden xs_fast_finish_on_program_stack, xs_fast_finish, xs_fast_code_end
	.type xs_fast_entry,@function
xs_fast_code_start:
xs_fast_entry:
	rdgsbase %rcx
	movq %rsp, XS_OFF_FAST_RSP(%rcx)
	movq XS_OFF_FAST_STACK(%rcx), %rsp
xs_fast_entry_switched:			/* rsp: the runtime stack's top */
	pushq XS_OFF_FAST_RSP(%rcx)
	pushfq
	pushq %r11
	pushq %rbp
	pushq %rax
	pushq %r9
	pushq %r8
	pushq %r10
	pushq %rdx
	pushq %rsi
	pushq %rdi
xs_fast_entry_framed:			/* the frame is whole; rsi and rdi become ours */
	movq %rsp, %rsi
	movq %rcx, %rdi
	leaq -8(%rsp), %rsp
	movq $1, XS_OFF_FAST_IN(%rcx)
	cld				/* (the program's RFLAGS are in the frame) */
	call xs_fast_call
xs_fast_exit:				/* the call is done, rax = the program's */
	rdgsbase %rcx
	movq $0, XS_OFF_FAST_IN(%rcx)
	movq XS_OFF_HELD(%rcx), %rdx
	orq XS_OFF_FAST_FINISH(%rcx), %rdx
	jnz 1f
	RESTORE_ARGS_AND_LEAVE_STACK
	popfq
	popq %rsp
xs_fast_exit_on_program_stack:
	jmp *%rcx

1:	/* the finish trap: the SIGSYS handler finds the outcome in the block */
	movq %rax, XS_OFF_FAST_FINISH_RAX(%rcx)
	movq 8+FRAME_RESUME(%rsp), %rdx
	movq %rdx, XS_OFF_FAST_FINISH_RIP(%rcx)
xs_fast_exit_late:
	RESTORE_ARGS_AND_LEAVE_STACK
	popfq
	popq %rsp
xs_fast_finish_on_program_stack:
	movl $XS_NR_FAST_FINISH, %eax
xs_fast_finish:
	syscall				/* outside the allowed region: it traps */
	ud2
xs_fast_code_end:
	.size xs_fast_entry, .-xs_fast_entry

	.section .note.GNU-stack,"",@progbits
