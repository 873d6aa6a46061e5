/* A batch's outputs named and checked before any file is scaled
 * (outnames.h).  Prints nothing: a refusal is a line for the caller. */
#include "outnames.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "write.h"

/* refuse: *WHY says the line FMT makes; USAGE or not.  Returns 1. */
static int refuse(struct sp_refusal *why, int usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(struct sp_refusal *why, int usage, const char *fmt, ...)
{
    va_list ap;

    why->usage = usage;
    va_start(ap, fmt);
    if (vasprintf(&why->line, fmt, ap) < 0)
        why->line = NULL;
    va_end(ap);
    return 1;
}

/* failed: *WHY says "PATH: what ST means[: DETAIL]", a failure. */
static int failed(struct sp_refusal *why, const char *path, sp_status st,
                  const char *detail, int usage)
{
    if (detail[0] != '\0')
        return refuse(why, usage, "%s: %s: %s", path, sp_strerror(st),
                      detail);
    return refuse(why, usage, "%s: %s", path, sp_strerror(st));
}

/* out_relative: into REL (PATH_MAX), the path of the input IN that a
 * batch mirrors below N->relative_to (or the current directory, CWD):
 * 0, or 1 with *WHY set. */
static int out_relative(const struct sp_naming *n, const char *cwd,
                        const char *in, char *rel, struct sp_refusal *why)
{
    const char *base = n->relative_to != NULL ? n->relative_to : ".";
    sp_status st = sp_names_relative(cwd, base, in, rel, PATH_MAX);

    if (st == EINVAL)
        return refuse(why, 1,
                      "'%s': not below '%s', or '..' in its path below "
                      "it: its output would leave the tree (see scaleppm "
                      "--help)", in, base);
    if (st != SP_OK)
        return failed(why, in, st, "its output's name", 0);
    return 0;
}

/* empty_name: whether NAME ends in no file name ("", "DIR/"). */
static int empty_name(const char *name)
{
    const char *slash = strrchr(name, '/');

    return (slash != NULL ? slash[1] : name[0]) == '\0';
}

/* out_names: the output of each of the inputs IN into OUT: 0, or 1 with
 * *WHY set. */
static int out_names(const struct sp_naming *n, const struct sp_names *in,
                     struct sp_names *out, struct sp_refusal *why)
{
    char name[PATH_MAX], rel[PATH_MAX], known[SP_WHY_MAX];
    int mirror = n->relative_to != NULL ||
                 (!n->target_dir && sp_pattern_has_rel(n->target));
    char *cwd = mirror ? getcwd(NULL, 0) : NULL;
    sp_status st = mirror && cwd == NULL ? errno : SP_OK;
    enum sp_outfmt fmt;
    int rc = 0;

    if (st != SP_OK)
        return failed(why, ".", st, "the current directory", 0);
    for (size_t i = 0; i < in->n && rc == 0; i++) {
        if (mirror)
            rc = out_relative(n, cwd, in->name[i], rel, why);
        if (rc == 0)
            st = sp_batch_name(n->target, n->target_dir, n->format,
                               in->name[i], mirror ? rel : NULL, name,
                               sizeof name);
        if (rc == 0 && st == SP_OK && empty_name(name))
            rc = refuse(why, 1, "'%s': its output's file name would be "
                        "empty ('%s', from -o '%s'; see scaleppm --help)",
                        in->name[i], name, n->target);
        if (rc == 0 && st == SP_OK && sp_outfmt_for(name, &fmt, NULL) != SP_OK) {
            /* not worth starting: every file of its kind would fail */
            sp_outfmt_known(known);
            rc = failed(why, name, SP_E_OUTFORMAT, known, 1);
        }
        if (rc == 0 && st == SP_OK && n->suit != NULL &&
            n->suit(n->suit_arg, name) != 0) {
            why->usage = 1;  /* the caller has said why */
            rc = 1;
        }
        if (rc == 0 && st == SP_OK)
            st = sp_names_add(out, name);
        if (rc == 0 && st != SP_OK)
            rc = failed(why, in->name[i], st, "its output's name", 0);
    }
    free(cwd);
    return rc;
}

/* out_dirs: the folders of the outputs OUT made where missing, each one
 * made added to CREATED: 0, or 1 with *WHY set. */
static int out_dirs(const struct sp_names *out, struct sp_names *created,
                    struct sp_refusal *why)
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
        if (st != SP_OK)
            return failed(why, made, st, "cannot make the output's folder",
                          0);
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
 * worker in open().  0, or 1 with *WHY set. */
static int out_held(const struct sp_names *out, struct sp_refusal *why)
{
    struct stat sb;

    for (size_t i = 0; i < out->n; i++) {
        if (sp_outfile_held(out->name[i], &sb))
            return refuse(why, 1,
                          "'%s' is a descriptor scaleppm was given "
                          "(standard output?): a batch writes each output "
                          "to a file of its own (see scaleppm --help)",
                          out->name[i]);
        if (stat(out->name[i], &sb) == 0 && !S_ISREG(sb.st_mode))
            return refuse(why, 1,
                          "'%s' is there and not a regular file: a batch "
                          "writes each output to a file of its own (see "
                          "scaleppm --help)", out->name[i]);
    }
    return 0;
}

/* out_apart: refuse outputs OUT (of the inputs IN) that are a descriptor
 * scaleppm holds or no regular file, that two inputs would both write, or
 * that are an input: 0, or 1 with *WHY set. */
static int out_apart(const struct sp_names *in, const struct sp_names *out,
                     struct sp_refusal *why)
{
    size_t i, j;
    int clash;

    if (out_held(out, why))
        return 1;
    clash = sp_names_clash(out->name, out->n, &i, &j);
    if (clash < 0)
        return failed(why, "-o", ENOMEM, "", 0);
    if (clash > 0) {
        int named = strcmp(out->name[i], out->name[j]) != 0;

        return refuse(why, 1,
                      "'%s' and '%s' would both write '%s'%s%s%s (see "
                      "scaleppm --help)", in->name[i], in->name[j],
                      out->name[i], named ? ", also named '" : "",
                      named ? out->name[j] : "", named ? "'" : "");
    }
    clash = sp_names_overwrite(in->name, out->name, in->n, &i, &j);
    if (clash > 0)
        return refuse(why, 1,
                      "'%s' would overwrite the input '%s' (see scaleppm "
                      "--help)", out->name[i], in->name[j]);
    if (clash < 0)
        return failed(why, "-o", ENOMEM, "", 0);
    return 0;
}

int sp_batch_outputs(const struct sp_naming *n, const struct sp_names *in,
                     struct sp_names *out, struct sp_refusal *why)
{
    struct sp_names created = {0};
    int rc;

    *why = (struct sp_refusal){0, NULL};
    rc = out_names(n, in, out, why);
    if (rc == 0)
        rc = out_dirs(out, &created, why);
    if (rc == 0)
        rc = out_apart(in, out, why);
    for (size_t k = created.n; rc != 0 && k > 0; k--)
        (void)rmdir(created.name[k - 1]);
    sp_names_free(&created);
    return rc;
}
