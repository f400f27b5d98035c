/*
 * The allowed region: every `syscall` instruction the runtime owns, and the
 * stubs through which calls that must run in the program's own context
 * (rt_sigreturn, clone with a new stack, vfork) continue. Syscall User
 * Dispatch lets calls issued from [xs_region_start, xs_region_end) through;
 * the kernel checks the address after the instruction, so the region ends
 * with padding.
 */
	.section .text.xs_region,"ax",@progbits
	.p2align 4
	.globl xs_region_start
	.hidden xs_region_start
xs_region_start:

/* (nr, a1..a6) as a C call passes them -> as the syscall instruction takes them */
.macro C_ARGS_TO_SYSCALL
	movq %rdi, %rax
	movq %rsi, %rdi
	movq %rdx, %rsi
	movq %rcx, %rdx
	movq %r8, %r10
	movq %r9, %r8
	movq 8(%rsp), %r9
.endm

/* long xs_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6) */
	.globl xs_syscall6
	.hidden xs_syscall6
	.type xs_syscall6,@function
xs_syscall6:
	.cfi_startproc
	C_ARGS_TO_SYSCALL
	syscall
	ret
	.cfi_endproc
	.size xs_syscall6, .-xs_syscall6

/* long xs_syscall6_prog(...): the program's own call. A signal for the
 * program that interrupts it is seen at xs_prog_syscall_insn (the kernel
 * wound rip back to restart it) or right after it (signals.c). rcx tells a
 * rewound call from one not issued yet: the syscall instruction sets it to
 * the address after itself, and it is 0 until then. */
	.globl xs_syscall6_prog
	.hidden xs_syscall6_prog
	.globl xs_prog_syscall_insn
	.hidden xs_prog_syscall_insn
	.type xs_syscall6_prog,@function
xs_syscall6_prog:
	.cfi_startproc
	C_ARGS_TO_SYSCALL
	xorl %ecx, %ecx
xs_prog_syscall_insn:
	syscall
	ret
	.cfi_endproc
	.size xs_syscall6_prog, .-xs_syscall6_prog

/* The sa_restorer of every handler the runtime installs. */
	.globl xs_restorer
	.hidden xs_restorer
	.type xs_restorer,@function
	.p2align 4
	nop
xs_restorer:
	movq $15, %rax
	syscall
	hlt
	.size xs_restorer, .-xs_restorer

/* The program's own rt_sigreturn, moved out of the SIGSYS handler: rsp
 * points at the program's signal frame again. */
	.globl xs_stub_sigreturn
	.hidden xs_stub_sigreturn
	.type xs_stub_sigreturn,@function
xs_stub_sigreturn:
	movq $15, %rax
	syscall
	hlt
	.size xs_stub_sigreturn, .-xs_stub_sigreturn

/*
 * clone/clone3/vfork continued in the program's context. On entry every
 * register is the program's at the call (rax = number). Afterwards the
 * parent asks xs_redirect_parent (its block's redirect stack) where to go
 * back; the child asks xs_child_start, which sets up its block and dispatch.
 * All registers but rax, rcx and r11 come back as the program left them,
 * as after a real syscall.
 */
.macro SAVE_ARGS
	pushq %rdi
	pushq %rsi
	pushq %rdx
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %rbp
	movq %rsp, %rbp
	andq $-16, %rsp
.endm
.macro RESTORE_ARGS
	movq %rbp, %rsp
	popq %rbp
	popq %r10
	popq %r9
	popq %r8
	popq %rdx
	popq %rsi
	popq %rdi
.endm

	.globl xs_stub_clone_newstack
	.hidden xs_stub_clone_newstack
	.type xs_stub_clone_newstack,@function
xs_stub_clone_newstack:
	syscall
	testq %rax, %rax
	jnz redirect_parent
	/* Child on its new stack: the handoff (rip, block, kind, the
	 * program's %gs) sits at sp-152..sp-120, below where a red zone
	 * would be. */
	leaq -152(%rsp), %rax
	xchgq %rax, %rsp		/* rsp = handoff, rax = the child's sp */
	pushq %rax
	SAVE_ARGS
	leaq 64(%rbp), %rdi		/* &handoff: just above the saved sp */
	call xs_child_start_handoff
	movq %rax, %r11
	RESTORE_ARGS
	popq %rsp
	xorl %eax, %eax
	jmp *%r11
	.size xs_stub_clone_newstack, .-xs_stub_clone_newstack

	.globl xs_stub_clone_samestack
	.hidden xs_stub_clone_samestack
	.type xs_stub_clone_samestack,@function
xs_stub_clone_samestack:
	syscall
	testq %rax, %rax
	jnz redirect_parent
	/* Child on the parent's stack (vfork): the parent is suspended, so its
	 * block's redirect stack still holds the handoff. */
	leaq -128(%rsp), %rsp
	SAVE_ARGS
	call xs_child_start_shared
	movq %rax, %r11
	RESTORE_ARGS
	leaq 128(%rsp), %rsp
	xorl %eax, %eax
	jmp *%r11

redirect_parent:
	leaq -128(%rsp), %rsp
	SAVE_ARGS
	movq %rax, %rdi
	call xs_redirect_parent		/* returns rax = result, rdx = rip */
	movq %rdx, %r11
	movq %rax, %rcx
	RESTORE_ARGS
	leaq 128(%rsp), %rsp
	movq %rcx, %rax
	jmp *%r11
	.size xs_stub_clone_samestack, .-xs_stub_clone_samestack

/* long xs_clone_service(unsigned long flags, void *stack_top, void (*entry)(void)):
 * a thread of the runtime's own, starting at entry on its own stack. */
	.globl xs_clone_service
	.hidden xs_clone_service
	.type xs_clone_service,@function
xs_clone_service:
	movq %rdx, %r9
	xorl %edx, %edx
	xorl %r10d, %r10d
	xorl %r8d, %r8d
	movl $56, %eax
	syscall
	testq %rax, %rax
	jnz 1f
	xorl %ebp, %ebp
	andq $-16, %rsp
	call *%r9
	hlt
1:	ret
	.size xs_clone_service, .-xs_clone_service

/* long xs_copy_user(void *dst, const void *src, size_t n): a fault in here
 * resumes at xs_copy_user_fault (signals.c edits the context). */
	.globl xs_copy_user
	.hidden xs_copy_user
	.globl xs_copy_user_end
	.hidden xs_copy_user_end
	.globl xs_copy_user_fault
	.hidden xs_copy_user_fault
	.type xs_copy_user,@function
xs_copy_user:
	movq %rdx, %rcx
	rep movsb
	xorl %eax, %eax
	ret
xs_copy_user_end:
xs_copy_user_fault:
	movq $-14, %rax
	ret
	.size xs_copy_user, .-xs_copy_user

	.p2align 4
	.globl xs_region_end
	.hidden xs_region_end
	nop
	nop
xs_region_end:
	int3

/* long xs_call_on_stack(void *stack_top, long (*fn)(void *), void *arg):
 * outside the region (it issues no system call). */
	.text
	.globl xs_call_on_stack
	.hidden xs_call_on_stack
	.type xs_call_on_stack,@function
xs_call_on_stack:
	.cfi_startproc
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq %rsp, %rbp
	.cfi_def_cfa_register %rbp
	movq %rdi, %rsp
	movq %rdx, %rdi
	call *%rsi
	movq %rbp, %rsp
	popq %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size xs_call_on_stack, .-xs_call_on_stack

	.section .note.GNU-stack,"",@progbits
