/* The server's path: the one decoder of a request's escapes, and the
 * confinement beneath the root (src/serve/path.c), against traversal
 * attempts in every spelling, with openat2() and with the walk that
 * stands in where the kernel has none. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixtures.h"
#include "path.h"

/* One attempt: the path as sent; what the decoder says (0 or EINVAL);
 * if it decodes, what opening it beneath the root says with openat2()
 * (BENEATH) and with the walk (WALK). */
struct attempt {
    const char *raw;
    int dec, beneath, walk;
};

#define BAD(raw) {raw, EINVAL, 0, 0}

static const struct attempt attempts[] = {
    /* ".." and "." in every spelling the decoder sees */
    BAD("/../outside.ppm"),
    BAD("/.."),
    BAD("/."),
    BAD("/sub/../a.ppm"),
    BAD("/sub/./b.ppm"),
    BAD("/sub/.."),
    BAD("/%2e%2e/outside.ppm"),
    BAD("/%2E%2E/outside.ppm"),
    BAD("/.%2e/outside.ppm"),
    BAD("/%2e./outside.ppm"),
    BAD("/%2e"),
    /* encoded slashes and backslashes, plain backslashes */
    BAD("/sub%2f..%2f..%2foutside.ppm"),
    BAD("/sub%2F..%2Fa.ppm"),
    BAD("/%2Fetc%2Fpasswd"),
    BAD("/..%5coutside.ppm"),
    BAD("/..%5Coutside.ppm"),
    BAD("/..\\outside.ppm"),
    BAD("/sub\\b.ppm"),
    /* NUL: the path would end there for a decoder that writes one */
    BAD("/a.ppm%00.png"),
    BAD("/%00"),
    /* overlong UTF-8 spellings of '.' and '/' */
    BAD("/%c0%ae%c0%ae/outside.ppm"),
    BAD("/%C0%AE%C0%AE/outside.ppm"),
    BAD("/sub%c0%af..%c0%af..%c0%afoutside.ppm"),
    BAD("/%e0%80%ae%e0%80%ae/outside.ppm"),
    BAD("/%f0%80%80%ae%f0%80%80%ae/outside.ppm"),
    BAD("/%c1%9c"),
    BAD("/a.ppm%c0"),
    /* empty segments, the root itself, no leading '/' */
    BAD("//etc/passwd"),
    BAD("/sub//b.ppm"),
    BAD("/sub/"),
    BAD("/"),
    BAD(""),
    BAD("a.ppm"),
    BAD("../outside.ppm"),
    /* bad escapes, and escapes of what needs none */
    BAD("/%"),
    BAD("/a%2"),
    BAD("/%zz"),
    BAD("/%%32%65%%32%65/outside.ppm"),
    BAD("/%61.ppm"),
    BAD("/a%2Eppm"),
    /* control characters */
    BAD("/a%01b"),
    BAD("/a%7f"),
    BAD("/a%0a.ppm"),
    /* double encoding is decoded once: "%2e%2e" is a name like any */
    {"/%252e%252e", 0, 0, 0},
    {"/%252e%252e/outside.ppm", 0, ENOTDIR, ENOTDIR},
    {"/%25%32%65%25%32%65/outside.ppm", EINVAL, 0, 0},
    /* an absolute path is beneath the root */
    {"/etc/passwd", 0, ENOENT, ENOENT},
    /* symbolic links leading out, and the /proc magic links */
    {"/out_abs", 0, EXDEV, ELOOP},
    {"/out_rel", 0, EXDEV, ELOOP},
    {"/sub/up", 0, EXDEV, ELOOP},
    {"/updir/outside.ppm", 0, EXDEV, ELOOP},
    {"/proc/self/environ", 0, EXDEV, ELOOP},
    {"/abs_in", 0, EXDEV, ELOOP},
    /* links that stay inside: the kernel follows them, the walk not */
    {"/in", 0, 0, ELOOP},
    {"/sub/in_up", 0, 0, ELOOP},
    {"/subdir_link/b.ppm", 0, 0, ELOOP},
    /* what is not a regular file, and what is not there */
    {"/dir", 0, EISDIR, EISDIR},
    {"/fifo", 0, EINVAL, EINVAL},
    {"/missing.ppm", 0, ENOENT, ENOENT},
    {"/a.ppm/x", 0, ENOTDIR, ENOTDIR},
    /* what is served */
    {"/a.ppm", 0, 0, 0},
    {"/sub/deeper/c.ppm", 0, 0, 0},
    {"/with%20space.ppm", 0, 0, 0},
    {"/caf%C3%A9.ppm", 0, 0, 0},
};

static int root_fd;

static void link_at(const char *target, const char *name)
{
    if (symlink(target, fx_path(name)) != 0)
        ck_abort_msg("symlink %s: %s", name, strerror(errno));
}

/* make_tree: a root under fx_dir with files, directories, a FIFO and
 * links in and out, and outside.ppm beside it; root_fd opened on it. */
