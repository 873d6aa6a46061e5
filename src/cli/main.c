/* scaleppm: scale an image (PNM, PAM, JPEG, PNG) by an integer factor or
 * to a size, loading it with read(), mmap() or pread().  Parses the
 * command line, runs the job or the batch, reports. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_batch.h"
#include "cli_pending.h"
#include "cli_serve.h"
#include "decode.h"
#include "init.h"
#include "job.h"
#include "msg.h"
#include "options.h"
#include "outfile.h"
#include "say.h"

/* The output's name as the signal handler prints it, set before the run. */
static char shown_out[PATH_MAX];

static void put_err(const char *s)
{
    size_t n = strlen(s);

    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* The signals whose default action ends the process (signal(7)), which
 * scaleppm catches to remove an output not yet in place and say so, then
 * dies of, as a shell expects (128 + N; a core where the default dumps
 * one), so that a loop over scaleppm stops at Ctrl-C.  SYNC marks the
 * faults a thread raises itself: never waited for, never blocked.  The
 * real-time signals SIGRTMIN..SIGRTMAX are caught as well (all_signal()).
 * SIGPIPE and SIGXFSZ are ignored instead (catch_signals()). */
static const struct {
    int sig;
    const char *name;
    int sync;
} fatal_signals[] = {
    {SIGHUP, "SIGHUP", 0},       {SIGINT, "SIGINT", 0},
    {SIGQUIT, "SIGQUIT", 0},     {SIGTERM, "SIGTERM", 0},
    {SIGUSR1, "SIGUSR1", 0},     {SIGUSR2, "SIGUSR2", 0},
    {SIGALRM, "SIGALRM", 0},     {SIGVTALRM, "SIGVTALRM", 0},
    {SIGPROF, "SIGPROF", 0},     {SIGXCPU, "SIGXCPU", 0},
    {SIGIO, "SIGIO", 0},
#ifdef SIGPWR
    {SIGPWR, "SIGPWR", 0},
#endif
#ifdef SIGSTKFLT
    {SIGSTKFLT, "SIGSTKFLT", 0},
#endif
    {SIGILL, "SIGILL", 1},       {SIGTRAP, "SIGTRAP", 1},
    {SIGABRT, "SIGABRT", 1},     {SIGBUS, "SIGBUS", 1},
    {SIGFPE, "SIGFPE", 1},       {SIGSEGV, "SIGSEGV", 1},
    {SIGSYS, "SIGSYS", 1},
};
#define NFIXED (sizeof fatal_signals / sizeof *fatal_signals)

/* all_signal: the Ith signal caught (I < NFIXED + the real-time ones),
 * 0 past the last; *SYNC set for a fault. */
static int all_signal(size_t i, int *sync)
{
    *sync = i < NFIXED ? fatal_signals[i].sync : 0;
    if (i < NFIXED)
        return fatal_signals[i].sig;
    if ((int)(i - NFIXED) <= SIGRTMAX - SIGRTMIN)
        return SIGRTMIN + (int)(i - NFIXED);
    return 0;
}

/* signal_name: SIG's name ("SIGTERM", "SIGRTMIN+3") in BUF (16 bytes),
 * made with no library call that a handler may not make. */
static const char *signal_name(int sig, char *buf)
{
    char *p = buf;
    int n;

    for (size_t i = 0; i < NFIXED; i++)
        if (fatal_signals[i].sig == sig)
            return fatal_signals[i].name;
    if (sig < SIGRTMIN || sig > SIGRTMAX)
        return "a signal";
    memcpy(p, "SIGRTMIN", 8);
    p += 8;
    n = sig - SIGRTMIN;
    if (n > 0) {
        *p++ = '+';
        if (n >= 10)
            *p++ = (char)('0' + n / 10 % 10);
        *p++ = (char)('0' + n % 10);
    }
    *p = '\0';
    return buf;
}

/* NO_ASAN: a function left out of AddressSanitizer's instrumentation.
 * A handler may run while ASan's leak check at exit holds its allocator's
 * lock (a SIGTERM then); entering ASan's runtime before a call that does
 * not return unpoisons the stack, which allocates, and waits on that lock
 * forever.  Their own few accesses, to their stack, go unchecked. */
#define NO_ASAN __attribute__((no_sanitize("address")))

/* die_by: end the process as SIG's default action ends it (for every
 * signal caught here: death, with a core where the default dumps one),
 * from a handler or from any thread, whatever its mask. */
NO_ASAN static void die_by(int sig)
{
    struct sigaction dfl = {0};
    sigset_t set;

    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    (void)sigaction(sig, &dfl, NULL);
    (void)raise(sig);  /* pending while blocked (in a handler, a batch) */
    sigemptyset(&set);
    sigaddset(&set, sig);
    (void)pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    _exit(128 + sig);  /* not reached: the signal ended the process */
}

/* ending: a handler has begun to end the process. */
static atomic_flag ending = ATOMIC_FLAG_INIT;

NO_ASAN static void on_fatal_signal(int sig)
{
    int discarded;
    char name[16];

    /* Two signals taken at once by two threads: one message, one end; the
     * other thread waits for it. */
    if (atomic_flag_test_and_set(&ending))
        for (;;)
            pause();
    discarded = sp_cli_discard_pending();

    put_err("scaleppm: ");
    put_err(shown_out);
    if (sig == SIGINT) {
        put_err(": interrupted");
    } else {
        put_err(": terminated by ");
        put_err(signal_name(sig, name));
    }
    put_err(discarded ? " while writing; nothing written\n" : "\n");
    die_by(sig);
}

/* kept: whether a signal whose action on entry was WAS keeps it: one
 * ignored (nohup, a background job's SIGINT), and a fault (SYNC) that
 * already has a handler (a sanitizer's, which reports where it
 * happened). */
static int kept(const struct sigaction *was, int sync)
{
    return was->sa_handler == SIG_IGN ||
           (sync && was->sa_handler != SIG_DFL);
}

/* catch_signals: the process's signal policy.  Every signal above runs
 * on_fatal_signal, but those kept() keep their action; SIGPIPE and
 * SIGXFSZ are ignored, so that a closed pipe and the file size limit are
 * errors (EPIPE, EFBIG) that leave no output, not deaths.  One
 * sigaction() a signal installs the handler and reads the action before,
 * a second puts back one kept; all signals are blocked meanwhile, so
 * that none reaches the handler in between (one ignored that came is
 * discarded when SIG_IGN is back).  One that cannot be caught is left
 * as it is where kept (valgrind's SIGRTMAX reads as ignored).  Returns 0
 * or an errno value. */
static sp_status catch_signals(void)
{
    struct sigaction sa = {0}, was;
    sigset_t all, mask;
    sp_status st = SP_OK;
    int sig, sync;

    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_ONSTACK;
    sigfillset(&sa.sa_mask);  /* one handler at a time */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &mask);
    for (size_t i = 0; st == SP_OK && (sig = all_signal(i, &sync)) != 0;
         i++) {
        if (sigaction(sig, &sa, &was) != 0) {
            st = errno;
            if (sigaction(sig, NULL, &was) == 0 && kept(&was, sync))
                st = SP_OK;
        } else if (kept(&was, sync) && sigaction(sig, &was, NULL) != 0) {
            st = errno;
        }
    }
    if (st == SP_OK && (signal(SIGPIPE, SIG_IGN) == SIG_ERR ||
                        signal(SIGXFSZ, SIG_IGN) == SIG_ERR))
        st = errno;
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    return st;
}

