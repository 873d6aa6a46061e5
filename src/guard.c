#include "guard.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>

/* The armed jump buffer of this thread, NULL while it reads no mapping. */
static __thread sigjmp_buf *volatile armed;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_error;

static void on_sigbus(int sig, siginfo_t *info, void *ctx)
{
    (void)info;
    (void)ctx;
    if (armed != NULL)
        siglongjmp(*armed, 1);
    /* Not a guarded read: die of the signal as if no handler were here. */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install(void)
{
    struct sigaction sa = {0};

    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, NULL) != 0)
        install_error = errno;
}

sp_status sp_guard_run(sp_status (*fn)(void *arg), void *arg)
{
    sigjmp_buf jb;
    sp_status st;

    pthread_once(&once, install);
    if (install_error != 0)
        return install_error;
    /* savemask 1: the jump also unblocks SIGBUS, blocked in the handler */
    if (sigsetjmp(jb, 1) != 0) {
        armed = NULL;
        return SP_E_CHANGED;
    }
    armed = &jb;
    st = fn(arg);
    armed = NULL;
    return st;
}
