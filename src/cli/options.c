/* The command line: scaleppm's options and file arguments, read into a
 * job (job.h), with the help text and the usage errors. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msg.h"
#include "say.h"
#include "names.h"
#include "parallel.h"
#include "params.h"

unsigned sp_default_threads(void)
{
    cpu_set_t set;
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    return n < 1 ? 1 : n > SP_THREADS_MAX ? SP_THREADS_MAX : (unsigned)n;
}

static void usage(FILE *f)
{
    fprintf(f,
"usage: scaleppm [OPTION]... -s N|--fit WxH [IN [OUT]]\n"
"       scaleppm [OPTION]... -s N|--fit WxH -o DIR/|PATTERN [IN]...\n"
"                [--files-from L]\n"
"\n"
"Scale the image IN (PBM, PGM, PPM or PAM, plain or raw, 1 to 16 bits;\n"
"JPEG; PNG; every image of a stream of them, the type told by its bytes)\n"
"by an integer factor, or to a size, into OUT.\n"
"IN and OUT default to standard input and output; - names them too.\n"
"With -o, scale every IN (a batch), each into its own output.\n"
"\n"
"  -s, --scale N       N >= 2 enlarges N times (each pixel an N x N block),\n"
"                      N <= -2 reduces |N| times, 1 or -1 copies\n"
"      --filter F      reduce by sampling one pixel per block (sample, the\n"
"                      default) or by the block's mean (box: colour\n"
"                      weighted by alpha; a PBM gives a PGM; a JPEG is\n"
"                      decoded shrunk first, see --no-shrink-on-load)\n"
"      --fit WxH       a thumbnail: the aspect ratio kept, W wide or H\n"
"                      high (the side that bounds it), the other side\n"
"                      rounded as vipsthumbnail does; an area average\n"
"                      (alpha-weighted; a PBM gives a PGM)\n"
"      --width W, --height H\n"
"                      --fit with one side: the other from the ratio\n"
"      --enlarge       --fit: enlarge an image smaller than the box (else\n"
"                      it is copied)\n"
"      --crop centre   --fit WxH: fill the box, the aspect kept, and cut\n"
"                      what is over from both ends (square tiles)\n"
"      --no-shrink-on-load\n"
"                      decode every pixel of a JPEG (else a box reduce\n"
"                      or a fit decodes it at 1/2, 1/4 or 1/8 first)\n"
"      --orient auto|none, --no-auto-orient\n"
"                      a JPEG or PNG is turned upright as its EXIF\n"
"                      orientation says (auto, the default), the output\n"
"                      carrying none; or kept as stored (none), the\n"
"                      orientation then carried into a JPEG or PNG\n"
"      --io METHOD     load with read() into a buffer, with mmap(), or\n"
"                      pread() the rows each part of the output needs as\n"
"                      it is scaled; auto (the default) preads a regular\n"
"                      file; pipes and devices are always read\n"
"  -t, --threads T     threads, 1..%d (default: one per CPU it may use)\n"
"      --quality Q     JPEG quality, 1..100 (default 90); for JPEG\n"
"                      outputs only\n"
"      --subsample S   JPEG chroma subsampling: 444 (none), 422 or 420\n"
"                      (the default, whatever the quality); for JPEG only\n"
"      --compression L PNG zlib level, 0 (stored) to 9 (smallest; default\n"
"                      6); for PNG outputs only\n"
"      --background C  the colour an alpha is flattened onto where the\n"
"                      output has none (JPEG, PGM, PPM): RRGGBB in hex,\n"
"                      white (the default) or black\n"
"      --no-output     scale IN fully and write nothing (no OUT): every\n"
"                      row made and dropped, the write phase 0; the\n"
"                      span Sun's 2002 study timed\n"
"      --timings[=text|json]\n"
"                      a record of each run on stderr: files, factor,\n"
"                      filter, I/O path, codec, threads, each phase's\n"
"                      time and page faults; json: one object a line\n"
"      --max-pixels N  refuse an input or output of more than N pixels\n"
"                      (default 2147483648)\n"
"  -v, --verbose       describe the input and output on stderr\n"
"\n"
"A batch:\n"
"  -o, --output DIR/   each IN into DIR under its own name; a PATTERN\n"
"                      instead names each output: %%s is IN's name\n"
"                      without its directory and extension, %%r its path\n"
"                      without extension (see --relative-to), %%%% a %%\n"
"                      (-o 'small/%%s_4.png'); missing folders are made\n"
"      --relative-to DIR\n"
"                      mirror the tree below DIR: with -o OUT/, DIR/a/b.ppm\n"
"                      is written to OUT/a/b.ppm, and %%r is a/b (%%r alone:\n"
"                      below the current directory); an input outside DIR,\n"
"                      or with .. below it, is refused\n"
"      --format EXT    with -o DIR/: write EXT files (png, pam, ...; in\n"
"                      any case, as an extension)\n"
"      --files-from L  also the inputs named in the file L (- for\n"
"                      standard input), one a line; one list\n"
"  -0, --null          the names in L end with a NUL, not a newline\n"
"      --skip-existing leave out an input whose output exists and is\n"
"                      whole (one a crash left short is made again)\n"
"      --fail-fast     stop at the first file that fails (else the\n"
"                      others go on, and the exit status is 1)\n"
"      --read-buffer reuse|fresh\n"
"                      --io read: each thread reads the next image into\n"
"                      the buffer of the last (reuse, the default), or\n"
"                      into new memory (fresh: the Sun study's cost)\n"
"  -q, --quiet         no progress line and no summary\n"
"-t threads are shared: min(T, files) files at a time.\n"
"\n"
"  -h, --help          show this help\n"
"  -V, --version       show the version\n"
"\n"
"OUT's name picks what is written: .pnm, none or - the input's type;\n"
".pam PAM; .pgm gray (from colour as ppmtopgm); .ppm colour (from gray\n"
"as pgmtoppm); .pbm from a PBM only; .png (keeps alpha), .jpg/.jpeg,\n"
".bmp, .tga (8 bits a sample).\n"
"Exit status: 0 success, 1 bad input or I/O error, 2 bad usage; a reader\n"
"that closes the pipe early ends scaleppm quietly (SIGPIPE).\n",
            SP_THREADS_MAX);
}

/* usage_error: the usage error FMT says, on one line, every byte of it
 * (the arguments it echoes are the user's, or a script's) shown as
 * sp_show_name() shows a name.  Returns EXIT_USAGE. */