/* quiet_tally: -q: a batch stopped by a signal prints no tally. */
static int quiet_tally;

/* batch_stopped: a batch stopped by SIG (sp_batch.stopped): its outputs
 * not in place removed, the tally T printed, then death by SIG. */
static void batch_stopped(int sig, const struct sp_tally *t)
{
    (void)sp_cli_discard_pending();
    if (!quiet_tally)
        sp_cli_tally_print(t);
    die_by(sig);
}

/* stop_signals: into SET, the signals a batch waits for (those caught,
 * not ignored on entry, faults aside); batch_stopped is what it does at
 * one. */
static void stop_signals(sigset_t *set)
{
    struct sigaction was;
    int sig, sync;

    sigemptyset(set);
    for (size_t i = 0; (sig = all_signal(i, &sync)) != 0; i++)
        if (!sync && sigaction(sig, NULL, &was) == 0 &&
            was.sa_handler != SIG_IGN)
            sigaddset(set, sig);
}

/* quiet_pipe_end: the reader of the output went away: end as netpbm's
 * tools and coreutils do, killed by SIGPIPE without a word (the shell
 * says nothing of it in a pipeline).  SIGPIPE was ignored so that the
 * write failed instead (an output file's removal is done by then). */
static void quiet_pipe_end(void)
{
    signal(SIGPIPE, SIG_DFL);
    raise(SIGPIPE);
}

