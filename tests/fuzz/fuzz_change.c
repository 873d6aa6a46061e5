/* fuzz_change: the input file changes while scaleppm reads it.
 *
 * The input is a file's bytes, as for fuzz_scale, and a hash of them
 * picks the rest: a schedule (the Nth call of one of the loader's and the
 * job's system calls: fstat, read, pread, preadv2, lseek, mmap, madvise or
 * writev) and what happens to the file right after that call returns: a
 * second byte string written over it in place, appended to it, the file
 * cut to a length, or replaced by the second string whole.  For an
 * append, the file starts as a prefix of the bytes and grows to all of
 * them (a writer finishing the file while it is opened).  Otherwise the
 * second string is the bytes rotated.
 *
 * The file is a memfd, loaded through /proc/self/fd/N, with its mtime set
 * back a day so that any write changes it.  sp_job_exec scales it by read,
 * mmap and pread into PNM, with the change made through the sys seam at
 * the scheduled call.  Whatever happens, the run must end with a status:
 * success only with the bytes a run on the unchanged file gives (nothing
 * from the changed file, nothing from memory that was not in it), or the
 * status of that run when the change never came; any error otherwise
 * (SP_E_CHANGED where the file's stamp caught it); nothing left open or
 * in the output directory.  SP_FUZZ_VERBOSE=1 prints the schedule. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* memfd_create */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"
#include "job.h"
#include "sys.h"
#include "../write_whole.h"

enum call { C_FSTAT, C_READ, C_PREAD, C_PREADV2, C_LSEEK, C_MMAP,
            C_MADVISE, C_WRITEV, C_KINDS };
enum action { A_REWRITE, A_GROW, A_CUT, A_REPLACE };

static const char *const call_names[C_KINDS] = {
    "fstat", "read", "pread", "preadv2", "lseek", "mmap", "madvise",
    "writev"};
static const char *const action_names[4] = {"rewrite", "grow", "cut",
                                            "replace"};

/* The schedule of one input, and the file it changes. */
struct plan {
    enum call call;
    unsigned nth;                 /* 1-based */
    enum action action;
    size_t at;                    /* REWRITE: where; CUT: to what length */
    const uint8_t *first;         /* the file as loaded */
    size_t first_len;
    uint8_t *second;              /* what is written, SECOND_LEN bytes */
    size_t second_len;
    int factor;
    unsigned threads;
};

static struct plan plan;
static int target_fd = -1;
static unsigned calls[C_KINDS];
static int fired;

static const char *outdir;  /* sp_fuzz_outdir() */

static int count_entries(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;

    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3u;
    return h;
}

/* make_plan: the schedule DATA's hash picks; SECOND is malloc'd. */
static void make_plan(const uint8_t *data, size_t size)
{
    uint64_t h = fnv1a(data, size);
    int f = (int)((h >> 40) % 16);  /* 0..15 -> -8..-1, 1..8 */
    size_t r = (size_t)(h >> 24) % size;

    plan.call = (enum call)(h % C_KINDS);
    plan.nth = 1 + (unsigned)((h >> 3) % 4);
    plan.action = (enum action)((h >> 6) % 4);
    plan.at = (size_t)(h >> 8) % (size + 1);
    plan.factor = f < 8 ? f - 8 : f - 7;
    plan.threads = 1 + (unsigned)((h >> 44) % 3);
    plan.first = data;
    plan.first_len = size;
    if (plan.action == A_GROW) {
        /* A prefix, completed by the append; not empty: a file that
         * looks empty is read as a stream, which has no size to keep. */
        plan.at = 1 + (size_t)(h >> 8) % size;
        plan.first_len = plan.at;
        plan.second_len = size - plan.at;
        plan.second = malloc(plan.second_len + 1);
        SP_FUZZ_CHECK(plan.second != NULL);
        memcpy(plan.second, data + plan.at, plan.second_len);
        return;
    }
    plan.second_len = size;
    plan.second = malloc(size);
    SP_FUZZ_CHECK(plan.second != NULL);
    memcpy(plan.second, data + r, size - r);
    memcpy(plan.second + size - r, data, r);
}