__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&text, fmt, ap);
    va_end(ap);
    sp_say("%s (see scaleppm --help)", n >= 0 ? text : "bad usage");
    if (n >= 0)
        free(text);
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

/* The options that are not a job's keys (params.h), and past them
 * OPT_KEY + I for the table's row I. */
enum { OPT_TIMINGS = 256, OPT_MAX_PIXELS, OPT_FILES_FROM, OPT_FAIL_FAST,
       OPT_SKIP_EXISTING, OPT_READ_BUFFER, OPT_RELATIVE_TO, OPT_NO_OUTPUT,
       OPT_NO_AUTO_ORIENT, OPT_KEY = 512 };

/* parse_key: the job's key KEY (params.h), spelled SPELLED ("-s",
 * "--scale"), with the argument ARG (NULL: none) into O: 0, or the exit
 * status of a usage error (printed). */
static int parse_key(const char *key, const char *spelled, const char *arg,
                     struct options *o)
{
    char why[SP_PARAMS_WHY_MAX];

    if (sp_params_set(&o->params, &o->job, key, arg, why) != SP_OK) {
        /* the whole argument shown, however long */
        size_t len = strlen(spelled) + (arg ? strlen(arg) : 0) +
                     sizeof why + 8;
        char *line = malloc(len);
        int rc;

        if (line == NULL)
            return usage_error("%s", why);
        sp_params_message(&o->params, spelled, arg, why, line, len);
        rc = usage_error("%s", line);
        free(line);
        return rc;
    }
    /* A batch names its outputs with the extension as it was given. */
    if (strcmp(key, "format") == 0)
        o->format = arg;
    return 0;
}