static void make_tree(void)
{
    char target[PATH_MAX];

    fx_write_text(fx_path("outside.ppm"), "secret");
    ck_assert_int_eq(mkdir(fx_path("root"), 0700), 0);
    ck_assert_int_eq(mkdir(fx_path("root/sub"), 0700), 0);
    ck_assert_int_eq(mkdir(fx_path("root/sub/deeper"), 0700), 0);
    ck_assert_int_eq(mkdir(fx_path("root/dir"), 0700), 0);
    ck_assert_int_eq(mkfifo(fx_path("root/fifo"), 0600), 0);
    fx_write_text(fx_path("root/a.ppm"), "a");
    fx_write_text(fx_path("root/sub/b.ppm"), "b");
    fx_write_text(fx_path("root/sub/deeper/c.ppm"), "c");
    fx_write_text(fx_path("root/%2e%2e"), "literal");
    fx_write_text(fx_path("root/with space.ppm"), "space");
    fx_write_text(fx_path("root/caf\xC3\xA9.ppm"), "utf8");
    link_at(fx_path("outside.ppm"), "root/out_abs");
    link_at("../outside.ppm", "root/out_rel");
    link_at("../../outside.ppm", "root/sub/up");
    link_at("..", "root/updir");
    link_at("/proc", "root/proc");
    snprintf(target, sizeof target, "%s", fx_path("root/a.ppm"));
    link_at(target, "root/abs_in");
    link_at("a.ppm", "root/in");
    link_at("../a.ppm", "root/sub/in_up");
    link_at("sub", "root/subdir_link");
    root_fd = open(fx_path("root"), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(root_fd, 0);
}

/* try_all: every attempt, opened by OPEN; WALK picks the column. */
static void try_all(sp_status (*open_fn)(int, const char *, int *,
                                         struct stat *),
                    int walk)
{
    int fds = fx_count_fds(), served = 0;

    make_tree();
    fds = fx_count_fds();
    for (size_t i = 0; i < sizeof attempts / sizeof *attempts; i++) {
        const struct attempt *a = &attempts[i];
        char rel[PATH_MAX];
        const char *why = NULL;
        struct stat sb;
        int fd = -1, want = walk ? a->walk : a->beneath;
        sp_status st = sp_serve_path_decode(a->raw, rel, sizeof rel, &why);

        expect(st == a->dec, "'%s': decode gave %d (%s), not %d", a->raw,
               st, why ? why : "-", a->dec);
        expect(st == SP_OK || why != NULL, "'%s': refused, no reason",
               a->raw);
        if (st != SP_OK)
            continue;
        st = open_fn(root_fd, rel, &fd, &sb);
        expect(st == want, "'%s' (%s): open gave %d (%s), not %d", a->raw,
               rel, st, strerror(st), want);
        if (st == SP_OK) {
            expect(S_ISREG(sb.st_mode), "'%s': not regular", a->raw);
            close(fd);
            served++;
        }
    }
    ck_assert_int_gt(served, 3);
    /* nothing left open by a refusal */
    ck_assert_int_eq(fx_count_fds(), fds);
    close(root_fd);
}

START_TEST(test_beneath)
{
    try_all(sp_serve_open, 0);
}
END_TEST

START_TEST(test_walk)
{
    try_all(sp_serve_open_walk, 1);
}
END_TEST

/* The decoded text itself: escapes decoded once, the '/' dropped. */
START_TEST(test_decoded)
{
    char out[64];
    const char *why;

    ck_assert_int_eq(sp_serve_path_decode("/a%20b/c%25d", out, sizeof out,
                                          &why), 0);
    ck_assert_str_eq(out, "a b/c%d");
    ck_assert_int_eq(sp_serve_path_decode("/%252e", out, sizeof out, &why),
                     0);
    ck_assert_str_eq(out, "%2e");
    ck_assert_int_eq(sp_serve_path_decode("/..%2e", out, sizeof out, &why),
                     EINVAL);
    ck_assert_str_eq(why, "an escape of a character that needs none");
}
END_TEST

/* A path longer than the buffer is ENAMETOOLONG, not cut. */
START_TEST(test_too_long)
{
    char out[8];
    const char *why;

    ck_assert_int_eq(sp_serve_path_decode("/abcdefgh", out, sizeof out, &why),
                     ENAMETOOLONG);
    ck_assert_int_eq(sp_serve_path_decode("/abcdefg", out, sizeof out, &why),
                     0);
    ck_assert_str_eq(out, "abcdefg");
    ck_assert_int_eq(sp_serve_path_decode("/%20%20%20%20%20%20%20%20", out,
                                          sizeof out, &why), ENAMETOOLONG);
}
END_TEST

/* A file swapped for a link out after the decode is still refused: the
 * kernel resolves at open, not the decoder. */
START_TEST(test_swapped)
{
    char rel[64];
    const char *why;
    struct stat sb;
    int fd;

    make_tree();
    ck_assert_int_eq(sp_serve_path_decode("/a.ppm", rel, sizeof rel, &why),
                     0);
    ck_assert_int_eq(unlink(fx_path("root/a.ppm")), 0);
    link_at("../outside.ppm", "root/a.ppm");
    ck_assert_int_eq(sp_serve_open(root_fd, rel, &fd, &sb), EXDEV);
    ck_assert_int_eq(sp_serve_open_walk(root_fd, rel, &fd, &sb), ELOOP);
    close(root_fd);
}
END_TEST

static Suite *serve_path_suite(void)
{
    Suite *s = suite_create("serve_path");
    TCase *tc = fx_tcase("serve_path");

    tcase_add_test(tc, test_beneath);
    tcase_add_test(tc, test_walk);
    tcase_add_test(tc, test_decoded);
    tcase_add_test(tc, test_too_long);
    tcase_add_test(tc, test_swapped);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(serve_path_suite());
}
