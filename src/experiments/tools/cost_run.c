/* The cost probes that need a process or threads of their own: the read
 * path's load and the load's and release's system calls in a fresh
 * process, a thread's wake-up, and the CPUs the
 * process gets (cost.h). */
#include "cost.h"
#include "cost_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SPIN_NS 20000000  /* how long the CPU-share probe's threads spin */
#define SPINNERS_MAX 64
#define WAKES 20
#define PAUSE_US 2000
#define SWITCHES 1000

/* The load's and the release's system calls as a scaleppm run makes them,
 * once, on a thread of a process just exec'd: the job's thread opens the
 * input by its path, fstats it and preads its header block; the mmap
 * path maps the file and fstats it again; its release gives the mapping
 * back (madvise, munmap) and closes the file.  Once each, not in a loop:
 * each is its process's first of its kind, with caches and the kernel's
 * paths cold, which a loop of the same call hides (spcost's syscall,
 * pread1 and mmap_munmap units). */
struct first_calls {
    int fd;
    size_t size;
    const char *dir;   /* opened by its path, as the run opens its input */
    uint64_t open_ns, map_ns, unmap_ns;
    int ok;
};

static void *calls_once(void *arg)
{
    struct first_calls *c = arg;
    unsigned char header[8192];
    struct stat st;
    uint64_t t0, t1, t2;
    void *m;
    int dfd;

    memset(header, 0, sizeof header);  /* its pages are the stack's */
    t0 = sp_now_ns();
    dfd = openat(AT_FDCWD, c->dir, O_RDONLY | O_CLOEXEC);
    if (dfd < 0 || fstat(c->fd, &st) != 0 ||
        pread(c->fd, header, sizeof header, 0) < 0)
        return NULL;
    t1 = sp_now_ns();
    m = mmap(NULL, c->size, PROT_READ, MAP_PRIVATE, c->fd, 0);
    if (m == MAP_FAILED || fstat(c->fd, &st) != 0)
        return NULL;
    t2 = sp_now_ns();
    c->open_ns = t1 - t0;
    c->map_ns = t2 - t1;
    t0 = sp_now_ns();
    (void)madvise(m, c->size, MADV_DONTNEED);
    munmap(m, c->size);
    close(dfd);
    c->unmap_ns = sp_now_ns() - t0;
    c->ok = 1;
    return NULL;
}

/* The child's record, in the order sp_cost_child writes it. */
enum {
    C_READ, C_FAULTS_NS, C_FAULTS, C_FREE, C_MALLOC, C_MALLOC_FAULTS,
    C_OPEN, C_MAP, C_UNMAP, C_COUNT
};

sp_status sp_cost_child(int fd, size_t size, int p, const char *dir)
{
    struct first_calls calls = {fd, size, dir, 0, 0, 0, 0};
    unsigned char *b, *more;
    uint64_t t[C_COUNT];
    pthread_t tid;
    long f0, first;

    if (sp_cost_first_malloc(&t[C_MALLOC], &first) != SP_OK)
        return ENOMEM;
    t[C_MALLOC_FAULTS] = (uint64_t)first;
    if (pthread_create(&tid, NULL, calls_once, &calls) != 0)
        return EAGAIN;
    pthread_join(tid, NULL);
    if (!calls.ok)
        return EIO;
    t[C_OPEN] = calls.open_ns;
    t[C_MAP] = calls.map_ns;
    t[C_UNMAP] = calls.unmap_ns;
    t[C_READ] = sp_now_ns();
    b = malloc(size);
    if (b == NULL || sp_cost_read_all(fd, b, size) != SP_OK)
        return EIO;
    t[C_READ] = sp_now_ns() - t[C_READ];
    more = malloc(size);
    if (more == NULL)
        return ENOMEM;
    f0 = sp_minflt();
    t[C_FAULTS_NS] = sp_now_ns();
    for (size_t i = 0; i < size; i += 4096)
        more[i] = 1;
    t[C_FAULTS_NS] = sp_now_ns() - t[C_FAULTS_NS];
    t[C_FAULTS] = (uint64_t)(sp_minflt() - f0);
    t[C_FREE] = sp_now_ns();
    free(b);
    t[C_FREE] = sp_now_ns() - t[C_FREE];
    return write(p, t, sizeof t) == (ssize_t)sizeof t ? SP_OK : EIO;
}

/* The read path's malloc and read() of the whole file, first writes to
 * fresh anonymous pages, and the free() of the block read into, in a
 * process just started by exec, as each scaleppm run is (a process just
 * forked pays less): ns a byte, ns a fault, ns a page; first, a new
 * thread's first malloc() there (ns, and its faults:
 * sp_cost_first_malloc); then the load's and the release's system calls
 * once each (calls_once): the open, fstat and header pread both paths
 * make (ns), the mmap path's mapping and second fstat (ns), and its
 * release's madvise of an untouched mapping, munmap and close (ns). */
