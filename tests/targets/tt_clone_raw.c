/*
 * Threads made without pthread: one through glibc's clone(3) wrapper, one
 * through a `syscall` instruction in this file's inline assembly (SYS_clone
 * with a new stack; the child side runs in asm, calls a C function and leaves
 * with SYS_exit), plus a fork-like child through syscall(SYS_clone, SIGCHLD).
 * The raw threads share the creator's TLS, so they use only raw system calls.
 * Usage: tt_clone_raw [PIDFILE]   PIDFILE gets this process's pid
 */
#include "tt_common.h"
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define STACK_SIZE (256 * 1024)
#define THREAD_FLAGS                                                                             \
    (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |          \
     CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)
#define CHILD_CALLS 300

static volatile long g_result[2];
static volatile long g_tid_seen[2];

static int child_body(void *arg)
{
    long which = (long)arg;
    long ok = 0;
    for (int i = 0; i < CHILD_CALLS; i++)
        ok += raw_syscall3(SYS_getppid, 0, 0, 0) > 0;
    g_tid_seen[which] = raw_syscall3(SYS_gettid, 0, 0, 0);
    static const char msg[2][32] = {"clone(3) thread: running\n", "asm clone thread: running\n"};
    raw_syscall3(SYS_write, 1, (long)msg[which], which ? 26 : 25);
    g_result[which] = ok;
    return 0;
}

/* Start fn(arg) on a new thread with SYS_clone issued right here. */
static long asm_clone(unsigned long flags, void *stack_top, pid_t *ptid, pid_t *ctid, int (*fn)(void *),
                      void *arg)
{
    long ret;
    register long r10 __asm__("r10") = (long)ctid;
    register long r8 __asm__("r8") = 0;
    register long r12 __asm__("r12") = (long)fn;
    register long r13 __asm__("r13") = (long)arg;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     /* child: new stack, same registers */
                     "xor %%ebp, %%ebp\n\t"
                     "and $-16, %%rsp\n\t"
                     "mov %%r13, %%rdi\n\t"
                     "call *%%r12\n\t"
                     "mov %%eax, %%edi\n\t"
                     "mov $60, %%eax\n\t" /* SYS_exit: this thread only */
                     "syscall\n\t"
                     "hlt\n"
                     "1:\n\t"
                     : "=a"(ret)
                     : "a"((long)SYS_clone), "D"(flags), "S"(stack_top), "d"(ptid), "r"(r10), "r"(r8),
                       "r"(r12), "r"(r13)
                     : "rcx", "r11", "memory");
    return ret;
}

/* The kernel zeroes *ctid (CLONE_CHILD_CLEARTID) and wakes it when the thread exits. */
static void wait_cleared(volatile pid_t *ctid)
{
    pid_t v;
    while ((v = *ctid) != 0)
        syscall(SYS_futex, ctid, FUTEX_WAIT, v, NULL, NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        FILE *f = fopen(argv[1], "w");
        if (!f)
            die("fopen");
        fprintf(f, "%d\n", getpid());
        fclose(f);
    }
    char *stacks = mmap(NULL, 2 * STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                        -1, 0);
    if (stacks == MAP_FAILED)
        die("mmap");

    static volatile pid_t ptid0, ctid0 = -1;
    long t = clone(child_body, stacks + STACK_SIZE, THREAD_FLAGS, (void *)0L, &ptid0, NULL, &ctid0);
    if (t < 0)
        die("clone(3)");
    wait_cleared(&ctid0);
    say("clone(3) thread: %ld getppid calls ok, own tid: %s, ptid matches: %s\n", g_result[0],
        g_tid_seen[0] == t && g_tid_seen[0] != getpid() ? "yes" : "no", ptid0 == t ? "yes" : "no");

    static volatile pid_t ptid1, ctid1 = -1;
    t = asm_clone(THREAD_FLAGS, stacks + 2 * STACK_SIZE, (pid_t *)&ptid1, (pid_t *)&ctid1, child_body,
                  (void *)1L);
    if (t < 0) {
        errno = -t;
        die("asm clone");
    }
    wait_cleared(&ctid1);
    say("asm clone thread: %ld getppid calls ok, own tid: %s, ptid matches: %s\n", g_result[1],
        g_tid_seen[1] == t && g_tid_seen[1] != getpid() ? "yes" : "no", ptid1 == t ? "yes" : "no");

    long pid = syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid < 0)
        die("syscall(SYS_clone)");
    if (pid == 0) {
        raw_syscall3(SYS_write, 1, (long)"fork-like clone child: running\n", 31);
        syscall(SYS_exit_group, 17);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        die("waitpid");
    say("fork-like clone child: exited with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    say("expect getppid=%d\n", 2 * CHILD_CALLS);
    return 0;
}
