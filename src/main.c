/* scaleppm: scale a PNM image by an integer factor, loading it with read(),
 * mmap() or pread().  Parses the command line, runs the job, reports. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "options.h"

/* show_name: PATH as printed in a one-line message, in BUF (LEN bytes):
 * backslashes and control characters (a newline in a file name) escaped
 * as C does, so that the line stays one line. */
static const char *show_name(const char *path, char *buf, size_t len)
{
    static const char plain[] = "\\\n\t\r", named[] = "\\ntr";
    size_t n = 0;

    for (const unsigned char *p = (const unsigned char *)path;
         *p != '\0' && n + 5 < len; p++) {
        const char *c = strchr(plain, *p);

        if (c != NULL)
            n += (size_t)snprintf(buf + n, len - n, "\\%c",
                                  named[c - plain]);
        else if (*p < 0x20 || *p == 0x7f)
            n += (size_t)snprintf(buf + n, len - n, "\\%03o", *p);
        else
            buf[n++] = (char)*p;
    }
    buf[n] = '\0';
    return buf;
}

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

/* quiet_pipe_end: the reader of the output went away: end as netpbm's
 * tools and coreutils do, killed by SIGPIPE without a word (the shell
 * says nothing of it in a pipeline).  SIGPIPE was ignored so that the
 * write failed instead (an output file's removal is done by then). */
static void quiet_pipe_end(void)
{
    signal(SIGPIPE, SIG_DFL);
    raise(SIGPIPE);
}

static void print_error(const char *path, sp_status st, const char *why)
{
    char shown[PATH_MAX];

    show_name(path, shown, sizeof shown);
    if (why[0] != '\0')
        fprintf(stderr, "scaleppm: %s: %s: %s\n", shown, sp_strerror(st),
                why);
    else
        fprintf(stderr, "scaleppm: %s: %s\n", shown, sp_strerror(st));
}

static void print_verbose(const struct sp_job *job, const struct sp_report *r)
{
    const struct sp_load_info *li = &r->load;
    char in[PATH_MAX];

    show_name(job->in, in, sizeof in);
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

int main(int argc, char **argv)
{
    struct options o = {.job = {.io = SP_IO_AUTO, .filter = SP_FILTER_SAMPLE,
                                .threads = sp_default_threads()}};
    struct sp_report report;
    int rc = sp_parse_options(argc, argv, &o);
    sp_status st;

    if (rc >= 0)
        return rc;
    show_name(o.job.out, shown_out, sizeof shown_out);
    st = catch_signals();
    if (st != SP_OK) {
        print_error(o.job.out, st, "");
        return EXIT_FAILURE;
    }
    st = sp_job_run(&o.job, &report);
    if (st == SP_OK && strcmp(o.job.out, "-") == 0 && fclose(stdout) != 0) {
        st = errno;
        report.failed_path = "-";
        report.why[0] = '\0';
    }
    if (st == EPIPE)
        quiet_pipe_end();
    if (st != SP_OK) {
        print_error(report.failed_path, st, report.why);
        return EXIT_FAILURE;
    }
    if (o.verbose)
        print_verbose(&o.job, &report);
    if (o.timings)
        sp_report_print(&report, o.json, stderr);
    return 0;
}
