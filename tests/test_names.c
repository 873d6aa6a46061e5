/* A batch's file names: outputs named from a directory or a %s pattern,
 * lists read with either separator, and the check that two inputs would
 * write one output. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixtures.h"
#include "names.h"
#include "outnames.h"

static void check_name(const char *target, int dir, const char *format,
                       const char *in, const char *want)
{
    char out[64];

    ck_assert_int_eq(sp_batch_name(target, dir, format, in, NULL, out,
                                   sizeof out),
                     SP_OK);
    ck_assert_str_eq(out, want);
}

START_TEST(test_dir)
{
    check_name("out/", 1, NULL, "a/b/photo.ppm", "out/photo.ppm");
    check_name("out", 1, NULL, "photo.ppm", "out/photo.ppm");
    check_name("out/", 1, "png", "a/photo.x.ppm", "out/photo.x.png");
    check_name("out/", 1, "pam", "noext", "out/noext.pam");
    /* a dot that starts the name is not an extension */
    check_name("out/", 1, "png", "d/.hidden", "out/.hidden.png");
    check_name("/", 1, NULL, "-lead", "/-lead");
}
END_TEST

START_TEST(test_pattern)
{
    check_name("small/%s_4.png", 0, NULL, "in/cat.ppm", "small/cat_4.png");
    check_name("%s/%s.pgm", 0, NULL, "x.y.ppm", "x.y/x.y.pgm");
    check_name("100%%_%s.ppm", 0, NULL, "a b.ppm", "100%_a b.ppm");
    /* never standard output */
    check_name("%s", 0, NULL, "d/-.ppm", "./-");
    ck_assert(sp_pattern_ok("d/%s.png"));
    ck_assert(sp_pattern_ok("%%%s"));
    ck_assert(!sp_pattern_ok("d/x.png"));
    ck_assert(!sp_pattern_ok("%d_%s.png"));
    ck_assert(!sp_pattern_ok("%s%"));
    ck_assert(!sp_pattern_ok("%%s"));
}
END_TEST

/* rel_name: the output TARGET gives IN mirrored below BASE (from the
 * current directory "/w"). */
static void rel_name(const char *target, int dir, const char *format,
                     const char *base, const char *in, const char *want)
{
    char rel[64], out[64];

    ck_assert_int_eq(sp_names_relative("/w", base, in, rel, sizeof rel),
                     SP_OK);
    ck_assert_int_eq(sp_batch_name(target, dir, format, in, rel, out,
                                   sizeof out), SP_OK);
    ck_assert_str_eq(out, want);
}

/* A tree mirrored: %r and --relative-to, and what is refused. */
START_TEST(test_relative)
{
    char rel[64];

    rel_name("small/%r_4.png", 0, NULL, ".", "a/x.y/2560x1600.jpg",
             "small/a/x.y/2560x1600_4.png");
    rel_name("small/", 1, NULL, "photos", "photos/a/.b/c.ppm",
             "small/a/.b/c.ppm");
    rel_name("small/", 1, "png", "./photos/", "photos//a/./c.ppm",
             "small/a/c.png");
    rel_name("s/%r", 0, NULL, "/w/p", "p/DCIM/.hidden", "s/DCIM/.hidden");
    rel_name("s/%r", 0, NULL, "p", "/w/p/a.ppm", "s/a");
    ck_assert(sp_pattern_ok("d/%r.png"));
    ck_assert(sp_pattern_has_rel("d/%r.png"));
    ck_assert(!sp_pattern_has_rel("d/%%r%s.png"));
    /* outside BASE, BASE itself, or .. below it */
    ck_assert_int_eq(sp_names_relative("/w", "p", "q/a.ppm", rel, sizeof rel),
                     EINVAL);
    ck_assert_int_eq(sp_names_relative("/w", "p", "pq/a.ppm", rel,
                                       sizeof rel), EINVAL);
    ck_assert_int_eq(sp_names_relative("/w", "p", "p/", rel, sizeof rel),
                     EINVAL);
    ck_assert_int_eq(sp_names_relative("/w", "p", "p/a/../../x.ppm", rel,
                                       sizeof rel), EINVAL);
    ck_assert_int_eq(sp_names_relative("/w", ".", "../x.ppm", rel,
                                       sizeof rel), EINVAL);
    ck_assert_int_eq(sp_names_relative("/w", ".", "/etc/x.ppm", rel,
                                       sizeof rel), EINVAL);
    ck_assert_int_eq(sp_names_relative("/w", ".", "a/b.ppm", rel, 4),
                     ENAMETOOLONG);
}
END_TEST

/* An output's folder made as mkdir -p makes it; a file in the way is
 * named. */
