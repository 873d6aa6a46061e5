/* test_write_files.c: the files written: errors with nothing left behind,
 * atomic replacement that keeps the mode, symbolic links, FIFOs,
 * directories, relative and long names. */
#include "write_lib.h"

START_TEST(test_dev_full)
{
    static const enum sp_outfmt fmts[] = {SP_OUT_PNM, SP_OUT_PNG,
                                          SP_OUT_JPEG, SP_OUT_BMP,
                                          SP_OUT_TGA};
    static const size_t sizes[] = {2, 200};
    struct stat sb;
    char why[SP_WHY_MAX];

    if (stat("/dev/full", &sb) != 0 || !S_ISCHR(sb.st_mode))
        return;  /* no /dev/full here */
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        struct sp_image img;

        fx_make_image(&img, sizes[s], sizes[s], 3, 1, 255, 1);
        for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
            sp_status st = sp_write(&img, "/dev/full", fmts[f], why);
            ck_assert_msg(st == ENOSPC, "%zu px format %d: %d %s", sizes[s],
                          fmts[f], st, sp_strerror(st));
        }
        sp_image_release(&img);
    }
    ck_assert_int_eq(stat("/dev/full", &sb), 0);
    ck_assert(S_ISCHR(sb.st_mode));
}
END_TEST

START_TEST(test_missing_dir)
{
    struct sp_image img;
    char why[SP_WHY_MAX];

    fx_make_image(&img, 4, 4, 1, 1, 255, 0);
    ck_assert_int_eq(sp_write(&img, fx_path("nodir/out.ppm"), SP_OUT_PNM,
                              why), ENOENT);
    ck_assert_int_eq(sp_write(&img, fx_path("nodir/out.png"), SP_OUT_PNG,
                              why), ENOENT);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 0);
    /* A file where a directory should be. */
    fx_write_text(fx_path("file"), "x");
    ck_assert_int_eq(sp_write(&img, fx_path("file/out.ppm"), SP_OUT_PNM,
                              why), ENOTDIR);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
    sp_image_release(&img);
}
END_TEST

START_TEST(test_readonly_dir)
{
    struct sp_image img;
    char why[SP_WHY_MAX];
    const char *dir = fx_path("ro");
    char out[PATH_MAX];
    sp_status st;

    snprintf(out, sizeof out, "%s/out.ppm", dir);
    fx_make_image(&img, 4, 4, 3, 1, 255, 0);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    ck_assert_int_eq(chmod(dir, 0555), 0);
    st = sp_write(&img, out, SP_OUT_PNM, why);
    if (geteuid() != 0) {
        /* Root is not stopped by permissions: skip this part there. */
        ck_assert_int_eq(st, EACCES);
        ck_assert_int_eq(fx_count_entries(dir, NULL), 0);
    }
    assert_no_temp(dir);
    ck_assert_int_eq(chmod(dir, 0755), 0);
    sp_image_release(&img);
}
END_TEST

/* A write that fails part way (the file size limit): an errno, no
 * temporary file, and the existing target untouched. */
START_TEST(test_failure_keeps_target)
{
    static const enum sp_outfmt fmts[] = {SP_OUT_PNM, SP_OUT_PNG, SP_OUT_BMP};
    const char *path = fx_path("out.ppm");
    struct sp_image img;
    struct rlimit rl;
    struct stat before, after;
    char why[SP_WHY_MAX];
    unsigned char *got;
    size_t len;

    fx_make_image(&img, 120, 120, 3, 1, 255, 3);
    fx_write_text(path, "old contents");
    ck_assert_int_eq(stat(path, &before), 0);
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
    rl.rlim_cur = 4096;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
        sp_status st = sp_write(&img, path, fmts[f], why);

        ck_assert_msg(st == EFBIG, "format %d: %d %s", fmts[f], st,
                      sp_strerror(st));
        assert_no_temp(fx_dir);
        ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
        got = fx_read_file(path, &len);
        ck_assert_str_eq((char *)got, "old contents");
        free(got);
        ck_assert_int_eq(stat(path, &after), 0);
        ck_assert_uint_eq(after.st_ino, before.st_ino);
    }
    sp_image_release(&img);
}
END_TEST

/* An existing file is replaced by a rename and keeps its permission
 * bits, less setuid, setgid and sticky; a read-only one is replaced only
 * by a caller who may write it anyway (root), as cp would. */
