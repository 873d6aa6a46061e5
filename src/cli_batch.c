/* The command line's batch (-o, --files-from): the inputs and their
 * outputs' names checked before anything is scaled, the batch run by the
 * library (batch.h), and what it reports printed on stderr: a line for
 * each file that fails, a --timings record for each file, the progress
 * line on a terminal, and the summary. */
#include "cli_batch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msg.h"
#include "names.h"
#include "outfile.h"
#include "say.h"

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

/* What the batch reports, printed (reporter.h). */
struct front {
    char *const *in;    /* the inputs, for a failure that names no path */
    int timings, json;  /* a record a file (--timings) */
    int shown;          /* a progress line is on the terminal */
};

/* unshow: the progress line, if one is shown, wiped. */
static void unshow(struct front *f)
{
    if (f->shown)
        fputs("\r\033[K", stderr);
    f->shown = 0;
}

/* on_file: a file's end: a line if it failed, a record with --timings. */
static void on_file(void *arg, size_t i, sp_status st,
                    const struct sp_report *rep)
{
    struct front *f = arg;

    if (st != SP_OK) {
        unshow(f);
        sp_print_error(rep->failed_path != NULL ? rep->failed_path
                                                : f->in[i],
                       st, rep->why);
    }
    if (f->timings) {
        unshow(f);
        sp_report_print(rep, st, f->json, stderr);
    }
}

/* on_progress: the progress line: files done of all, MB/s, time left. */
static void on_progress(void *arg, const struct sp_progress *p)
{
    struct front *f = arg;
    double s = (double)p->ns / 1e9;

    fprintf(stderr, "\r\033[Kscaleppm: %zu/%zu files, %.1f MB/s", p->done,
            p->files, s > 0 ? (double)p->bytes / 1e6 / s : 0.0);
    /* whole seconds, up: never "0 s left" while a file is not done */
    if (p->eta >= 0 && p->done < p->files) {
        unsigned long long secs = (unsigned long long)p->eta;

        secs += (double)secs < p->eta;
        fprintf(stderr, ", %llu s left", secs < 1 ? 1 : secs);
    }
    fflush(stderr);
    f->shown = 1;
}

static void on_over(void *arg)
{
    unshow(arg);
}

int sp_cli_batch(const struct options *o, const sigset_t *stop_signals,
                 void (*stopped)(int sig, const struct sp_tally *t))
{
    struct sp_names in = {0}, out = {0};
    struct front f = {.timings = o->timings, .json = o->json};
    struct sp_batch b = {.job = o->job, .fail_fast = o->fail_fast,
                         .skip_existing = o->skip_existing,
                         .buffers = o->buffers ? o->buffers
                                               : SP_BUFFER_REUSE,
                         .reporter = {.arg = &f, .file = on_file,
                                      .over = on_over},
                         .stop_signals = *stop_signals,
                         .stopped = stopped};
    struct sp_tally t;
    sp_status st;
    int rc = batch_inputs(o, &in);

    if (rc == 0)
        rc = batch_outputs(o, &in, &out);
    if (rc == 0) {
        b.in = in.name;
        b.out = out.name;
        b.n = in.n;
        f.in = in.name;
        if (!o->quiet && isatty(STDERR_FILENO))
            b.reporter.progress = on_progress;
        st = sp_batch_run(&b, &t);
        if (st == SP_E_THREAD)
            sp_print_error("-o", st, "");
        else if (!o->quiet)
            sp_cli_tally_print(&t);
        rc = st == SP_OK ? 0 : EXIT_FAILURE;
    }
    sp_names_free(&in);
    sp_names_free(&out);
    return rc;
}

/* human: N bytes in decimal units, into BUF (LEN bytes). */
static const char *human(uint64_t n, char *buf, size_t len)
{
    static const char *const unit[] = {"kB", "MB", "GB", "TB"};
    double v = (double)n;
    int u = -1;

    while (v >= 1000 && u < 3) {
        v /= 1000;
        u++;
    }
    if (u < 0)
        snprintf(buf, len, "%llu B", (unsigned long long)n);
    else
        snprintf(buf, len, "%.1f %s", v, unit[u]);
    return buf;
}

void sp_cli_tally_print(const struct sp_tally *t)
{
    size_t left = t->files - t->scaled - t->failed - t->skipped;
    char size[32];

    fprintf(stderr, "scaleppm: %zu scaled", t->scaled);
    if (t->failed > 0)
        fprintf(stderr, ", %zu failed", t->failed);
    if (t->skipped > 0)
        fprintf(stderr, ", %zu skipped", t->skipped);
    if (left > 0)
        fprintf(stderr, ", %zu not done", left);
    fprintf(stderr, ", %s in %.1f s%s\n", human(t->bytes, size, sizeof size),
            (double)t->ns / 1e9, t->signal != 0 ? ", interrupted" : "");
}
