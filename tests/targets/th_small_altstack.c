/*
 * A handler on a small alternate signal stack (8 KiB, glibc's traditional
 * SIGSTKSZ, between guard pages) closes windows through /dev/exitscope and,
 * in "exit" mode, ends the process from the handler. Natively both fit the
 * stack. Usage: th_small_altstack dump|exit
 */
#include "tt_common.h"
#include <signal.h>
#include <sys/mman.h>
#include <exitscope.h>

#define ALT_SIZE 8192

static int g_exit_mode;
static volatile int g_handled;

static void on_usr2(int sig)
{
    (void)sig;
    exitscope_dump("on-altstack");
    exitscope_reset();
    g_handled++;
    if (g_exit_mode)
        exit(0);
}

int main(int argc, char **argv)
{
    g_exit_mode = argc > 1 && !strcmp(argv[1], "exit");
    char *map = mmap(NULL, ALT_SIZE + 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        die("mmap");
    if (mprotect(map, 4096, PROT_NONE) || mprotect(map + 4096 + ALT_SIZE, 4096, PROT_NONE))
        die("mprotect");
    stack_t ss = {.ss_sp = map + 4096, .ss_size = ALT_SIZE, .ss_flags = 0};
    if (sigaltstack(&ss, NULL))
        die("sigaltstack");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR2, &sa, NULL);
    for (int i = 0; i < 3; i++)
        raise(SIGUSR2);
    say("handled %d\n", g_handled);
    return 0;
}
