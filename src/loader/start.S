/*
 * exitscope-ld's entry. The kernel starts it with the initial stack of the
 * program it is to run (argc, argv, envp, auxv: the argv and environment
 * are the program's), without a dynamic loader: nothing is relocated yet.
 */
	.text
	.globl _start
	.hidden _start
	.type _start, @function
_start:
	xor %ebp, %ebp			/* the outermost frame, for unwinders */
	mov %rsp, %rdi			/* the initial stack */
	/* our own stack (loader.c): the program's is rebuilt under its strings */
	lea xs_ld_stack+65536(%rip), %rsp
	call xs_loader_main		/* never returns */
	hlt
	.size _start, . - _start

/*
 * xs_loader_enter(entry, sp): start the program as the kernel would, at its
 * entry with rsp at argc, rdx 0 (no function for atexit), and nothing of
 * ours in the other registers.
 */
	.globl xs_loader_enter
	.hidden xs_loader_enter
	.type xs_loader_enter, @function
xs_loader_enter:
	mov %rsi, %rsp
	mov %rdi, %r11
	xor %eax, %eax
	xor %ebx, %ebx
	xor %ecx, %ecx
	xor %edx, %edx
	xor %esi, %esi
	xor %edi, %edi
	xor %ebp, %ebp
	xor %r8d, %r8d
	xor %r9d, %r9d
	xor %r10d, %r10d
	xor %r12d, %r12d
	xor %r13d, %r13d
	xor %r14d, %r14d
	xor %r15d, %r15d
	jmp *%r11
	.size xs_loader_enter, . - xs_loader_enter

	.section .note.GNU-stack,"",@progbits