START_TEST(test_replace_keeps_mode)
{
    static const mode_t modes[] = {0640, 0604, 0600, 0755,
                                   0444, 04755, 02775, 01644};
    const char *path = fx_path("out.ppm");
    struct sp_image img;
    struct stat before, after;
    unsigned char *got, *want;
    size_t len, want_len;
    char why[SP_WHY_MAX];

    fx_make_image(&img, 9, 7, 3, 1, 255, 2);
    want = fx_pnm_bytes(&img, &want_len);
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        (void)unlink(path);
        fx_write_text(path, "old");
        ck_assert_int_eq(chmod(path, modes[m]), 0);
        ck_assert_int_eq(stat(path, &before), 0);
        if (!(modes[m] & 0200) && geteuid() != 0) {
            ck_assert_int_eq(sp_write(&img, path, SP_OUT_PNM, why), EACCES);
            got = fx_read_file(path, &len);
            ck_assert_str_eq((char *)got, "old");
            free(got);
            continue;
        }
        write_ok(&img, path);
        ck_assert_int_eq(stat(path, &after), 0);
        ck_assert_uint_ne(after.st_ino, before.st_ino);
        ck_assert_msg((after.st_mode & 07777) == (modes[m] & 0777),
                      "mode %o, want %o", after.st_mode & 07777,
                      modes[m] & 0777);
        got = fx_read_file(path, &len);
        ck_assert_uint_eq(len, want_len);
        ck_assert_mem_eq(got, want, len);
        free(got);
        assert_no_temp(fx_dir);
    }
    free(want);
    sp_image_release(&img);
}
END_TEST

/* A new file gets 0666 less the umask, and the umask is left alone. */
START_TEST(test_new_file_mode)
{
    static const mode_t masks[] = {022, 027, 077, 0};
    struct sp_image img;
    struct stat sb;
    char name[32];

    fx_make_image(&img, 2, 2, 1, 1, 255, 2);
    for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++) {
        snprintf(name, sizeof name, "new%zu.png", m);
        umask(masks[m]);
        write_ok(&img, fx_path(name));
        ck_assert_uint_eq(umask(masks[m]), masks[m]);
        ck_assert_int_eq(stat(fx_path(name), &sb), 0);
        ck_assert_uint_eq(sb.st_mode & 07777, 0666 & ~masks[m]);
    }
    sp_image_release(&img);
}
END_TEST

/* Writing through a symbolic link replaces the file it points to; the
 * link stays a link, pointing where it did. */
START_TEST(test_symlink)
{
    struct sp_image img;
    struct stat sb;
    unsigned char *got, *want;
    size_t len, want_len;
    char target[PATH_MAX];
    ssize_t n;

    fx_make_image(&img, 5, 3, 1, 2, 65535, 4);
    want = fx_pnm_bytes(&img, &want_len);
    ck_assert_int_eq(mkdir(fx_path("sub"), 0755), 0);
    fx_write_text(fx_path("real.pgm"), "old");
    ck_assert_int_eq(chmod(fx_path("real.pgm"), 0640), 0);
    ck_assert_int_eq(symlink("real.pgm", fx_path("link.pgm")), 0);
    ck_assert_int_eq(symlink("../real.pgm", fx_path("sub/up.pgm")), 0);

    for (int which = 0; which < 2; which++) {
        const char *link = which ? fx_path("sub/up.pgm")
                                 : fx_path("link.pgm");

        write_ok(&img, link);
        ck_assert_int_eq(lstat(link, &sb), 0);
        ck_assert(S_ISLNK(sb.st_mode));
        n = readlink(link, target, sizeof target - 1);
        ck_assert_int_gt(n, 0);
        target[n] = '\0';
        ck_assert_str_eq(target, which ? "../real.pgm" : "real.pgm");
        ck_assert_int_eq(lstat(fx_path("real.pgm"), &sb), 0);
        ck_assert(S_ISREG(sb.st_mode));
        ck_assert_uint_eq(sb.st_mode & 07777, 0640);
        got = fx_read_file(fx_path("real.pgm"), &len);
        ck_assert_uint_eq(len, want_len);
        ck_assert_mem_eq(got, want, len);
        free(got);
        assert_no_temp(fx_dir);
        assert_no_temp(fx_path("sub"));
        ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 3);
        ck_assert_int_eq(fx_count_entries(fx_path("sub"), NULL), 1);
        fx_write_text(fx_path("real.pgm"), "old");
    }
    free(want);
    sp_image_release(&img);
}
END_TEST

/* A link to a file that does not exist yet is refused, as cp refuses
 * it: the link stays, and nothing is created where it points. */
