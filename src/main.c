/* scaleppm: scale a PNM image by an integer factor, loading it with read(),
 * mmap() or pread().  Parses the command line, runs the job, reports. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "job.h"
#include "msg.h"
#include "names.h"
#include "options.h"
#include "outfile.h"

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

/* die_by: end the process as SIG's default action ends it (for every
 * signal caught here: death, with a core where the default dumps one),
 * from a handler or from any thread, whatever its mask. */
static void die_by(int sig)
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

static void on_fatal_signal(int sig)
{
    int discarded;
    char name[16];

    /* Two signals taken at once by two threads: one message, one end; the
     * other thread waits for it. */
    if (atomic_flag_test_and_set(&ending))
        for (;;)
            pause();
    discarded = sp_outfile_discard_pending();

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

/* The handler's own stack, for a fault from the main thread's stack
 * overflowing (a handler cannot run on the stack that overflowed). */
static char alt_stack[64 * 1024];

/* catch_signals: the process's signal policy.  Every signal above runs
 * on_fatal_signal, but those ignored on entry (nohup, a background job's
 * SIGINT) stay ignored; SIGPIPE and SIGXFSZ are ignored, so that a
 * closed pipe and the file size limit are errors (EPIPE, EFBIG) that
 * leave no output, not deaths.  Returns 0 or an errno value. */
static sp_status catch_signals(void)
{
    struct sigaction sa = {0}, was;
    stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack};
    int sig, sync;

    /* without it a stack overflow kills at once, which it did before */
    (void)sigaltstack(&ss, NULL);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_ONSTACK;
    sigfillset(&sa.sa_mask);  /* one handler at a time */
    for (size_t i = 0; (sig = all_signal(i, &sync)) != 0; i++) {
        if (sigaction(sig, NULL, &was) != 0)
            return errno;
        /* A fault that already has a handler (a sanitizer's, which
         * reports where it happened) keeps it. */
        if (sync && was.sa_handler != SIG_DFL)
            continue;
        if (was.sa_handler != SIG_IGN && sigaction(sig, &sa, NULL) != 0)
            return errno;
    }
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR ||
        signal(SIGXFSZ, SIG_IGN) == SIG_ERR)
        return errno;
    return SP_OK;
}

/* quiet_tally: -q: a batch stopped by a signal prints no tally. */
static int quiet_tally;

/* batch_stopped: a batch stopped by SIG (sp_batch.stopped): its outputs
 * not in place removed, the tally T printed, then death by SIG. */
static void batch_stopped(int sig, const struct sp_tally *t)
{
    (void)sp_outfile_discard_pending();
    if (!quiet_tally)
        sp_tally_print(t);
    die_by(sig);
}

/* stop_signals: into B, the signals a batch waits for (those caught, not
 * ignored on entry, faults aside) and what it does at one. */
