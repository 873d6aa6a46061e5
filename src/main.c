/* scaleppm: scale a PNM image by an integer factor, loading it with read(),
 * mmap() or pread().  Parses the command line, runs the job, reports. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
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

/* The signals that end scaleppm by default and that it catches, to
 * discard an output not yet in place and say so. */
static const struct {
    int sig;
    const char *name;
} fatal_signals[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},       {SIGQUIT, "SIGQUIT"},
    {SIGTERM, "SIGTERM"}, {SIGUSR1, "SIGUSR1"},     {SIGUSR2, "SIGUSR2"},
    {SIGALRM, "SIGALRM"}, {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"},
    {SIGXCPU, "SIGXCPU"}, {SIGPWR, "SIGPWR"},
};

static void on_fatal_signal(int sig)
{
    int discarded = sp_outfile_discard_pending();

    put_err("scaleppm: ");
    put_err(shown_out);
    if (sig == SIGINT) {
        put_err(": interrupted");
    } else {
        put_err(": terminated by ");
        for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals;
             i++)
            if (fatal_signals[i].sig == sig)
                put_err(fatal_signals[i].name);
    }
    put_err(discarded ? " while writing; nothing written\n" : "\n");
    _exit(1);
}

/* catch_signals: the process's signal policy.  The fatal signals above
 * run on_fatal_signal, but those ignored on entry (nohup, a background
 * job's SIGINT) stay ignored; SIGPIPE and SIGXFSZ are ignored, so that a
 * closed pipe and the file size limit are errors (EPIPE, EFBIG) that
 * leave no output, not deaths.  Returns 0 or an errno value. */
static sp_status catch_signals(void)
{
    struct sigaction sa = {0}, was;

    sa.sa_handler = on_fatal_signal;
    sigfillset(&sa.sa_mask);  /* one handler at a time */
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals;
         i++) {
        int sig = fatal_signals[i].sig;

        if (sigaction(sig, NULL, &was) != 0)
            return errno;
        if (was.sa_handler != SIG_IGN && sigaction(sig, &sa, NULL) != 0)
            return errno;
    }
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR ||
        signal(SIGXFSZ, SIG_IGN) == SIG_ERR)
        return errno;
    return SP_OK;
}

/* stop_signals: the fatal signals caught (not those ignored on entry)
 * into SET: those a batch waits for. */
