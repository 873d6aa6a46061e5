/* fixtures.h: what the Check suites share.
 *
 * Every suite's main calls fx_run(), which makes one temporary root
 * directory, runs the suite in fork mode and removes the root afterwards
 * (in the parent, so even a test that crashed leaves nothing behind).  A
 * test case that adds the fx_setup/fx_teardown checked fixture gets a fresh
 * directory of its own in fx_dir.  Helpers that can fail abort the test
 * (ck_abort_msg) rather than return an error: a fixture that did not work
 * is a test error, not a result.  The list of I/O paths (fx_io) and the
 * image comparison (fx_images_equal) are in shared.h, included here, which
 * the fuzz harnesses share. */
#ifndef SP_TEST_FIXTURES_H
#define SP_TEST_FIXTURES_H

#include <stddef.h>
#include <sys/types.h>

#include <check.h>

#include "image.h"
#include "scale.h"
#include "shared.h"

/* UNDER_SANITIZER: built with ASan or TSan, whose runtimes die where a
 * plain build's calls fail, and run many times slower. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

/* expect: ck_assert_msg for loops over many runs: Check records the place
 * of every assertion that passes (a write() to its pipe in fork mode), so
 * such a loop tests first and only calls into Check when one fails. */
#define expect(cond, ...)                                                    \
    do {                                                                     \
        if (!(cond))                                                         \
            ck_abort_msg(__VA_ARGS__);                                       \
    } while (0)

/* The current test's own temporary directory (set by fx_setup). */
extern char fx_dir[];

/* fx_setup / fx_teardown: a checked fixture: make fx_dir, remove it. */
void fx_setup(void);
void fx_teardown(void);

/* fx_run: sp_init() (init.h), as every program of the library calls it,
 * then run suite S in CK_FORK mode with the usual output; returns the
 * process exit status (0 when every test passed). */
int fx_run(Suite *s);

/* fx_run_bare: fx_run without sp_init(): each test starts in a process
 * that never called it (test_guard.c: the init itself). */
int fx_run_bare(Suite *s);

/* fx_tcase: a test case with the fx_setup/fx_teardown fixture and a
 * timeout generous enough for a sanitizer build. */
TCase *fx_tcase(const char *name);

/* fx_path: NAME inside fx_dir; the string lives as long as the test, and
 * the same NAME gives the same pointer. */
const char *fx_path(const char *name);

/* fx_rmtree: remove DIR and everything below it; missing is fine. */
void fx_rmtree(const char *dir);

/* fx_write_file: create or truncate PATH with LEN bytes of DATA. */
void fx_write_file(const char *path, const void *data, size_t len);

/* fx_write_text: PATH holds the string TEXT (without its NUL). */
void fx_write_text(const char *path, const char *text);

/* fx_write_pnm: PATH holds the header text HEADER followed by LEN raster
 * bytes of RASTER (either may be empty). */
void fx_write_pnm(const char *path, const char *header, const void *raster,
                  size_t len);

/* fx_make_image: IMG gets a fresh W x H image (sp_image_alloc) filled with
 * a deterministic pattern of samples 0..MAXVAL that depends on SEED, with
 * the corner cases of 0 and MAXVAL present.  Release with
 * sp_image_release(). */
void fx_make_image(struct sp_image *img, size_t w, size_t h,
                   unsigned channels, unsigned bytes, unsigned maxval,
                   unsigned seed);

/* fx_sample / fx_set_sample: sample C of pixel (X, Y). */
unsigned fx_sample(const struct sp_image *img, size_t x, size_t y,
                   unsigned c);
void fx_set_sample(struct sp_image *img, size_t x, size_t y, unsigned c,
                   unsigned v);

/* fx_pnm_bytes: the P5/P6 file of IMG as netpbm writes it, in a malloc'd
 * buffer of *LEN bytes. */
unsigned char *fx_pnm_bytes(const struct sp_image *img, size_t *len);

/* fx_write_image: PATH holds IMG as a P5/P6 file. */
void fx_write_image(const char *path, const struct sp_image *img);

/* fx_read_file: all of PATH in a malloc'd buffer (NUL-terminated, the NUL
 * not counted) of *LEN bytes. */
unsigned char *fx_read_file(const char *path, size_t *len);

/* fx_file_exists: whether PATH names anything (lstat). */
int fx_file_exists(const char *path);

/* fx_count_entries: the entries of DIR other than . and ..; with PREFIX
 * not NULL, only those whose names start with it. */
int fx_count_entries(const char *dir, const char *prefix);

/* fx_count_fds: the open descriptors of this process (/proc/self/fd). */
int fx_count_fds(void);

/* fx_count_maps: the lines of /proc/self/maps, or with NEEDLE not NULL
 * those that contain it (a file's path: its mappings). */
int fx_count_maps(const char *needle);

/* fx_limit_as: lower RLIMIT_AS to what the process maps now plus EXTRA
 * bytes, so that a large allocation or mapping fails.  Relative to the
 * current size, so that it works under AddressSanitizer too. */
void fx_limit_as(size_t extra);

/* fx_in_memory: IMG, a loaded image (sp_load) of any path, made one
 * whose pixels are in memory: a pread image (its rows still in the file:
 * pixels NULL) is read whole through its row source (source.h) into a
 * fresh raster of the same type; any other is left as it is.  Either way
 * the caller releases IMG with sp_image_release(). */
void fx_in_memory(struct sp_image *img);

/* fx_ref_scale: the scale kernels' definition, one output sample at a
 * time, into a fresh DST: enlarge dst(x, y) = src(x / N, y / N); sample
 * src(x * N, y * N); box the rounded mean of the block's existing pixels,
 * (sum + count / 2) / count.  Independent of src/scale.c on purpose. */
void fx_ref_scale(const struct sp_image *src, int factor,
                  enum sp_reduce filter, struct sp_image *dst);

#endif