/* parse_choice: OPTARG as one of NAMES (N of them) into *OUT, its
 * index. */
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
    int v;
    char *end;

    switch (c) {
    case 't':
        if (parse_int(arg, 1, SP_THREADS_MAX, &v))
            return usage_error("-t '%s': expected 1 to 1024 threads", arg);
        o->job.threads = (unsigned)v;
        return 0;
    case OPT_TIMINGS:
        if (arg != NULL && strcmp(arg, "json") != 0 &&
            strcmp(arg, "text") != 0)
            return usage_error("--timings='%s': expected text or json", arg);
        o->timings = 1;
        o->json = arg != NULL && strcmp(arg, "json") == 0;
        o->timings_bare = arg == NULL;
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

/* parse_batch: the batch's option C (with the argument ARG, if it takes
 * one) into O: 0, or the exit status of a usage error (printed). */
static int parse_batch(int c, const char *arg, struct options *o)
{
    static const char *const buffers[] = {"reuse", "fresh"};
    int v;

    switch (c) {
    case 'o':
        if (arg[0] == '\0')
            return usage_error("%s", "-o '': expected a directory or a "
                               "pattern");
        o->target = arg;
        return 0;
    case OPT_FILES_FROM:
        /* The option says "also these": a second one replacing the first
         * would drop a list's files without a word, and honouring both
         * would need rules for two '-' and for -0 (which list it is for).
         * One list; cat makes one of several. */
        if (o->files_from != NULL)
            return usage_error("--files-from '%s': one list only, and "
                               "'%s' was given first (cat joins lists)",
                               arg, o->files_from);
        o->files_from = arg;
        return 0;
    case OPT_RELATIVE_TO:
        o->relative_to = arg;
        return 0;
    case OPT_READ_BUFFER:
        if (parse_choice(arg, buffers, 2, &v))
            return usage_error("--read-buffer '%s': expected reuse or fresh",
                               arg);
        o->buffers = v == 0 ? SP_BUFFER_REUSE : SP_BUFFER_FRESH;
        return 0;
    case '0':
        o->nul = 1;
        return 0;
    case 'q':
        o->quiet = 1;
        return 0;
    case OPT_FAIL_FAST:
        o->fail_fast = 1;
        return 0;
    default:  /* OPT_SKIP_EXISTING */
        o->skip_existing = 1;
        return 0;
    }
}

/* check_batch: what a batch's options ask together (-o given): -1 to
 * run, or the exit status of a usage error.  The target is a directory
 * when it ends in '/' or names one, else a pattern. */
static int check_batch(int n, char **files, struct options *o)
{
    struct stat sb;
    size_t len = strlen(o->target);

    o->target_dir = o->target[len - 1] == '/' ||
                    (stat(o->target, &sb) == 0 && S_ISDIR(sb.st_mode));
    if (!o->target_dir && !sp_pattern_ok(o->target))
        return usage_error("-o '%s': expected a directory (DIR/) or a "
                           "pattern with %%s or %%r", o->target);
    if (o->relative_to != NULL && !o->target_dir &&
        !sp_pattern_has_rel(o->target))
        return usage_error("--relative-to: for -o DIR/ or a pattern with "
                           "%%r ('%s')", o->target);
    if (!o->target_dir && o->format != NULL)
        return usage_error("--format: for -o DIR/; a pattern names its "
                           "type ('%s')", o->target);
    for (int i = 0; i < n; i++)
        if (strcmp(files[i], "-") == 0)
            return usage_error("%s", "'-': a batch takes files, not "
                               "standard input");
    if (n == 0 && o->files_from == NULL)
        return usage_error("-o '%s': no input files", o->target);
    o->files = files;
    o->nfiles = n;
    return -1;
}

/* check_no_output: --no-output with the N file arguments FILES (no
 * batch): one input and no OUT, and no option about an output.  -1 to run (O's job
 * has no output), or the exit status of a usage error. */
static int check_no_output(int n, char **files, struct options *o)
{
    if (n > 1)
        return usage_error("'%s': --no-output writes no OUT", files[1]);
    if (sp_params_given(&o->params, "quality") ||
        sp_params_given(&o->params, "subsample") ||
        sp_params_given(&o->params, "compression"))
        return usage_error("%s", "--quality, --subsample and --compression: "
                           "for an output, and --no-output writes none");
    o->job.in = sp_src_path(n > 0 ? files[0] : "-");
    o->job.out = (struct sp_target){.kind = SP_TARGET_NONE};
    return -1;
}

/* check_options: the N file arguments FILES, and what the options ask
 * together, into O: -1 to run, or the exit status of a usage error. */
static int check_options(int n, char **files, struct options *o)
{
    char why[SP_PARAMS_WHY_MAX];

    if (sp_params_check(&o->params, &o->job, why) != SP_OK)
        return usage_error("%s", why);
    /* "--timings json": the format as a file, which is not there */
    if (n > 0 && o->timings_bare &&
        (strcmp(files[0], "json") == 0 || strcmp(files[0], "text") == 0) &&
        access(files[0], F_OK) != 0)
        return usage_error("--timings %s: the format goes after '=': "
                           "--timings=%s", files[0], files[0]);
    if (o->no_output && o->target != NULL)
        return usage_error("%s", "--no-output: for one input; a batch (-o) "
                           "writes its outputs");
    if (o->target != NULL)
        return check_batch(n, files, o);
    if (o->relative_to != NULL)
        return usage_error("%s", "--relative-to is for a batch (-o)");
    if (o->format != NULL || o->files_from != NULL || o->nul ||
        o->fail_fast || o->skip_existing || o->buffers != SP_BUFFER_FREE)
        return usage_error("%s", "--format, --files-from, -0, --fail-fast, "
                           "--skip-existing and --read-buffer are for a "
                           "batch (-o)");
    if (o->no_output)
        return check_no_output(n, files, o);
    if (n > 2)
        return usage_error("'%s': one input and one output at most "
                           "(a batch: -o DIR/)", files[2]);
    if (n > 1 && files[1][0] == '\0')
        return usage_error("%s", "OUT is an empty name: name a file, or - "
                           "for standard output");
    o->job.in = sp_src_path(n > 0 ? files[0] : "-");
    o->job.out = sp_target_path(n > 1 ? files[1] : "-");
    return sp_options_suit(o, o->job.out.path);
}

int sp_options_suit(const struct options *o, const char *out)
{
    enum sp_outfmt fmt = SP_OUT_PNM;
    char why[SP_PARAMS_WHY_MAX], *shown = NULL;
    int rc = -1;

    if (strcmp(out, "-") != 0 && sp_outfmt_for(out, &fmt, NULL) != SP_OK)
        return -1;  /* not a format: that is its own error */
    if (strcmp(out, "-") != 0 && asprintf(&shown, "'%s'", out) < 0)
        shown = NULL;
    if (sp_params_suit(&o->params, fmt,
                       strcmp(out, "-") == 0 ? "standard output"
                       : shown != NULL       ? shown
                                             : "the output",
                       why) != SP_OK)
        rc = usage_error("%s", why);
    free(shown);
    return rc;
}

/* KEYS_MAX: the long options a job's keys make: a name and an alias for
 * each of the table's rows, 32 at most (params.c). */
#define KEYS_MAX 64

/* key_options: into OPTS (KEYS_MAX), a long option for each name and
 * alias of the job's keys (OPT_KEY + its row); returns how many. */
static size_t key_options(struct option *opts)
{
    const struct sp_param *r;
    size_t n = 0;

    for (size_t i = 0; (r = sp_params_row(i)) != NULL; i++) {
        int has_arg = r->type == SP_PARAM_FLAG ? no_argument
                                               : required_argument;

        opts[n++] = (struct option){r->name, has_arg, NULL,
                                    OPT_KEY + (int)i};
        if (r->alias != NULL)
            opts[n++] = (struct option){r->alias, has_arg, NULL,
                                        OPT_KEY + (int)i};
    }
    return n;
}

int sp_parse_options(int argc, char **argv, struct options *o)
{
    static const struct option own[] = {
        {"threads", required_argument, NULL, 't'},
        {"timings", optional_argument, NULL, OPT_TIMINGS},
        {"max-pixels", required_argument, NULL, OPT_MAX_PIXELS},
        {"output", required_argument, NULL, 'o'},
        {"files-from", required_argument, NULL, OPT_FILES_FROM},
        {"relative-to", required_argument, NULL, OPT_RELATIVE_TO},
        {"null", no_argument, NULL, '0'},
        {"fail-fast", no_argument, NULL, OPT_FAIL_FAST},
        {"skip-existing", no_argument, NULL, OPT_SKIP_EXISTING},
        {"read-buffer", required_argument, NULL, OPT_READ_BUFFER},
        {"no-output", no_argument, NULL, OPT_NO_OUTPUT},
        {"no-auto-orient", no_argument, NULL, OPT_NO_AUTO_ORIENT},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
    };
    struct option longopts[sizeof own / sizeof *own + KEYS_MAX + 1];
    size_t nown = sizeof own / sizeof *own;
    int c, rc, at;

    memcpy(longopts, own, sizeof own);
    longopts[nown + key_options(longopts + nown)] =
        (struct option){NULL, 0, NULL, 0};
    sp_params_init(&o->params, &o->job, SP_PARAMS_ANY);
    opterr = 0;
    while ((at = -1, c = getopt_long(argc, argv, ":s:t:o:0qvhV", longopts,
                                     &at)) != -1) {
        if (c >= OPT_KEY || c == 's') {
            char spelled[32];

            snprintf(spelled, sizeof spelled, "-%s%s", at >= 0 ? "-" : "",
                     at >= 0 ? longopts[at].name : "s");
            rc = parse_key(c == 's' ? "scale"
                                    : sp_params_row((size_t)(c - OPT_KEY))->name,
                           spelled, optarg, o);
            if (rc != 0)
                return rc;
            continue;
        }
        /* the key orient=none, as vipsthumbnail's --no-rotate */
        if (c == OPT_NO_AUTO_ORIENT) {
            if ((rc = parse_key("orient", "--no-auto-orient", "none", o)))
                return rc;
            continue;
        }
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
            if (optopt != 0 && optopt < OPT_TIMINGS)
                return usage_error("-%c needs an argument", optopt);
            return usage_error("%s needs an argument", argv[optind - 1]);
        case 't': case OPT_TIMINGS: case OPT_MAX_PIXELS:
            if ((rc = parse_value(c, optarg, o)) != 0)
                return rc;
            break;
        case OPT_NO_OUTPUT:
            o->no_output = 1;
            break;
        case 'o': case '0': case 'q': case OPT_FILES_FROM:
        case OPT_FAIL_FAST: case OPT_SKIP_EXISTING: case OPT_READ_BUFFER:
        case OPT_RELATIVE_TO:
            if ((rc = parse_batch(c, optarg, o)) != 0)
                return rc;
            break;
        default:
            /* optopt names a bad short option even inside a cluster. */
            if (optopt != 0)
                return usage_error("unknown option '-%c'", optopt);
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    return check_options(argc - optind, argv + optind, o);
}