START_TEST(test_dangling_symlink)
{
    struct sp_image img;
    struct stat sb;
    char why[SP_WHY_MAX], target[PATH_MAX];
    sp_status st;
    ssize_t n;

    fx_make_image(&img, 5, 3, 3, 1, 255, 4);
    ck_assert_int_eq(symlink("later.ppm", fx_path("link.ppm")), 0);
    st = sp_write(&img, fx_path("link.ppm"), SP_OUT_PNM, why);
    ck_assert_int_eq(st, SP_E_REFUSED);
    ck_assert_msg(strstr(why, "dangling symbolic link") != NULL, "why: %s",
                  why);
    ck_assert_int_eq(lstat(fx_path("link.ppm"), &sb), 0);
    ck_assert(S_ISLNK(sb.st_mode));
    n = readlink(fx_path("link.ppm"), target, sizeof target - 1);
    ck_assert_int_gt(n, 0);
    target[n] = '\0';
    ck_assert_str_eq(target, "later.ppm");
    ck_assert(!fx_file_exists(fx_path("later.ppm")));
    assert_no_temp(fx_dir);
    sp_image_release(&img);
}
END_TEST

START_TEST(test_directory_target)
{
    struct sp_image img;
    char why[SP_WHY_MAX];

    fx_make_image(&img, 2, 2, 3, 1, 255, 4);
    ck_assert_int_eq(sp_write(&img, fx_dir, SP_OUT_PNM, why), EISDIR);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 0);
    sp_image_release(&img);
}
END_TEST

/* A FIFO is written in place: it stays a FIFO and its reader gets the
 * exact bytes. */
START_TEST(test_fifo_target)
{
    const char *fifo = fx_path("fifo"), *copy = fx_path("copy");
    struct sp_image img;
    struct stat sb;
    unsigned char *got, *want;
    size_t len, want_len;
    int status;
    pid_t pid;

    fx_make_image(&img, 150, 100, 3, 1, 255, 5);
    want = fx_pnm_bytes(&img, &want_len);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* The reader: copy the FIFO to a file. */
        char buf[4096];
        int in = open(fifo, O_RDONLY), out;
        ssize_t n;

        out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0)
            _exit(1);
        while ((n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n)
                _exit(1);
        _exit(n < 0 || close(out) != 0);
    }
    write_ok(&img, fifo);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(lstat(fifo, &sb), 0);
    ck_assert(S_ISFIFO(sb.st_mode));
    got = fx_read_file(copy, &len);
    ck_assert_uint_eq(len, want_len);
    ck_assert_mem_eq(got, want, len);
    assert_no_temp(fx_dir);
    free(got);
    free(want);
    sp_image_release(&img);
}
END_TEST

/* "-" is standard output, always PNM. */
START_TEST(test_relative_path)
{
    struct sp_image img;
    unsigned char *got;
    size_t len;

    fx_make_image(&img, 3, 3, 3, 1, 255, 7);
    ck_assert_int_eq(chdir(fx_dir), 0);
    write_ok(&img, "rel.ppm");
    write_ok(&img, "rel.ppm");
    write_ok(&img, "./rel2.bmp");
    got = fx_read_file(fx_path("rel.ppm"), &len);
    ck_assert_uint_eq(len, 11 + 27);
    free(got);
    assert_no_temp(fx_dir);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 2);
    ck_assert_int_eq(chdir("/"), 0);
    sp_image_release(&img);
}
END_TEST

/* A name as long as the file system allows can be written: the temporary
 * name beside it must not be longer than NAME_MAX. */
START_TEST(test_long_name)
{
    struct sp_image img;
    char name[NAME_MAX + 1];
    char why[SP_WHY_MAX];
    sp_status st;

    memset(name, 'a', NAME_MAX - 4);
    memcpy(name + NAME_MAX - 4, ".ppm", 5);
    ck_assert_uint_eq(strlen(name), NAME_MAX);
    fx_write_text(fx_path(name), "probe");  /* the name itself is fine */
    ck_assert_int_eq(unlink(fx_path(name)), 0);
    fx_make_image(&img, 3, 3, 3, 1, 255, 7);
    st = sp_write(&img, fx_path(name), SP_OUT_PNM, why);
    ck_assert_msg(st == SP_OK, "a %d-byte file name: %s", NAME_MAX,
                  sp_strerror(st));
    ck_assert(fx_file_exists(fx_path(name)));
    assert_no_temp(fx_dir);
    sp_image_release(&img);
}
END_TEST

static Suite *write_files_suite(void)
{
    Suite *s = suite_create("write_files");
    TCase *tc = fx_tcase("files");
    tcase_add_test(tc, test_dev_full);
    tcase_add_test(tc, test_missing_dir);
    tcase_add_test(tc, test_readonly_dir);
    tcase_add_test(tc, test_failure_keeps_target);
    tcase_add_test(tc, test_replace_keeps_mode);
    tcase_add_test(tc, test_new_file_mode);
    tcase_add_test(tc, test_symlink);
    tcase_add_test(tc, test_dangling_symlink);
    tcase_add_test(tc, test_directory_target);
    tcase_add_test(tc, test_fifo_target);
    tcase_add_test(tc, test_relative_path);
    tcase_add_test(tc, test_long_name);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(write_files_suite());
}
