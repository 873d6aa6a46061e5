/* The command line's batch (-o, --files-from): the inputs read from the
 * arguments and the list, their outputs named and checked by the library
 * (outnames.h) before anything is scaled, the batch run by the library
 * (batch.h), and what they report printed on stderr: a refusal, a line
 * for each file that fails, a --timings record for each file, the
 * progress line on a terminal, and the summary. */
#include "cli_batch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"
#include "outnames.h"
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

/* suit: --quality and --compression asked only of the formats they
 * apply to (sp_naming.suit): 0, or 1 with its line printed. */
static int suit(void *arg, const char *out)
{
    return sp_options_suit(arg, out) >= 0;
}

/* batch_outputs: the output of each of the inputs IN into OUT, their
 * folders made, and none written twice (sp_batch_outputs): 0, or the exit
 * status of a refusal (printed). */
static int batch_outputs(const struct options *o, const struct sp_names *in,
                         struct sp_names *out)
{
    struct sp_naming n = {.target = o->target, .target_dir = o->target_dir,
                          .format = o->format,
                          .relative_to = o->relative_to, .suit = suit,
                          .suit_arg = (void *)o};
    struct sp_refusal why;

    if (sp_batch_outputs(&n, in, out, &why) == 0)
        return 0;
    if (why.line != NULL)
        sp_say("%s", why.line);
    free(why.line);
    return why.usage ? EXIT_USAGE : EXIT_FAILURE;
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
        if (b.buffers == SP_BUFFER_FRESH)
            sp_buffer_fresh_pages();
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