START_TEST(test_make_dir)
{
    char made[256], path[256];
    struct stat sb;

    snprintf(path, sizeof path, "%s", fx_path("a/b//c/x.ppm"));
    ck_assert_int_eq(sp_names_make_dir(path, made, sizeof made, NULL), SP_OK);
    ck_assert_int_eq(stat(fx_path("a/b/c"), &sb), 0);
    ck_assert(S_ISDIR(sb.st_mode));
    ck_assert_int_eq(sp_names_make_dir(path, made, sizeof made, NULL), SP_OK);
    ck_assert_int_eq(sp_names_make_dir("x.ppm", made, sizeof made, NULL), SP_OK);
    fx_write_text(fx_path("f"), "");
    snprintf(path, sizeof path, "%s", fx_path("f/d/x.ppm"));
    ck_assert_int_eq(sp_names_make_dir(path, made, sizeof made, NULL), ENOTDIR);
    ck_assert_str_eq(made, fx_path("f"));
}
END_TEST

START_TEST(test_too_long)
{
    char out[8];

    ck_assert_int_eq(sp_batch_name("o/", 1, NULL, "abcdef", NULL, out,
                                   sizeof out),
                     ENAMETOOLONG);
    ck_assert_int_eq(sp_batch_name("%s", 0, NULL, "abcdefg", NULL, out,
                                   sizeof out), SP_OK);
    ck_assert_int_eq(sp_batch_name("%s!", 0, NULL, "abcdefg", NULL, out,
                                   sizeof out), ENAMETOOLONG);
}
END_TEST

/* read: the names in the LEN bytes of TEXT, separated by SEP. */
static struct sp_names read_list(const char *text, size_t len, int sep)
{
    struct sp_names l = {0};
    FILE *f = fmemopen((void *)text, len, "r");

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sp_names_read(f, sep, &l), SP_OK);
    fclose(f);
    return l;
}

START_TEST(test_read)
{
    static const char lines[] = "a.ppm\n -b c.ppm\n\nlast";
    static const char nuls[] = "new\nline.ppm\0\0-x\0";
    struct sp_names l = read_list(lines, sizeof lines - 1, '\n');

    ck_assert_uint_eq(l.n, 3);
    ck_assert_str_eq(l.name[0], "a.ppm");
    ck_assert_str_eq(l.name[1], " -b c.ppm");
    ck_assert_str_eq(l.name[2], "last");
    sp_names_free(&l);
    l = read_list(nuls, sizeof nuls - 1, '\0');
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.name[0], "new\nline.ppm");
    ck_assert_str_eq(l.name[1], "-x");
    sp_names_free(&l);
    ck_assert_ptr_null(l.name);
}
END_TEST

START_TEST(test_clash)
{
    char *names[] = {"o/a", "o/b", "o/c", "o/b", "o/a", "o/c"};
    size_t i = 99, j = 99;

    ck_assert_int_eq(sp_names_clash(names, 3, &i, &j), 0);
    ck_assert_int_eq(sp_names_clash(names, 0, &i, &j), 0);
    ck_assert_int_eq(sp_names_clash(names, 6, &i, &j), 1);
    /* the pair whose second comes first in the list */
    ck_assert_uint_eq(i, 1);
    ck_assert_uint_eq(j, 3);
}
END_TEST

/* Outputs are compared by the file they lead to: a link to another
 * output (existing or not yet written), a linked directory, a hard link. */
START_TEST(test_clash_by_file)
{
    char a[256], b[256], c[256], viadir[256], hard[256];
    char *names[2];
    size_t i = 99, j = 99;

    ck_assert_int_eq(mkdir(fx_path("out"), 0755), 0);
    snprintf(a, sizeof a, "%s", fx_path("out/a.ppm"));
    snprintf(b, sizeof b, "%s", fx_path("out/b.ppm"));
    snprintf(c, sizeof c, "%s", fx_path("out/c.ppm"));
    snprintf(viadir, sizeof viadir, "%s", fx_path("linked/a.ppm"));
    snprintf(hard, sizeof hard, "%s", fx_path("out/hard.ppm"));
    names[0] = a;
    names[1] = b;
    ck_assert_int_eq(sp_names_clash(names, 2, &i, &j), 0);
    /* b.ppm -> a.ppm, a.ppm not there yet: a's output would be lost */
    ck_assert_int_eq(symlink("a.ppm", b), 0);
    ck_assert_int_eq(sp_names_clash(names, 2, &i, &j), 1);
    ck_assert_uint_eq(i, 0);
    ck_assert_uint_eq(j, 1);
    fx_write_text(a, "a");
    ck_assert_int_eq(sp_names_clash(names, 2, &i, &j), 1);
    /* linked/ -> out/: a new name in one directory under two names */
    ck_assert_int_eq(symlink("out", fx_path("linked")), 0);
    names[0] = c;
    names[1] = viadir;
    ck_assert_int_eq(sp_names_clash(names, 2, &i, &j), 0);
    snprintf(c, sizeof c, "%s", fx_path("out/a.ppm"));
    ck_assert_int_eq(unlink(c), 0);
    ck_assert_int_eq(sp_names_clash(names, 2, &i, &j), 1);
    /* two hard links of one file */
    fx_write_text(c, "a");
    ck_assert_int_eq(link(c, hard), 0);
    names[1] = hard;
    ck_assert_int_eq(sp_names_clash(names, 2, &i, &j), 1);
}
END_TEST

