/*
 * clone3 issued by this program's own `syscall` instruction creating a thread
 * (CLONE_VM | CLONE_THREAD | ...) on a stack it allocated; the child side is
 * handled in asm (call a C function, then SYS_exit). The thread shares the
 * creator's TLS, so it uses only raw system calls. Several threads run at once.
 */
#include "tt_common.h"
#include <linux/futex.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define STACK_SIZE (128 * 1024)
#define NTHREADS 4
#define CHILD_CALLS 250
#define THREAD_FLAGS                                                                             \
    (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |          \
     CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

static volatile long g_ok[NTHREADS];
static volatile long g_tid[NTHREADS];

static int child_body(void *arg)
{
    long i = (long)arg;
    long ok = 0;
    for (int k = 0; k < CHILD_CALLS; k++)
        ok += raw_syscall3(SYS_getppid, 0, 0, 0) > 0;
    g_tid[i] = raw_syscall3(SYS_gettid, 0, 0, 0);
    g_ok[i] = ok;
    return 0;
}

/* Issue clone3(ca) here; the child calls fn(arg) on ca's stack and exits. */
static long asm_clone3(struct clone_args *ca, int (*fn)(void *), void *arg)
{
    long ret;
    register long r12 __asm__("r12") = (long)fn;
    register long r13 __asm__("r13") = (long)arg;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xor %%ebp, %%ebp\n\t"
                     "and $-16, %%rsp\n\t"
                     "mov %%r13, %%rdi\n\t"
                     "call *%%r12\n\t"
                     "mov %%eax, %%edi\n\t"
                     "mov $60, %%eax\n\t"
                     "syscall\n\t"
                     "hlt\n"
                     "1:\n\t"
                     : "=a"(ret)
                     : "a"((long)SYS_clone3), "D"(ca), "S"(sizeof *ca), "r"(r12), "r"(r13)
                     : "rcx", "r11", "memory");
    return ret;
}

int main(void)
{
    static volatile pid_t ptid[NTHREADS], ctid[NTHREADS];
    long tid[NTHREADS];
    char *stacks = mmap(NULL, NTHREADS * STACK_SIZE, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stacks == MAP_FAILED)
        die("mmap");
    for (long i = 0; i < NTHREADS; i++) {
        struct clone_args ca;
        memset(&ca, 0, sizeof ca);
        ctid[i] = -1; /* the kernel zeroes it when the thread exits */
        ca.flags = THREAD_FLAGS;
        ca.parent_tid = (unsigned long)&ptid[i];
        ca.child_tid = (unsigned long)&ctid[i];
        ca.stack = (unsigned long)(stacks + i * STACK_SIZE);
        ca.stack_size = STACK_SIZE;
        tid[i] = asm_clone3(&ca, child_body, (void *)i);
        if (tid[i] < 0) {
            errno = -tid[i];
            die("clone3");
        }
    }
    for (int i = 0; i < NTHREADS; i++) {
        pid_t v;
        while ((v = ctid[i]) != 0)
            syscall(SYS_futex, &ctid[i], FUTEX_WAIT, v, NULL, NULL, 0);
        say("clone3 thread %d: %ld getppid calls ok, tid matches: %s, own tid: %s\n", i, g_ok[i],
            g_tid[i] == tid[i] && ptid[i] == tid[i] ? "yes" : "no", g_tid[i] != getpid() ? "yes" : "no");
    }
    say("expect getppid=%d\n", NTHREADS * CHILD_CALLS);
    return 0;
}