static void print_verbose(const struct sp_job *job, const struct sp_report *r)
{
    const struct sp_load_info *li = &r->load;
    const int coded = li->codec != NULL && li->codec->ops != NULL;
    char scale[64];

    if (job->fit.width != 0 || job->fit.height != 0)
        snprintf(scale, sizeof scale, "fit %zux%zu (area average)",
                 job->fit.width, job->fit.height);
    else
        snprintf(scale, sizeof scale, "scale %d (%s)", job->factor,
                 sp_filter_of(job->filter)->name);
    sp_say("%s: %s%sP%c %zux%zu, %u channel%s, maxval %u, loaded with %s; "
           "%s: %zux%zu, %s, %u thread%s", r->input,
           coded ? li->codec->name : "", coded ? " decoded to " : "",
           li->magic,
           r->in_width, r->in_height, r->channels,
           r->channels == 1 ? "" : "s", r->maxval, sp_io_name(li->io_used),
           r->output != NULL ? r->output : "no output (--no-output)",
           r->out_width, r->out_height, scale, r->threads_used,
           r->threads_used == 1 ? "" : "s");
    if (r->shrink > 1)
        sp_say("%s: decoded at 1/%u of its size (shrink-on-load; "
               "--no-shrink-on-load decodes it whole)", r->input, r->shrink);
    if (r->images > 1)
        sp_say("%s: %u images, each scaled (the sizes above are the last "
               "one's)", r->input, r->images);
    if (li->trailing_bytes > 0)
        sp_say("%s: %zu byte%s of whitespace after the last image: "
               "ignored", r->input, li->trailing_bytes,
               li->trailing_bytes == 1 ? "" : "s");
}

/* check_output: refuse, before a byte is written, what JOB would write
 * where it must not (one line printed): into its own input, in place
 * (`scaleppm -s 2 a.ppm >> a.ppm` would read what it appends, as cat
 * says: "input file is output file"), or binary image data to a
 * terminal (as gzip refuses: every format scaleppm writes is binary).
 * Returns 0, or the exit status. */
static int check_output(const struct sp_job *job)
{
    struct stat in, out;
    int read_in;

    const char *in_path = job->in.path, *out_path = job->out.path;

    if (job->out.kind == SP_TARGET_NONE)  /* --no-output: nothing written
                                             anywhere */
        return 0;
    read_in = strcmp(in_path, "-") == 0 ? fstat(STDIN_FILENO, &in)
                                        : stat(in_path, &in);
    if (strcmp(out_path, "-") == 0 && isatty(STDOUT_FILENO)) {
        sp_say("not writing an image to a terminal: name OUT or redirect "
               "standard output (see scaleppm --help)");
        return EXIT_FAILURE;
    }
    if (read_in == 0 && S_ISREG(in.st_mode) &&
        sp_outfile_held(out_path, &out) && out.st_dev == in.st_dev &&
        out.st_ino == in.st_ino) {
        sp_print_error(in_path, SP_E_REFUSED, "input file is output file");
        return EXIT_FAILURE;
    }
    return 0;
}

/* check_format: JOB's output format, and a PNM's type, from its name's
 * extension (one line printed for a name that asks for none written).
 * Returns 0, or the exit status. */
static int check_format(struct sp_job *job)
{
    char why[SP_WHY_MAX];
    sp_status st;

    if (job->out.kind == SP_TARGET_NONE)
        return 0;
    st = sp_outfmt_for(job->out.path, &job->fmt, &job->pnm_type);
    if (st == SP_OK)
        return 0;
    sp_outfmt_known(why);
    sp_print_error(job->out.path, st, why);
    return EXIT_FAILURE;
}