START_TEST(test_overwrite)
{
    char a[256], b[256], hard[256], out[256];
    char *in[2], *outs[2];
    size_t i = 99, j = 99;

    snprintf(a, sizeof a, "%s", fx_path("a.ppm"));
    snprintf(b, sizeof b, "%s", fx_path("b.ppm"));
    snprintf(hard, sizeof hard, "%s", fx_path("hard.ppm"));
    snprintf(out, sizeof out, "%s", fx_path("new.ppm"));
    fx_write_text(a, "a");
    fx_write_text(b, "b");
    in[0] = a;
    in[1] = b;
    outs[0] = out;  /* does not exist */
    outs[1] = hard;
    ck_assert_int_eq(sp_names_overwrite(in, outs, 2, &i, &j), 0);
    /* an output that is the other input under another name */
    ck_assert_int_eq(link(a, hard), 0);
    ck_assert_int_eq(sp_names_overwrite(in, outs, 2, &i, &j), 1);
    ck_assert_uint_eq(i, 1);
    ck_assert_uint_eq(j, 0);
}
END_TEST

/* refuse_suit: a caller's check that refuses every .png output. */
static int refuse_suit(void *arg, const char *out)
{
    ++*(int *)arg;
    return strstr(out, ".png") != NULL;
}

/* A batch's outputs named, their folders made, or refused with a line
 * to say and the folders made removed; the library prints nothing. */
START_TEST(test_batch_outputs)
{
    char target[4096];
    struct sp_names in = {0}, out = {0};
    struct sp_refusal why;
    int asked = 0;
    struct sp_naming n = {.target = target, .target_dir = 1,
                          .suit = refuse_suit, .suit_arg = &asked};

    snprintf(target, sizeof target, "%s/new/deep", fx_dir);
    ck_assert_int_eq(sp_names_add(&in, fx_path("a.ppm")), SP_OK);
    ck_assert_int_eq(sp_names_add(&in, fx_path("b.ppm")), SP_OK);
    ck_assert_int_eq(sp_batch_outputs(&n, &in, &out, &why), 0);
    ck_assert_uint_eq(out.n, 2);
    ck_assert_int_eq(asked, 2);
    ck_assert_ptr_null(why.line);
    ck_assert(fx_file_exists(target));
    ck_assert_str_eq(strrchr(out.name[1], '/'), "/b.ppm");
    sp_names_free(&out);
    fx_rmtree(fx_path("new"));

    /* two inputs of one base name into one folder: refused, usage */
    ck_assert_int_eq(sp_names_add(&in, fx_path("sub/a.ppm")), SP_OK);
    ck_assert_int_ne(sp_batch_outputs(&n, &in, &out, &why), 0);
    ck_assert(why.usage);
    ck_assert_ptr_nonnull(why.line);
    ck_assert_ptr_nonnull(strstr(why.line, "would both write"));
    ck_assert(!fx_file_exists(fx_path("new")));  /* the folders it made */
    free(why.line);
    sp_names_free(&out);

    /* the caller's check refused: it said why */
    n.format = "png";
    ck_assert_int_ne(sp_batch_outputs(&n, &in, &out, &why), 0);
    ck_assert(why.usage);
    ck_assert_ptr_null(why.line);
    sp_names_free(&out);
    sp_names_free(&in);
}
END_TEST

static Suite *names_suite(void)
{
    Suite *s = suite_create("names");
    TCase *tc = fx_tcase("names");

    tcase_add_test(tc, test_dir);
    tcase_add_test(tc, test_pattern);
    tcase_add_test(tc, test_relative);
    tcase_add_test(tc, test_make_dir);
    tcase_add_test(tc, test_too_long);
    tcase_add_test(tc, test_read);
    tcase_add_test(tc, test_clash);
    tcase_add_test(tc, test_clash_by_file);
    tcase_add_test(tc, test_overwrite);
    tcase_add_test(tc, test_batch_outputs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(names_suite());
}
