/* test_load_changed.c: a file changed in place while it is read, by each
 * path; the header read once. */
#include "load_lib.h"

/* ---- a file changed in place while it is read ---- */

static const char *rewrite_path;
static const unsigned char *rewrite_data;
static size_t rewrite_len;
static unsigned rewrite_at, rewrite_calls;

/* rewrite_now: at the REWRITE_AT'th call, write REWRITE_DATA over the file
 * in place, as dd conv=notrunc would. */
static void rewrite_now(void)
{
    if (++rewrite_calls == rewrite_at) {
        int fd = open(rewrite_path, O_WRONLY);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(pwrite(fd, rewrite_data, rewrite_len, 0),
                         (ssize_t)rewrite_len);
        close(fd);
    }
}

static ssize_t rewriting_read(int fd, void *buf, size_t len)
{
    rewrite_now();
    return read(fd, buf, len);
}

static ssize_t rewriting_pread(int fd, void *buf, size_t len, off_t off)
{
    rewrite_now();
    return pread(fd, buf, len, off);
}

/* The read path copies the raster at load, so the load itself compares
 * the file's stamp once the bytes are in: a file rewritten in place with
 * another image of its size at the raster's read() (binary), or at the
 * first or second pread() (the header, then the rest of a plain raster's
 * text, a chunk of up to 64 KiB: header.h), by path and as standard
 * input, is SP_E_CHANGED.  Its mtime
 * is set a day back first, so that the write changes it whatever the
 * file system's timestamp granularity. */
START_TEST(test_changed_while_read)
{
    const char *path = fx_path("in.pnm");
    struct sp_image a, b, img;
    struct sp_load_info info;
    int fds = fx_count_fds();

    for (int plain = 0; plain <= 1; plain++) {
        unsigned char *a_file, *b_file;
        size_t len;

        /* maxval 9: one digit a sample, so both plain files have one
         * size */
        fx_make_image(&a, 97, 61, 3, 1, plain ? 9 : 255, 1);
        fx_make_image(&b, 97, 61, 3, 1, plain ? 9 : 255, 2);
        if (plain) {
            write_plain(path, &b);
            b_file = fx_read_file(path, &len);
            write_plain(path, &a);
            a_file = fx_read_file(path, &rewrite_len);
            ck_assert_uint_eq(len, rewrite_len);
        } else {
            a_file = fx_pnm_bytes(&a, &len);
            b_file = fx_pnm_bytes(&b, &rewrite_len);
        }
        rewrite_path = path;
        rewrite_data = b_file;
        for (int at = 1; at <= (plain ? 2 : 1); at++) {
            for (int as_stdin = 0; as_stdin <= 1; as_stdin++) {
                struct timespec t[2] = {{time(NULL) - 86400, 0},
                                        {time(NULL) - 86400, 0}};
                int saved = dup(STDIN_FILENO);  /* -1: none */
                sp_status st;

                fx_write_file(path, a_file, len);
                ck_assert_int_eq(utimensat(AT_FDCWD, path, t, 0), 0);
                if (as_stdin) {
                    int fd = open(path, O_RDONLY);

                    ck_assert_int_ge(fd, 0);
                    ck_assert_int_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
                    close(fd);
                }
                rewrite_at = (unsigned)at;
                rewrite_calls = 0;
                if (plain)
                    sp_sys.pread = rewriting_pread;
                else
                    sp_sys.read = rewriting_read;
                st = sp_load(as_stdin ? "-" : path, SP_IO_READ, &img, &info);
                sp_sys_reset();
                if (saved >= 0) {
                    dup2(saved, STDIN_FILENO);
                    close(saved);
                } else {
                    close(STDIN_FILENO);
                }
                ck_assert_msg(st == SP_E_CHANGED, "plain %d, call %d%s: %s",
                              plain, at, as_stdin ? ", stdin" : "",
                              sp_strerror(st));
                ck_assert_ptr_null(img.base);
                ck_assert_int_eq(fx_count_fds(), fds);
            }
        }
        free(a_file);
        free(b_file);
        sp_image_release(&a);
        sp_image_release(&b);
    }
}
END_TEST

/* The header's start is read from the file once: the magic number the
 * parser checks is the one libnetpbm parses, and the one the plain decoder
 * parses again, even when the file is rewritten (here as a PAM, which the
 * parser refuses before libnetpbm sees it) right after the first pread. */
static unsigned preads;

static ssize_t rewriting_first_pread(int fd, void *buf, size_t len,
                                     off_t off)
{
    ssize_t n = pread(fd, buf, len, off);

    if (preads++ == 0)
        rewrite_now();
    return n;
}

START_TEST(test_header_read_once)
{
    static const char *const firsts[] = {"P5\n2 2\n255\n\001\002\003\004",
                                         "P2\n2 2\n255\n1 2 3 4\n"};
    static const char pam[] = "P7\nWIDTH 2\nHEIGHT 2\nBOGUS\n";
    const char *path = fx_path("in.pnm");
    struct sp_image img;
    struct sp_load_info info;

    for (size_t i = 0; i < 2; i++) {
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];

            fx_write_text(path, firsts[i]);
            rewrite_path = path;
            rewrite_data = (const unsigned char *)pam;
            rewrite_len = strlen(pam);
            rewrite_at = 1;
            rewrite_calls = preads = 0;
            sp_sys.pread = rewriting_first_pread;
            ck_assert_int_eq(sp_load(path, io, &img, &info),
                             SP_E_CHANGED);
            sp_sys_reset();
            ck_assert_uint_eq(preads, 1);
            ck_assert_ptr_null(img.base);
        }
    }
}
END_TEST

static Suite *load_changed_suite(void)
{
    Suite *s = suite_create("load_changed");
    TCase *tc = fx_tcase("seam");
    tcase_add_test(tc, test_changed_while_read);
    tcase_add_test(tc, test_header_read_once);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(load_changed_suite());
}