/* run: the command ARGV asks for, to its exit status. */
static int run(int argc, char **argv)
{
    struct options o = {.job = {.io = SP_IO_AUTO, .filter = &sp_filter_sample,
                                .threads = sp_default_threads()}};
    struct sp_report report;
    const char *shown;
    int rc;
    sp_status st;

    rc = sp_parse_options(argc, argv, &o);
    if (rc >= 0)
        return rc;
    /* What a signal's message names: the output, or with none the
     * input. */
    shown = o.target                            ? o.target
            : o.job.out.kind != SP_TARGET_NONE ? o.job.out.path
                                                : o.job.in.path;
    sp_show_name(shown, shown_out, sizeof shown_out);
    quiet_tally = o.quiet;
    sp_cli_pending_install();  /* what the handler removes */
    st = catch_signals();
    if (st == SP_OK)  /* after: the guard hands other faults to ours */
        st = sp_lib_init();
    if (st != SP_OK) {
        sp_print_error(shown, st, "");
        return EXIT_FAILURE;
    }
    if (o.target != NULL) {
        sigset_t stop;

        stop_signals(&stop);
        return sp_cli_batch(&o, &stop, batch_stopped);
    }
    if ((rc = check_format(&o.job)) != 0 ||
        (rc = check_output(&o.job)) != 0)
        return rc;
    st = sp_job_exec(&o.job, &report);
    if (st == SP_OK && o.job.out.kind == SP_TARGET_PATH &&
        strcmp(o.job.out.path, "-") == 0 &&
        fclose(stdout) != 0) {
        st = errno;
        report.failed_path = "-";
        report.why[0] = '\0';
    }
    if (st == EPIPE)
        quiet_pipe_end();
    if (st != SP_OK) {
        sp_print_error(report.failed_path, st, report.why);
        if (o.timings)
            sp_report_print(&report, st, o.json, stderr);
        return EXIT_FAILURE;
    }
    if (o.verbose)
        print_verbose(&o.job, &report);
    if (o.timings)
        sp_report_print(&report, SP_OK, o.json, stderr);
    return 0;
}

/* MAIN_STACK: the stack the command runs on.  The main thread's is
 * RLIMIT_STACK's, which ulimit -s can make too small for anything (under
 * ulimit -s 16 one fprintf to standard error overflowed it: glibc formats
 * an unbuffered stream's line in a BUFSIZ buffer on the stack); a batch's
 * workers and a job's threads have stacks of their own likewise
 * (batch.c, parallel.c). */
#define MAIN_STACK ((size_t)1024 * 1024)

/* The handler's own stack, for a fault from the command's stack
 * overflowing (a handler cannot run on the stack that overflowed). */
static char alt_stack[64 * 1024];

/* guarded: run() with ALT_STACK as this thread's alternate signal stack
 * (without it a stack overflow killed at once, without a word), and the
 * thread's own put back after it: a sanitizer frees the one it gave the
 * thread when the thread ends. */
static int guarded(int argc, char **argv)
{
    stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack}, was;
    int set = sigaltstack(&ss, &was) == 0, rc;

    rc = run(argc, argv);
    if (set)
        (void)sigaltstack(&was, NULL);
    return rc;
}

struct command {
    int argc;
    char **argv;
    sigset_t mask;  /* the signals' mask to run with: the caller's */
    int rc;
};

static void *command(void *arg)
{
    struct command *c = arg;

    pthread_sigmask(SIG_SETMASK, &c->mask, NULL);
    c->rc = guarded(c->argc, c->argv);
    return NULL;
}

/* main_stack_fits: whether the main thread's stack can take MAIN_STACK:
 * RLIMIT_STACK at least four times it, of which the arguments and the
 * environment take a quarter at most (execve(2)). */
static int main_stack_fits(void)
{
    struct rlimit rl;

    return getrlimit(RLIMIT_STACK, &rl) == 0 &&
           (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= 4 * MAIN_STACK);
}

/* main: guarded() on this thread where its stack fits MAIN_STACK (the
 * default 8 MiB does: a thread to start, its stack and its malloc arena
 * are a few page faults and a dozen system calls of a small job's
 * start), else on a thread of MAIN_STACK, or on this one when no thread
 * can be started.  While such a thread runs, this one keeps every signal
 * blocked, so that a handler never runs on its stack, and the command's
 * thread takes them as the main thread would: a handler never runs while
 * an output is being named (outfile.c holds them there). */
int main(int argc, char **argv)
{
    struct command c = {.argc = argc, .argv = argv};
    pthread_attr_t attr;
    pthread_t t;
    sigset_t all;
    int started = 0;

    /* The web front is its own program (cli_serve.h); a file named serve
     * is ./serve.  It is exec'd from this thread: an exec from another
     * thread first makes this one a zombie, and a supervisor that reads
     * the process's state in that moment sees it dead. */
    if (argc > 1 && strcmp(argv[1], "serve") == 0)
        return sp_cli_serve(argv + 1);
    if (main_stack_fits())
        return guarded(argc, argv);
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &c.mask);
    if (pthread_attr_init(&attr) == 0) {
        started = pthread_attr_setstacksize(&attr, MAIN_STACK) == 0 &&
                  pthread_create(&t, &attr, command, &c) == 0;
        pthread_attr_destroy(&attr);
    }
    if (started)
        pthread_join(t, NULL);
    pthread_sigmask(SIG_SETMASK, &c.mask, NULL);
    return started ? c.rc : guarded(argc, argv);
}
