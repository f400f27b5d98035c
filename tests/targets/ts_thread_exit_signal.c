/*
 * Signals during the exit of threads: waves of threads that each handle
 * SIGUSR1 on their own 8 KiB alternate stack and then exit, while the main
 * thread keeps sending them SIGUSR1 (pthread_kill; ESRCH once gone) and the
 * process SIGUSR2 (handled by whichever thread takes it). Every thread is
 * joined; the output does not depend on timing.
 */
#include "tt_common.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#define WAVES 20
#define THREADS 8
#define ALT_SIZE 8192

static atomic_int g_usr1, g_usr2, g_started;

static void on_usr1(int sig) { (void)sig; atomic_fetch_add(&g_usr1, 1); }
static void on_usr2(int sig) { (void)sig; atomic_fetch_add(&g_usr2, 1); }

static void *worker(void *arg)
{
    static __thread char alt[ALT_SIZE];
    stack_t ss = {.ss_sp = alt, .ss_size = ALT_SIZE, .ss_flags = 0};
    if (sigaltstack(&ss, NULL))
        die("sigaltstack");
    atomic_fetch_add(&g_started, 1);
    for (volatile int i = 0; i < 20000 * (int)(long)arg; i++)
        ;
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_flags = SA_ONSTACK | SA_RESTART;
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    int joined = 0;
    for (int w = 0; w < WAVES; w++) {
        pthread_t t[THREADS];
        for (int i = 0; i < THREADS; i++)
            if (pthread_create(&t[i], NULL, worker, (void *)(long)(i + 1)))
                die("pthread_create");
        for (int k = 0; k < 50; k++) {
            for (int i = 0; i < THREADS; i++)
                pthread_kill(t[i], SIGUSR1);
            if (k % 10 == 0)
                kill(getpid(), SIGUSR2);
        }
        for (int i = 0; i < THREADS; i++)
            joined += pthread_join(t[i], NULL) == 0;
    }
    say("threads started %d, joined %d, handlers ran: usr1 %s, usr2 %s\n", atomic_load(&g_started), joined,
        atomic_load(&g_usr1) > 0 ? "yes" : "no", atomic_load(&g_usr2) > 0 ? "yes" : "no");
    return 0;
}
