/* scaleppm: scale a PNM image by an integer factor, loading it with read(),
 * mmap() or pread().  Parses the command line, runs the job, reports. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "parallel.h"

#define EXIT_USAGE 2

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

/* default_threads: one thread per CPU online. */
static unsigned default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    return n < 1 ? 1 : n > SP_THREADS_MAX ? SP_THREADS_MAX : (unsigned)n;
}

static void usage(FILE *f)
{
    fprintf(f,
"usage: scaleppm [--io auto|read|mmap|pread] -s N [-t T] [--filter sample|box]\n"
"                [--timings[=json]] [-v] IN OUT\n"
"\n"
"Scale the PNM image IN (P6/P5/P3/P2, 8 or 16 bits; - for stdin) by an\n"
"integer factor and write it to OUT (- for stdout).\n"
"\n"
"  -s, --scale N       N >= 2 enlarges N times (each pixel an N x N block),\n"
"                      N <= -2 reduces |N| times, 1 or -1 copies\n"
"      --io METHOD     load with read() into a buffer, with mmap(), or\n"
"                      pread() the rows each part of the output needs as\n"
"                      it is scaled; auto (the default) preads a regular\n"
"                      file; pipes and devices are always read\n"
"  -t, --threads T     threads, 1..%d (default: the CPUs online, %u)\n"
"      --filter F      reduce by sampling one pixel per block (sample, the\n"
"                      default) or by the block's mean (box)\n"
"      --timings[=json] print the phases' times and page faults on stderr\n"
"      --max-pixels N  refuse an input or output of more than N pixels\n"
"                      (default 2147483648)\n"
"  -v, --verbose       describe the input and output on stderr\n"
"  -h, --help          show this help\n"
"  -V, --version       show the version\n"
"\n"
"OUT's extension picks the format: .ppm/.pgm/.pnm or none (PNM of IN's\n"
"type), .png, .jpg/.jpeg, .bmp, .tga (8 bits a sample).\n"
"Exit status: 0 success, 1 bad input or I/O error, 2 bad usage.\n",
            SP_THREADS_MAX, default_threads());
}

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "scaleppm: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see scaleppm --help)\n");
    return EXIT_USAGE;
}

/* parse_int: all of S as a decimal int in [LO, HI]. */
static int parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    long v;

    if (!(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
        return -1;  /* strtol would take blanks and a '+' */
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
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
    fprintf(stderr, "scaleppm: %s: P%c %zux%zu maxval %u, loaded with %s; "
            "%s: %zux%zu, scale %d (%s), %u threads\n", in, li->magic,
            r->in_width, r->in_height, r->maxval, sp_io_name(li->io_used),
            shown_out, r->out_width, r->out_height, job->factor,
            sp_filter_name(job->filter), r->threads_used);
    if (li->trailing_bytes > 0)
        fprintf(stderr, "scaleppm: %s: %zu byte%s after the first image%s; "
                "using the first image\n", in, li->trailing_bytes,
                li->trailing_bytes == 1 ? "" : "s",
                li->trailing_image ? " (another image)" : "");
}

/* What the command line asks for. */
struct options {
    struct sp_job job;
    int have_scale, timings, json, verbose;
};

enum { OPT_IO = 256, OPT_FILTER, OPT_TIMINGS, OPT_MAX_PIXELS };

/* parse_choice: OPTARG as one of NAMES (N of them) into *OUT, its index. */
static int parse_choice(const char *arg, const char *const *names, int n,
                        int *out)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(arg, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    return -1;
}

/* parse_value: the option C with the argument ARG into O: 0, or the exit
 * status of a usage error (already printed). */
static int parse_value(int c, const char *arg, struct options *o)
{
    static const char *const ios[] = {"read", "mmap", "pread", "auto"};
    static const char *const filters[] = {"sample", "box"};
    int v;
    char *end;

    switch (c) {
    case OPT_IO:
        if (parse_choice(arg, ios, 4, &v))
            return usage_error("--io '%s': expected auto, read, mmap or "
                               "pread", arg);
        o->job.io = (enum sp_io)v;
        return 0;
    case 's':
        if (parse_int(arg, -SP_SCALE_MAX, SP_SCALE_MAX, &o->job.factor) ||
            o->job.factor == 0)
            return usage_error("-s '%s': expected a non-zero integer "
                               "from -65536 to 65536", arg);
        o->have_scale = 1;
        return 0;
    case 't':
        if (parse_int(arg, 1, SP_THREADS_MAX, &v))
            return usage_error("-t '%s': expected 1 to 1024 threads", arg);
        o->job.threads = (unsigned)v;
        return 0;
    case OPT_FILTER:
        if (parse_choice(arg, filters, 2, &v))
            return usage_error("--filter '%s': expected sample or box", arg);
        o->job.filter = v == 0 ? SP_FILTER_SAMPLE : SP_FILTER_BOX;
        return 0;
    case OPT_TIMINGS:
        if (arg != NULL && strcmp(arg, "json") != 0)
            return usage_error("--timings='%s': expected json", arg);
        o->timings = 1;
        o->json = arg != NULL;
        return 0;
    default:  /* OPT_MAX_PIXELS */
        errno = 0;
        o->job.max_pixels = strtoull(arg, &end, 10);
        if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 ||
            o->job.max_pixels == 0)
            return usage_error("--max-pixels '%s': expected a positive "
                               "number", arg);
        return 0;
    }
}

/* parse_options: ARGV into O: -1 to run, or the exit status to end with
 * (help, version, a usage error). */
static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"io", required_argument, NULL, OPT_IO},
        {"scale", required_argument, NULL, 's'},
        {"threads", required_argument, NULL, 't'},
        {"filter", required_argument, NULL, OPT_FILTER},
        {"timings", optional_argument, NULL, OPT_TIMINGS},
        {"max-pixels", required_argument, NULL, OPT_MAX_PIXELS},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c, rc;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:t:vhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'v':
            o->verbose = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("scaleppm %s (%s)\n", SP_VERSION, SP_COMMIT);
            return 0;
        case ':':
            if (optopt != 0 && optopt < OPT_IO)
                return usage_error("-%c needs an argument", optopt);
            return usage_error("%s needs an argument", argv[optind - 1]);
        case 's': case 't': case OPT_IO: case OPT_FILTER: case OPT_TIMINGS:
        case OPT_MAX_PIXELS:
            if ((rc = parse_value(c, optarg, o)) != 0)
                return rc;
            break;
        default:
            /* optopt names a bad short option even inside a cluster. */
            if (optopt != 0)
                return usage_error("unknown option '-%c'", optopt);
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!o->have_scale)
        return usage_error("%s", "missing -s N");
    if (argc - optind != 2)
        return usage_error("%s", "expected two files, IN and OUT");
    o->job.in = argv[optind];
    o->job.out = argv[optind + 1];
    return -1;
}

int main(int argc, char **argv)
{
    struct options o = {.job = {.io = SP_IO_AUTO, .filter = SP_FILTER_SAMPLE,
                                .threads = default_threads()}};
    struct sp_report report;
    int rc = parse_options(argc, argv, &o);
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
    if (st != SP_OK) {
        print_error(report.failed_path, st, report.why);
        return EXIT_FAILURE;
    }
    if (strcmp(o.job.out, "-") == 0 && fclose(stdout) != 0) {
        print_error("-", errno, "");
        return EXIT_FAILURE;
    }
    if (o.verbose)
        print_verbose(&o.job, &report);
    if (o.timings)
        sp_report_print(&report, o.json, stderr);
    return 0;
}