static void write_all(int fd, const void *p, size_t len, off_t at)
{
    SP_FUZZ_CHECK(len == 0 || pwrite(fd, p, len, at) == (ssize_t)len);
}

/* change: what the plan does to the file, once. */
static void change(void)
{
    struct stat sb;

    switch (plan.action) {
    case A_REWRITE:
        write_all(target_fd, plan.second, plan.second_len, (off_t)plan.at);
        break;
    case A_GROW:
        SP_FUZZ_CHECK(fstat(target_fd, &sb) == 0);
        write_all(target_fd, plan.second, plan.second_len, sb.st_size);
        break;
    case A_CUT:
        SP_FUZZ_CHECK(ftruncate(target_fd, (off_t)plan.at) == 0);
        break;
    case A_REPLACE:
        SP_FUZZ_CHECK(ftruncate(target_fd, 0) == 0);
        write_all(target_fd, plan.second, plan.second_len, 0);
        break;
    }
}

/* after: a call of kind K has returned; at the scheduled one, change the
 * file (from whichever thread made it), keeping the call's errno. */
static void after(enum call k)
{
    int saved = errno;

    if (k == plan.call &&
        __atomic_add_fetch(&calls[k], 1, __ATOMIC_SEQ_CST) == plan.nth &&
        !__atomic_exchange_n(&fired, 1, __ATOMIC_SEQ_CST))
        change();
    errno = saved;
}

static int w_fstat(int fd, struct stat *sb)
{
    int r = fstat(fd, sb);

    after(C_FSTAT);
    return r;
}

static ssize_t w_read(int fd, void *buf, size_t len)
{
    ssize_t r = read(fd, buf, len);

    after(C_READ);
    return r;
}

static ssize_t w_pread(int fd, void *buf, size_t len, off_t off)
{
    ssize_t r = pread(fd, buf, len, off);

    after(C_PREAD);
    return r;
}

static ssize_t w_preadv2(int fd, const struct iovec *iov, int n, off_t off,
                         int flags)
{
    ssize_t r = preadv2(fd, iov, n, off, flags);

    after(C_PREADV2);
    return r;
}

static off_t w_lseek(int fd, off_t off, int whence)
{
    off_t r = lseek(fd, off, whence);

    after(C_LSEEK);
    return r;
}

static void *w_mmap(void *addr, size_t len, int prot, int flags, int fd,
                    off_t off)
{
    void *r = mmap(addr, len, prot, flags, fd, off);

    after(C_MMAP);
    return r;
}

static int w_madvise(void *addr, size_t len, int advice)
{
    int r = madvise(addr, len, advice);

    after(C_MADVISE);
    return r;
}

static ssize_t w_writev(int fd, const struct iovec *iov, int n)
{
    ssize_t r = writev(fd, iov, n);

    after(C_WRITEV);
    return r;
}

/* reset_file: FD holds the plan's first bytes, with an mtime a day old. */
static void reset_file(int fd)
{
    struct timespec t[2] = {{time(NULL) - 86400, 0},
                            {time(NULL) - 86400, 0}};

    SP_FUZZ_CHECK(ftruncate(fd, 0) == 0);
    write_all(fd, plan.first, plan.first_len, 0);
    SP_FUZZ_CHECK(futimens(fd, t) == 0);
}

/* run_job: the plan's job from IN to OUT by IO; on success *BYTES (LEN)
 * gets the output, which is removed. */