static void stop_signals(sigset_t *set)
{
    struct sigaction was;

    sigemptyset(set);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals;
         i++)
        if (sigaction(fatal_signals[i].sig, NULL, &was) == 0 &&
            was.sa_handler != SIG_IGN)
            sigaddset(set, fatal_signals[i].sig);
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
    char in[PATH_MAX];

    sp_show_name(job->in, in, sizeof in);
    fprintf(stderr, "scaleppm: %s: P%c %zux%zu, %u channel%s, maxval %u, "
            "loaded with %s; %s: %zux%zu, scale %d (%s), %u thread%s\n", in,
            li->magic, r->in_width, r->in_height, r->channels,
            r->channels == 1 ? "" : "s", r->maxval, sp_io_name(li->io_used),
            shown_out, r->out_width, r->out_height, job->factor,
            sp_filter_name(job->filter), r->threads_used,
            r->threads_used == 1 ? "" : "s");
    if (r->images > 1)
        fprintf(stderr, "scaleppm: %s: %u images, each scaled (the sizes "
                "above are the last one's)\n", in, r->images);
    if (li->trailing_bytes > 0)
        fprintf(stderr, "scaleppm: %s: %zu byte%s after the last image, "
                "not an image: ignored\n", in, li->trailing_bytes,
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
        fprintf(stderr, "scaleppm: not writing an image to a terminal: "
                "name OUT or redirect standard output (see scaleppm "
                "--help)\n");
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
            fprintf(stderr, "scaleppm: '-' in %s: a batch takes files, "
                    "not standard input (./- names a file)\n",
                    o->files_from);
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
    char a[PATH_MAX], b[PATH_MAX];
    sp_status st = sp_names_relative(cwd, base, in, rel, PATH_MAX);

    if (st == EINVAL) {
        fprintf(stderr, "scaleppm: '%s': not below '%s', or '..' in its "
                "path below it: its output would leave the tree (see "
                "scaleppm --help)\n", sp_show_name(in, a, sizeof a),
                sp_show_name(base, b, sizeof b));
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
static int out_dirs(const struct sp_names *out)
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
        st = sp_names_make_dir(out->name[i], made, sizeof made);
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
 * (standard output or error, by any name: the file `> out/a.ppm` opened):
 * written through it, in place, it could not appear whole or not at all,
 * which --skip-existing relies on.  0, or the exit status (printed). */
static int out_held(const struct sp_names *out)
{
    char c[PATH_MAX];
    struct stat sb;

    for (size_t i = 0; i < out->n; i++)
        if (sp_outfile_held(out->name[i], &sb)) {
            fprintf(stderr, "scaleppm: '%s' is a descriptor scaleppm was "
                    "given (standard output?): a batch writes each output "
                    "to a file of its own (see scaleppm --help)\n",
                    sp_show_name(out->name[i], c, sizeof c));
            return EXIT_USAGE;
        }
    return 0;
}

/* batch_outputs: the output of each of the inputs IN into OUT, their
 * folders made, and none written twice: 0, or the exit status of an
 * error (printed).  The folders are made before the outputs are compared,
 * since a new output is known by its folder (sp_names_clash). */
static int batch_outputs(const struct options *o, const struct sp_names *in,
                         struct sp_names *out)
{
    char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX];
    size_t i, j;
    int clash, rc = out_names(o, in, out);

    if (rc == 0)
        rc = out_dirs(out);
    if (rc == 0)
        rc = out_held(out);
    if (rc != 0)
        return rc;
    clash = sp_names_clash(out->name, out->n, &i, &j);
    if (clash < 0) {
        sp_print_error("-o", ENOMEM, "");
        return EXIT_FAILURE;
    }
    if (clash > 0) {
        fprintf(stderr, "scaleppm: '%s' and '%s' would both write '%s'",
                sp_show_name(in->name[i], a, sizeof a),
                sp_show_name(in->name[j], b, sizeof b),
                sp_show_name(out->name[i], c, sizeof c));
        if (strcmp(out->name[i], out->name[j]) != 0)
            fprintf(stderr, ", also named '%s'",
                    sp_show_name(out->name[j], c, sizeof c));
        fprintf(stderr, " (see scaleppm --help)\n");
        return EXIT_USAGE;
    }
    clash = sp_names_overwrite(in->name, out->name, in->n, &i, &j);
    if (clash > 0) {
        fprintf(stderr, "scaleppm: '%s' would overwrite the input '%s' "
                "(see scaleppm --help)\n",
                sp_show_name(out->name[i], c, sizeof c),
                sp_show_name(in->name[j], a, sizeof a));
        return EXIT_USAGE;
    }
    if (clash < 0)
        sp_print_error("-o", ENOMEM, "");
    return clash < 0 ? EXIT_FAILURE : 0;
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
        stop_signals(&b.stop_signals);
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
    st = catch_signals();
    if (st != SP_OK) {
        sp_print_error(o.target ? o.target : o.job.out, st, "");
        return EXIT_FAILURE;
    }
    if (o.target != NULL)
        return run_batch(&o);
    if ((rc = check_output(&o.job)) != 0)
        return rc;
    st = sp_job_run(&o.job, &report);
    if (st == SP_OK && strcmp(o.job.out, "-") == 0 && fclose(stdout) != 0) {
        st = errno;
        report.failed_path = "-";
        report.why[0] = '\0';
    }
    if (st == EPIPE)
        quiet_pipe_end();
    if (st != SP_OK) {
        sp_print_error(report.failed_path, st, report.why);
        return EXIT_FAILURE;
    }
    if (o.verbose)
        print_verbose(&o.job, &report);
    if (o.timings)
        sp_report_print(&report, o.json, stderr);
    return 0;
}