sp_status sp_cost_process(const struct sp_cost_env *env, double *out)
{
    char fd[16], size[24], pw[16];
    int p[2], status;
    uint64_t t[C_COUNT];
    pid_t pid;

    if (pipe(p) != 0)
        return errno;
    snprintf(fd, sizeof fd, "%d", env->fd_large);
    snprintf(size, sizeof size, "%zu", env->size);
    snprintf(pw, sizeof pw, "%d", p[1]);
    pid = fork();
    if (pid == 0) {
        close(p[0]);
        execl("/proc/self/exe", "spcost", "--child", fd, size, pw,
              env->dir, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    if (pid < 0 || read(p[0], t, sizeof t) != (ssize_t)sizeof t) {
        close(p[0]);
        if (pid > 0)
            waitpid(pid, &status, 0);
        return pid < 0 ? errno : EIO;
    }
    close(p[0]);
    waitpid(pid, &status, 0);
    out[0] = (double)t[C_READ] / (double)env->size;
    out[1] = (double)t[C_FAULTS_NS] /
             (double)(t[C_FAULTS] > 0 ? t[C_FAULTS] : 1);
    out[2] = (double)t[C_FREE] / (double)((env->size + 4095) / 4096);
    out[3] = (double)t[C_MALLOC];
    out[4] = (double)t[C_MALLOC_FAULTS];
    out[5] = (double)t[C_OPEN];
    out[6] = (double)t[C_MAP];
    out[7] = (double)t[C_UNMAP];
    return SP_OK;
}

/* A worker on a CPU of its own (the other CPU when the caller's is
 * given) that a condition variable wakes, as the gate and the freed
 * slots of parallel.c wake the study's threads. */
struct pingpong {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int turn;              /* 1: the worker's, 0: the caller's, -1: quit */
    uint64_t signalled, woke;
};

static void *pong(void *arg)
{
    struct pingpong *p = arg;

    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->turn == 0)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->turn < 0)
            break;
        p->woke = sp_now_ns();
        p->turn = 0;
        pthread_cond_signal(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* ping: hand the turn to the worker and wait for it back, after PAUSE_US
 * of sleep (an idle CPU goes to sleep: waking it is what is timed). */
static uint64_t ping(struct pingpong *p, unsigned pause_us)
{
    if (pause_us)
        usleep(pause_us);
    pthread_mutex_lock(&p->mu);
    p->signalled = sp_now_ns();
    p->turn = 1;
    pthread_cond_signal(&p->cv);
    while (p->turn == 1)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return p->woke - p->signalled;
}

static int start_pong(struct pingpong *p, pthread_t *tid, int same_cpu)
{
    int here = sched_getcpu(), err;
    pthread_attr_t attr;
    cpu_set_t one;

    CPU_ZERO(&one);
    CPU_SET(here < 0 ? 0 : here, &one);
    if (!same_cpu) {
        cpu_set_t allowed;

        if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
            return -1;
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
            if (cpu != here && CPU_ISSET(cpu, &allowed)) {
                CPU_ZERO(&one);
                CPU_SET(cpu, &one);
                break;
            }
    }
    pthread_attr_init(&attr);
    (void)pthread_attr_setaffinity_np(&attr, sizeof one, &one);
    if (same_cpu)
        (void)sched_setaffinity(0, sizeof one, &one);
    err = pthread_create(tid, &attr, pong, p);
    pthread_attr_destroy(&attr);
    return err;
}

/* The wake-up of a thread blocked on a condition variable: on another,
 * idle CPU (signal to running, ns), and a switch to a thread of the same
 * CPU (ns a switch, from round trips). */
sp_status sp_cost_wake(const struct sp_cost_env *env, double *out)
{
    struct pingpong p = {PTHREAD_MUTEX_INITIALIZER,
                         PTHREAD_COND_INITIALIZER, 0, 0, 0};
    cpu_set_t was;
    pthread_t tid;
    uint64_t sum = 0, t0;

    (void)env;
    if (sched_getaffinity(0, sizeof was, &was) != 0 ||
        start_pong(&p, &tid, 0) != 0)
        return EAGAIN;
    for (int i = 0; i < WAKES; i++)
        sum += ping(&p, PAUSE_US);
    p.turn = -1;
    pthread_cond_signal(&p.cv);
    pthread_join(tid, NULL);
    out[0] = (double)sum / WAKES;
    p.turn = 0;
    if (start_pong(&p, &tid, 1) != 0)
        return EAGAIN;
    t0 = sp_now_ns();
    for (int i = 0; i < SWITCHES; i++)
        (void)ping(&p, 0);
    out[1] = (double)(sp_now_ns() - t0) / (2.0 * SWITCHES);
    pthread_mutex_lock(&p.mu);
    p.turn = -1;
    pthread_cond_signal(&p.cv);
    pthread_mutex_unlock(&p.mu);
    pthread_join(tid, NULL);
    (void)sched_setaffinity(0, sizeof was, &was);
    return SP_OK;
}

static void *spin_for(void *arg)
{
    double *cpu = arg;
    struct timespec c;
    uint64_t t0 = sp_now_ns();

    while (sp_now_ns() - t0 < SPIN_NS)
        ;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
    *cpu = (double)c.tv_sec * 1e9 + (double)c.tv_nsec;
    return NULL;
}

/* The CPUs this process gets on a shared machine: a busy thread an
 * online CPU for SPIN_NS, their CPU time over the wall time (the
 * number of CPUs when nobody else runs; less while others do). */
sp_status sp_cost_cpus(const struct sp_cost_env *env, double *out)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    pthread_t tid[SPINNERS_MAX];
    double cpu[SPINNERS_MAX] = {0}, sum = 0;
    uint64_t t0 = sp_now_ns();
    long started = 0;

    (void)env;
    if (n < 1)
        n = 1;
    if (n > SPINNERS_MAX)
        n = SPINNERS_MAX;
    while (started < n &&
           pthread_create(&tid[started], NULL, spin_for, &cpu[started]) == 0)
        started++;
    for (long i = 0; i < started; i++) {
        pthread_join(tid[i], NULL);
        sum += cpu[i];
    }
    out[0] = sum / (double)(sp_now_ns() - t0);
    return started > 0 ? SP_OK : EAGAIN;
}