static sp_status run_job(const char *in, const char *out, enum sp_io io,
                         unsigned char **bytes, size_t *len)
{
    struct sp_job job = {
        .in = sp_src_path(in),
        .out = sp_target_path(out),
        .io = io,
        .factor = plan.factor,
        .filter = &sp_filter_box,
        .threads = plan.threads,
        .max_pixels = (uint64_t)1 << 20,
        .chunk_bytes = 4096,  /* several items, so writev runs mid-scale */
    };
    struct sp_report r;
    sp_status st = fx_job_run(&job, &r);

    SP_FUZZ_CHECK(strnlen(r.why, sizeof r.why) < sizeof r.why);
    *bytes = NULL;
    *len = 0;
    if (st == SP_OK) {
        *bytes = sp_fuzz_read_all(out, len);
        SP_FUZZ_CHECK(unlink(out) == 0);
    }
    return st;
}

static void seam_on(void)
{
    memset(calls, 0, sizeof calls);
    fired = 0;
    sp_sys.fstat = w_fstat;
    sp_sys.read = w_read;
    sp_sys.pread = w_pread;
    sp_sys.preadv2 = w_preadv2;
    sp_sys.lseek = w_lseek;
    sp_sys.mmap = w_mmap;
    sp_sys.madvise = w_madvise;
    sp_sys.writev = w_writev;
}

/* check_io: the plan's job by IO with the change made, against the
 * unchanged file's status REF_ST and output REF (REF_LEN bytes). */
static void check_io(const char *in, enum sp_io io, sp_status ref_st,
                     const unsigned char *ref, size_t ref_len)
{
    char out[128];
    unsigned char *got;
    size_t len;
    sp_status st;

    snprintf(out, sizeof out, "%s/%s.pnm", outdir, sp_io_name(io));
    reset_file(target_fd);
    seam_on();
    st = run_job(in, out, io, &got, &len);
    sp_sys_reset();
    if (st == SP_OK) {
        /* Success: every byte from the file as it was. */
        SP_FUZZ_CHECK(ref_st == SP_OK);
        SP_FUZZ_CHECK(len == ref_len && memcmp(got, ref, len) == 0);
    }
    if (!fired)
        SP_FUZZ_CHECK(st == ref_st);  /* the file never changed */
    if (getenv("SP_FUZZ_VERBOSE") != NULL)
        fprintf(stderr, "  %s: %s%s (unchanged: %s)\n", sp_io_name(io),
                sp_strerror(st), fired ? "" : ", no change made",
                sp_strerror(ref_st));
    free(got);
    SP_FUZZ_CHECK(count_entries(outdir) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const enum sp_io ios[3] = {SP_IO_READ, SP_IO_MMAP, SP_IO_PREAD};
    char in[64], out[128];
    unsigned char *ref;
    size_t ref_len;
    sp_status ref_st;
    int fds;

    sp_fuzz_init();
    if (size == 0)
        return 0;
    outdir = sp_fuzz_outdir("sp_change");
    make_plan(data, size);
    if (getenv("SP_FUZZ_VERBOSE") != NULL)
        fprintf(stderr, "-s %d -t %u: %zu bytes, then %s after %s #%u "
                "(at %zu, %zu bytes)\n", plan.factor, plan.threads,
                plan.first_len, action_names[plan.action],
                call_names[plan.call], plan.nth, plan.at, plan.second_len);
    fds = count_entries("/proc/self/fd");
    target_fd = memfd_create("sp_fuzz_change", MFD_CLOEXEC);
    SP_FUZZ_CHECK(target_fd >= 0);
    snprintf(in, sizeof in, "/proc/self/fd/%d", target_fd);
    snprintf(out, sizeof out, "%s/ref.pnm", outdir);

    reset_file(target_fd);
    ref_st = run_job(in, out, SP_IO_READ, &ref, &ref_len);
    for (int i = 0; i < 3; i++)
        check_io(in, ios[i], ref_st, ref, ref_len);

    free(ref);
    free(plan.second);
    close(target_fd);
    target_fd = -1;
    SP_FUZZ_CHECK(count_entries(outdir) == 0);
    SP_FUZZ_CHECK(count_entries("/proc/self/fd") == fds);
    return 0;
}