static void stop_signals(struct sp_batch *b)
{
    struct sigaction was;
    int sig, sync;

    sigemptyset(&b->stop_signals);
    for (size_t i = 0; (sig = all_signal(i, &sync)) != 0; i++)
        if (!sync && sigaction(sig, NULL, &was) == 0 &&
            was.sa_handler != SIG_IGN)
            sigaddset(&b->stop_signals, sig);
    b->stopped = batch_stopped;
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

    sp_say("%s: P%c %zux%zu, %u channel%s, maxval %u, loaded with %s; %s: "
           "%zux%zu, scale %d (%s), %u thread%s", job->in, li->magic,
           r->in_width, r->in_height, r->channels,
           r->channels == 1 ? "" : "s", r->maxval, sp_io_name(li->io_used),
           job->out, r->out_width, r->out_height, job->factor,
           sp_filter_name(job->filter), r->threads_used,
           r->threads_used == 1 ? "" : "s");
    if (r->images > 1)
        sp_say("%s: %u images, each scaled (the sizes above are the last "
               "one's)", job->in, r->images);
    if (li->trailing_bytes > 0)
        sp_say("%s: %zu byte%s of whitespace after the last image: "
               "ignored", job->in, li->trailing_bytes,
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
    int read_in = strcmp(job->in, "-") == 0 ? fstat(STDIN_FILENO, &in)
                                            : stat(job->in, &in);

    if (strcmp(job->out, "-") == 0 && isatty(STDOUT_FILENO)) {
        sp_say("not writing an image to a terminal: name OUT or redirect "
               "standard output (see scaleppm --help)");
        return EXIT_FAILURE;
    }
    if (read_in == 0 && S_ISREG(in.st_mode) &&
        sp_outfile_held(job->out, &out) && out.st_dev == in.st_dev &&
        out.st_ino == in.st_ino) {
        sp_print_error(job->in, SP_E_REFUSED, "input file is output file");
        return EXIT_FAILURE;
    }
    return 0;
}

/* batch_inputs: O's file arguments and the names in its --files-from
 * list into IN: 0, or the exit status of an error (printed). */
static int batch_inputs(const struct options *o, struct sp_names *in)
{
    FILE *f = stdin;
    sp_status st = SP_OK;

    for (int i = 0; i < o->nfiles && st == SP_OK; i++)
        st = sp_names_add(in, o->files[i]);
    if (st == SP_OK && o->files_from != NULL) {
        if (strcmp(o->files_from, "-") != 0)
            f = fopen(o->files_from, "r");
        if (f == NULL) {
            sp_print_error(o->files_from, errno, "");
            return EXIT_FAILURE;
        }
        st = sp_names_read(f, o->nul ? '\0' : '\n', in);
        if (f != stdin)
            fclose(f);
        if (st != SP_OK) {
            sp_print_error(o->files_from, st, "");
            return EXIT_FAILURE;
        }
    }
    for (size_t i = 0; i < in->n; i++)
        if (strcmp(in->name[i], "-") == 0) {
            sp_say("'-' in %s: a batch takes files, not standard input "
                   "(./- names a file)", o->files_from != NULL
                                             ? o->files_from
                                             : "the inputs");
            return EXIT_USAGE;
        }
    if (st != SP_OK)
        sp_print_error("-o", st, "");
    return st != SP_OK ? EXIT_FAILURE : 0;
}

/* out_relative: into REL (PATH_MAX), the path of the input IN that a
 * batch mirrors below --relative-to DIR (or the current directory, CWD):
 * 0, or the exit status of an error (printed). */
static int out_relative(const struct options *o, const char *cwd,
                        const char *in, char *rel)
{
    const char *base = o->relative_to != NULL ? o->relative_to : ".";
    sp_status st = sp_names_relative(cwd, base, in, rel, PATH_MAX);

    if (st == EINVAL) {
        sp_say("'%s': not below '%s', or '..' in its path below it: its "
               "output would leave the tree (see scaleppm --help)", in,
               base);
        return EXIT_USAGE;
    }
    if (st != SP_OK) {
        sp_print_error(in, st, "its output's name");
        return EXIT_FAILURE;
    }
    return 0;
}

/* out_names: the output of each of the inputs IN into OUT: 0, or the
 * exit status of an error (printed). */
static int out_names(const struct options *o, const struct sp_names *in,
                     struct sp_names *out)
{
    char name[PATH_MAX], rel[PATH_MAX];
    int mirror = o->relative_to != NULL ||
                 (!o->target_dir && sp_pattern_has_rel(o->target));
    char *cwd = mirror ? getcwd(NULL, 0) : NULL;
    sp_status st = mirror && cwd == NULL ? errno : SP_OK;
    enum sp_outfmt fmt;
    int rc = 0;

    if (st != SP_OK) {
        sp_print_error(".", st, "the current directory");
        return EXIT_FAILURE;
    }
    for (size_t i = 0; i < in->n && rc == 0; i++) {
        if (mirror)
            rc = out_relative(o, cwd, in->name[i], rel);
        if (rc == 0)
            st = sp_batch_name(o->target, o->target_dir, o->format,
                               in->name[i], mirror ? rel : NULL, name,
                               sizeof name);
        if (rc == 0 && st == SP_OK && sp_outfmt_for(name, &fmt) != SP_OK) {
            /* not worth starting: every file of its kind would fail */
            sp_print_error(name, SP_E_OUTFORMAT, "");
            rc = EXIT_USAGE;
        }
        if (rc == 0 && st == SP_OK && (rc = sp_options_suit(o, name)) < 0)
            rc = 0;  /* else --quality or --compression for another format */
        if (rc == 0 && st == SP_OK)
            st = sp_names_add(out, name);
        if (rc == 0 && st != SP_OK) {
            sp_print_error(in->name[i], st, "its output's name");
            rc = EXIT_FAILURE;
        }
    }
    free(cwd);
    return rc;
}

/* out_dirs: the folders of the outputs OUT made where missing (mkdir -p),
 * before any file is scaled, so that a missing one is one line and not
 * a failure per file: 0, or the exit status of an error (printed). */
static int out_dirs(const struct sp_names *out, struct sp_names *created)
{
    char made[PATH_MAX];
    const char *last = NULL;
    size_t last_n = 0;

    for (size_t i = 0; i < out->n; i++) {
        const char *slash = strrchr(out->name[i], '/');
        size_t n = slash != NULL ? (size_t)(slash - out->name[i]) : 0;
        sp_status st;

        if (last != NULL && n == last_n && memcmp(last, out->name[i], n) == 0)
            continue;  /* the folder of the output before */
        st = sp_names_make_dir(out->name[i], made, sizeof made, created);
        if (st != SP_OK) {
            sp_print_error(made, st, "cannot make the output's folder");
            return EXIT_FAILURE;
        }
        last = out->name[i];
        last_n = n;
    }
    return 0;
}

/* out_held: refuse an output that is a descriptor the process holds
 * (standard output or error, by any name: the file `> out/a.ppm` opened)
 * or that is there and not a regular file (a FIFO, a device): written
 * through it, in place, it could not appear whole or not at all, which
 * --skip-existing relies on, and a FIFO with no reader would hold a
 * worker in open().  0, or the exit status (printed). */
static int out_held(const struct sp_names *out)
{
    struct stat sb;

    for (size_t i = 0; i < out->n; i++) {
        if (sp_outfile_held(out->name[i], &sb)) {
            sp_say("'%s' is a descriptor scaleppm was given (standard "
                   "output?): a batch writes each output to a file of its "
                   "own (see scaleppm --help)", out->name[i]);
            return EXIT_USAGE;
        }
        if (stat(out->name[i], &sb) == 0 && !S_ISREG(sb.st_mode)) {
            sp_say("'%s' is there and not a regular file: a batch writes "
                   "each output to a file of its own (see scaleppm --help)",
                   out->name[i]);
            return EXIT_USAGE;
        }
    }
    return 0;
}

/* out_apart: refuse outputs OUT (of the inputs IN) that are a descriptor
 * scaleppm holds or no regular file, that two inputs would both write, or that are an
 * input: 0, or the exit status of an error (printed). */
static int out_apart(const struct sp_names *in, const struct sp_names *out)
{
    size_t i, j;
    int clash, rc = out_held(out);

    if (rc != 0)
        return rc;
    clash = sp_names_clash(out->name, out->n, &i, &j);
    if (clash < 0) {
        sp_print_error("-o", ENOMEM, "");
        return EXIT_FAILURE;
    }
    if (clash > 0) {
        int named = strcmp(out->name[i], out->name[j]) != 0;

        sp_say("'%s' and '%s' would both write '%s'%s%s%s (see scaleppm "
               "--help)", in->name[i], in->name[j], out->name[i],
               named ? ", also named '" : "", named ? out->name[j] : "",
               named ? "'" : "");
        return EXIT_USAGE;
    }
    clash = sp_names_overwrite(in->name, out->name, in->n, &i, &j);
    if (clash > 0) {
        sp_say("'%s' would overwrite the input '%s' (see scaleppm --help)",
               out->name[i], in->name[j]);
        return EXIT_USAGE;
    }
    if (clash < 0)
        sp_print_error("-o", ENOMEM, "");
    return clash < 0 ? EXIT_FAILURE : 0;
}

/* batch_outputs: the output of each of the inputs IN into OUT, their
 * folders made, and none written twice: 0, or the exit status of an
 * error (printed).  The folders are made before the outputs are compared,
 * since a new output is known by its folder (sp_names_clash); a batch
 * refused then removes those it made. */
static int batch_outputs(const struct options *o, const struct sp_names *in,
                         struct sp_names *out)
{
    struct sp_names created = {0};
    int rc = out_names(o, in, out);

    if (rc == 0)
        rc = out_dirs(out, &created);
    if (rc == 0)
        rc = out_apart(in, out);
    for (size_t k = created.n; rc != 0 && k > 0; k--)
        (void)rmdir(created.name[k - 1]);
    sp_names_free(&created);
    return rc;
}

/* run_batch: the batch O asks for: the exit status. */
static int run_batch(const struct options *o)
{
    struct sp_names in = {0}, out = {0};
    struct sp_batch b = {.job = o->job, .fail_fast = o->fail_fast,
                         .skip_existing = o->skip_existing,
                         .timings = o->timings, .json = o->json,
                         .buffers = o->buffers ? o->buffers
                                               : SP_BUFFER_REUSE};
    struct sp_tally t;
    sp_status st;
    int rc = batch_inputs(o, &in);

    if (rc == 0)
        rc = batch_outputs(o, &in, &out);
    if (rc == 0) {
        b.in = in.name;
        b.out = out.name;
        b.n = in.n;
        b.progress = !o->quiet && isatty(STDERR_FILENO);
        stop_signals(&b);
        st = sp_batch_run(&b, &t);
        if (st == SP_E_THREAD)
            sp_print_error("-o", st, "");
        else if (!o->quiet)
            sp_tally_print(&t);
        rc = st == SP_OK ? 0 : EXIT_FAILURE;
    }
    sp_names_free(&in);
    sp_names_free(&out);
    return rc;
}

/* JOB_STACK: the stack a one-file job runs on.  The main thread's is
 * RLIMIT_STACK's, which ulimit -s can make too small for the job's frames
 * and libnetpbm's and stdio's beneath them; a batch's workers have a
 * stack of their own likewise (batch.c). */
#define JOB_STACK (1024 * 1024)

struct one_job {
    const struct sp_job *job;
    struct sp_report *report;
    sigset_t mask;  /* the signals' mask to run with: the caller's */
    sp_status st;
};

static void *one_job(void *arg)
{
    struct one_job *a = arg;

    pthread_sigmask(SIG_SETMASK, &a->mask, NULL);
    a->st = sp_job_run(a->job, a->report);
    return NULL;
}

/* run_job: sp_job_run(JOB, REPORT) on a thread of JOB_STACK, or on this
 * one when no thread can be started.  This thread keeps every signal
 * blocked while it waits, so that the job's thread takes them, as the
 * main thread did: a handler never runs while an output is being named
 * (outfile.c holds them there), and no other thread is there to. */
static sp_status run_job(const struct sp_job *job, struct sp_report *report)
{
    struct one_job a = {.job = job, .report = report};
    pthread_attr_t attr;
    pthread_t t;
    sigset_t all;
    int started = 0;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &a.mask);
    if (pthread_attr_init(&attr) == 0) {
        started = pthread_attr_setstacksize(&attr, JOB_STACK) == 0 &&
                  pthread_create(&t, &attr, one_job, &a) == 0;
        pthread_attr_destroy(&attr);
    }
    if (started)
        pthread_join(t, NULL);
    pthread_sigmask(SIG_SETMASK, &a.mask, NULL);
    return started ? a.st : sp_job_run(job, report);
}

int main(int argc, char **argv)
{
    struct options o = {.job = {.io = SP_IO_AUTO, .filter = SP_FILTER_SAMPLE,
                                .threads = sp_default_threads()}};
    struct sp_report report;
    int rc = sp_parse_options(argc, argv, &o);
    sp_status st;

    if (rc >= 0)
        return rc;
    sp_show_name(o.target ? o.target : o.job.out, shown_out,
                 sizeof shown_out);
    quiet_tally = o.quiet;
    st = catch_signals();
    if (st != SP_OK) {
        sp_print_error(o.target ? o.target : o.job.out, st, "");
        return EXIT_FAILURE;
    }
    if (o.target != NULL)
        return run_batch(&o);
    if ((rc = check_output(&o.job)) != 0)
        return rc;
    st = run_job(&o.job, &report);
    if (st == SP_OK && strcmp(o.job.out, "-") == 0 && fclose(stdout) != 0) {
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
