#include "guard.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

/* The armed jump buffer of this thread, NULL while it reads no mapping. */
static __thread sigjmp_buf *volatile armed;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_error;
static atomic_int installed;  /* by sp_guard_init() */
/* The SIGBUS action before ours (a program's cleanup), for the faults
 * that are not a guarded read's. */
static struct sigaction before;

static void on_sigbus(int sig, siginfo_t *info, void *ctx)
{
    if (armed != NULL)
        siglongjmp(*armed, 1);
    /* Not a guarded read: the handler that was there first sees it (it
     * may clean up and end the process), then death by the signal as if
     * no handler were here. */
    if ((before.sa_flags & SA_SIGINFO) && before.sa_sigaction != NULL)
        before.sa_sigaction(sig, info, ctx);
    else if (!(before.sa_flags & SA_SIGINFO) &&
             before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN)
        before.sa_handler(sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install(void)
{
    struct sigaction sa = {0};

    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &before) != 0)
        install_error = errno;
    else
        atomic_store(&installed, 1);
}

sp_status sp_guard_init(void)
{
    pthread_once(&once, install);
    return install_error;
}

int sp_guard_ready(void)
{
    return atomic_load(&installed);
}

sp_status sp_guard_run(sp_status (*fn)(void *arg), void *arg)
{
    sigjmp_buf jb;
    sp_status st;

    /* never unguarded: a fault would kill the process */
    if (!sp_guard_ready())
        return ENOTSUP;
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
