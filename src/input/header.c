#include "header.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pam.h>

#include "image.h"
#include "sample.h"

/* libnetpbm's error message, as its error function left it on this
 * thread. */
static __thread char netpbm_msg[SP_WHY_MAX];

/* libnetpbm keeps one jump buffer for the process: one thread at a time
 * calls it (a batch loads several files at once), a call at a time
 * (netpbm()).  Under this lock libnetpbm only ever reads or writes memory:
 * a header is copied out of its input first (copy_pnm, copy_pam), a plain
 * raster's text is pulled a chunk at a time by the caller's function and
 * decoded a row at a time (sp_header_decode_plain_rows), a header written
 * is written to memory and then to its output.  Whatever blocks (a stream
 * that stalls, a slow disk, a pipe nobody reads) blocks one job, never
 * the others' calls. */
static pthread_mutex_t netpbm_lock = PTHREAD_MUTEX_INITIALIZER;

/* libnetpbm's PAM_STRUCT_SIZE(tuple_type), without its member access
 * through a null pointer (undefined behaviour that UBSan reports). */
#define PAM_LEN                                                              \
    (offsetof(struct pam, tuple_type) + sizeof((struct pam *)0)->tuple_type)

/* Set between setjmp and a possible longjmp, so static rather than
 * automatic (an automatic would be indeterminate after the jump); under
 * netpbm_lock, like libnetpbm's own jump buffer. */
static jmp_buf *saved_jb;

static void keep_error(const char *msg)
{
    size_t n;

    /* One line, without libnetpbm's trailing newline, space or period.
     * MSG may quote the input's header, bytes of it as they are (escape
     * sequences too): it is kept so, as every why is, and escaped where
     * it is shown (msg.h). */
    snprintf(netpbm_msg, sizeof netpbm_msg, "%s", msg);
    for (char *p = netpbm_msg; *p != '\0'; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    n = strlen(netpbm_msg);
    while (n > 0 && (netpbm_msg[n - 1] == ' ' || netpbm_msg[n - 1] == '.'))
        netpbm_msg[--n] = '\0';
}

static void drop_message(const char *msg)
{
    (void)msg;  /* library code never prints */
}

/* Set once sp_header_init() has given libnetpbm its hooks. */
static atomic_int netpbm_ready;

static void netpbm_init(void)
{
    pm_init("scaleppm", 0);
    pm_setusererrormsgfn(keep_error);
    pm_setusermessagefn(drop_message);
    atomic_store(&netpbm_ready, 1);
}

void sp_header_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    (void)pthread_once(&once, netpbm_init);
}

static void netpbm_setup(void)
{
    netpbm_msg[0] = '\0';
}

/* netpbm: FN(ARG), a call into libnetpbm, with libnetpbm's exit() on an
 * error turned into a return: 0, or -1 with netpbm_msg set.  Refused
 * (-1) before sp_header_init(): libnetpbm would print its message on
 * stderr, with the host's hook or its own. */
static int netpbm(void (*fn)(void *), void *arg)
{
    jmp_buf jb;

    if (!atomic_load(&netpbm_ready)) {
        snprintf(netpbm_msg, sizeof netpbm_msg, "sp_init() was not called: "
                 "libnetpbm is not set up");
        return -1;
    }
    pthread_mutex_lock(&netpbm_lock);
    if (setjmp(jb) != 0) {
        pm_setjmpbuf(saved_jb);
        pthread_mutex_unlock(&netpbm_lock);
        return -1;
    }
    pm_setjmpbufsave(&jb, &saved_jb);
    fn(arg);
    pm_setjmpbuf(saved_jb);
    pthread_mutex_unlock(&netpbm_lock);
    return 0;
}

/* A call's arguments: the stream, the image, a row. */
struct call {
    FILE *f;
    struct pam *pam;
    tuple *row;
};

static void call_readpaminit(void *arg)
{
    struct call *c = arg;

    pnm_readpaminit(c->f, c->pam, PAM_LEN);
}

static void call_allocpamrow(void *arg)
{
    struct call *c = arg;

    c->row = pnm_allocpamrow(c->pam);
}

static void call_readpamrow(void *arg)
{
    struct call *c = arg;

    pnm_readpamrow(c->pam, c->row);
}

static void call_writepaminit(void *arg)
{
    pnm_writepaminit(((struct call *)arg)->pam);
}

/* read_pam: pnm_readpaminit(F) as netpbm() calls it. */
static int read_pam(FILE *f, struct pam *pam)
{
    struct call c = {f, pam, NULL};

    return netpbm(call_readpaminit, &c);
}

/* libnetpbm reads a PAM header after its first line with fgets() into
 * 256 bytes, a chunk at a time: up to and through a newline, 255 bytes
 * at most.  It then writes a newline at [254], over the terminating NUL
 * of a chunk of exactly 254 bytes, and reads on into [255], which nothing
 * wrote (undefined behaviour: ASan's strncpy-param-overlap, or garbage in
 * a tuple type).  In the copy it is given, such a chunk has a blank put
 * at its start, or after its '#' in a comment: libnetpbm skips a line's
 * leading blanks and keeps no comment, so it reads the header the input
 * has, and no chunk is 254 bytes long. */
#define PAM_CHUNK 255

/* A header, copied: the bytes libnetpbm reads, how many were added to
 * the input's (a PAM's) and how many left out (a comment's, P1 to P6). */
struct pam_copy {
    char *p;
    size_t len, cap;
    size_t added, removed;
    int cut;  /* stopped at SP_HEADER_MAX, before the header's end */
};

static int copy_put(struct pam_copy *c, const char *p, size_t n)
{
    if (c->cap - c->len < n) {
        size_t cap = c->cap ? c->cap : 4096;
        char *q;

        while (cap - c->len < n)
            cap *= 2;
        q = realloc(c->p, cap);
        if (q == NULL)
            return -1;
        c->p = q;
        c->cap = cap;
    }
    memcpy(c->p + c->len, p, n);
    c->len += n;
    return 0;
}

/* ends_header: whether libnetpbm takes CHUNK (a C string) for the ENDHDR
 * line: not a comment, its first word ENDHDR. */
static int ends_header(const char *chunk)
{
    size_t i = 0, n;

    if (chunk[0] == '#')
        return 0;
    while (isspace((unsigned char)chunk[i]))
        i++;
    for (n = 0; chunk[i + n] != '\0' && !isspace((unsigned char)chunk[i + n]);
         n++)
        ;
    return n == 6 && memcmp(chunk + i, "ENDHDR", 6) == 0;
}

/* copy_pam: the PAM header at F's position read once into *C, as
 * libnetpbm's chunks (its magic number's line, then through the ENDHDR
 * chunk, the end of F or SP_HEADER_MAX bytes: C->cut), no chunk 254 bytes
 * long; F is left after it.  Returns 0 or ENOMEM. */
static sp_status copy_pam(FILE *f, struct pam_copy *c)
{
    char chunk[PAM_CHUNK + 2];
    int ch = 0;

    while (ch != '\n' && (ch = getc(f)) != EOF) {
        char b = (char)ch;

        if (copy_put(c, &b, 1) != 0)
            return ENOMEM;
    }
    while (ch != EOF) {
        size_t n = 0;

        if (c->len >= SP_HEADER_MAX) {
            c->cut = 1;
            break;
        }

        while (n < PAM_CHUNK && (ch = getc(f)) != EOF) {
            chunk[n++] = (char)ch;
            if (ch == '\n')
                break;
        }
        if (n == PAM_CHUNK - 1) {
            size_t at = chunk[0] == '#';

            memmove(chunk + at + 1, chunk + at, n - at);
            chunk[at] = ' ';
            n++;
            c->added++;
        }
        if (copy_put(c, chunk, n) != 0)
            return ENOMEM;
        chunk[n] = '\0';
        if (ends_header(chunk))
            break;
    }
    return SP_OK;
}

/* copy_pnm: the P1 to P6 header at F's position (MAGIC's) read once into
 * *C, up to and through the character that ends its last number (two
 * numbers for PBM, three for the others) and the comment that character
 * may start, as libnetpbm reads a number (pm_getuint: any one character
 * ends it, a '#' with its comment), or to the end of F or SP_HEADER_MAX
 * bytes (C->cut); F is left after it.  A comment's text is left out, its
 * '#' and the end of its line kept: libnetpbm reads a comment as the end
 * of its line, so that it reads the header the input has, and a header
 * of long comments (legal, and unbounded by a path) costs no memory.
 * What is not a digit or a comment is copied as it is, for libnetpbm to
 * take as white space or refuse.  Returns 0 or ENOMEM. */
static sp_status copy_pnm(FILE *f, int magic, struct pam_copy *c)
{
    unsigned numbers = magic == '1' || magic == '4' ? 2 : 3, seen = 0;
    char mag[2];
    int digits = 0, ch;

    /* the magic number, checked already: its digit is no number */
    if (fread(mag, 1, 2, f) != 2)
        return SP_E_BADHEADER;
    if (copy_put(c, mag, 2) != 0)
        return ENOMEM;
    while (seen < numbers && (ch = getc(f)) != EOF) {
        char b = (char)ch;
        int isdigit_ch = ch >= '0' && ch <= '9';

        if (c->len >= SP_HEADER_MAX) {
            c->cut = 1;
            break;
        }
        if (copy_put(c, &b, 1) != 0)
            return ENOMEM;
        if (ch == '#') {  /* to the end of its line, which is kept */
            while ((ch = getc(f)) != EOF && ch != '\n' && ch != '\r')
                c->removed++;
            b = (char)ch;
            if (ch != EOF && copy_put(c, &b, 1) != 0)
                return ENOMEM;
        }
        if (digits && !isdigit_ch)
            seen++;  /* ended by this character (or comment) */
        digits = isdigit_ch;
    }
    return SP_OK;
}

/* read_header: pnm_readpaminit of the header at F's position into PAM,
 * *END set to the input's offset of its raster.  The header is read from
 * a copy made once (copy_pnm, copy_pam), outside libnetpbm's lock, so that
 * libnetpbm reads memory only, and the bytes the copy was checked in,
 * whatever is written to the input meanwhile.  Returns 0, an errno value,
 * or SP_E_BADHEADER with netpbm_msg set. */
static sp_status read_header(FILE *f, int magic, struct pam *pam, off_t *end)
{
    struct pam_copy c = {NULL, 0, 0, 0, 0, 0};
    off_t start = ftello(f);
    sp_status st;
    FILE *mem;

    st = start < 0           ? errno
         : magic == '7' ? copy_pam(f, &c)
                        : copy_pnm(f, magic, &c);
    mem = st == SP_OK ? fmemopen(c.p, c.len, "rb") : NULL;
    if (st == SP_OK && mem == NULL)
        st = errno;
    if (mem != NULL) {
        off_t took;

        st = read_pam(mem, pam) != 0 ? SP_E_BADHEADER : SP_OK;
        took = ftello(mem);
        *end = start + took - (off_t)c.added + (off_t)c.removed;
        /* libnetpbm ends a P1 to P6 header where copy_pnm does: a comment
         * left out is before its end */
        if (st == SP_OK && magic != '7' && took != (off_t)c.len) {
            snprintf(netpbm_msg, sizeof netpbm_msg, "libnetpbm ended the "
                     "header after %lld of its %zu bytes",
                     (long long)took, c.len);
            st = SP_E_BADHEADER;
        }
        fclose(mem);
    }
    if (st == SP_E_BADHEADER && c.cut)
        snprintf(netpbm_msg, sizeof netpbm_msg, "no end to it in the first "
                 "%u bytes: a %s is read that far at most", SP_HEADER_MAX,
                 magic == '7' ? "PAM header (its comments too)"
                              : "header (but for its comments' text)");
    free(c.p);
    return st;
}

/* check_magic: F's magic number, from START, its digit into *MAGIC; F is
 * left at START. */
static sp_status check_magic(FILE *f, off_t start, int *magic, char *why)
{
    int c0 = getc(f), c1 = getc(f);

    if (c0 == EOF)
        return SP_E_EMPTY;
    if (c0 != 'P' || c1 == EOF || c1 < '1' || c1 > '7') {
        snprintf(why, SP_WHY_MAX, "expected a PBM, PGM, PPM or PAM magic "
                 "number, P1 to P7");
        return SP_E_NOTPNM;
    }
    if (fseeko(f, start, SEEK_SET) != 0)
        return SP_E_BADHEADER;
    *magic = c1;
    return SP_OK;
}

/* has_alpha: whether PAM's last plane is opacity, as netpbm's tuple types
 * say (GRAYSCALE_ALPHA: 2 planes, RGB_ALPHA: 4). */
static int has_alpha(const struct pam *pam)
{
    return (strcmp(pam->tuple_type, "GRAYSCALE_ALPHA") == 0 &&
            pam->depth == 2) ||
           (strcmp(pam->tuple_type, "RGB_ALPHA") == 0 && pam->depth == 4);
}

sp_status sp_header_parse(FILE *f, struct sp_header *hdr, char *why)
{
    struct pam pam;
    struct sp_image type;
    sp_status st;
    off_t off = 0;
    int magic;

    memset(hdr, 0, sizeof *hdr);
    why[0] = '\0';
    netpbm_setup();
    hdr->start = ftello(f);
    if (hdr->start < 0)
        return errno;
    st = check_magic(f, hdr->start, &magic, why);
    if (st != SP_OK)
        return st;
    st = read_header(f, magic, &pam, &off);
    if (st == SP_E_BADHEADER)
        snprintf(why, SP_WHY_MAX, "%s", netpbm_msg);
    if (st != SP_OK)
        return st;

    /* libnetpbm refuses these itself; the core does not rely on it. */
    if (pam.width <= 0 || pam.height <= 0 || pam.depth < 1 ||
        pam.maxval < 1 || pam.maxval > 65535) {
        snprintf(why, SP_WHY_MAX, "%d x %d, depth %u, maxval %lu",
                 pam.width, pam.height, pam.depth, (unsigned long)pam.maxval);
        return SP_E_BADHEADER;
    }
    hdr->magic = (char)(pam.format & 0xff);
    hdr->plain = hdr->magic >= '1' && hdr->magic <= '3';
    hdr->packed = hdr->magic == '1' || hdr->magic == '4';
    hdr->width = (size_t)pam.width;
    hdr->height = (size_t)pam.height;
    hdr->channels = pam.depth;
    hdr->maxval = hdr->packed ? 1 : (unsigned)pam.maxval;
    hdr->sample_size = hdr->maxval > 255 ? 2 : 1;
    hdr->alpha = hdr->magic == '7' && has_alpha(&pam);
    snprintf(hdr->tuple_type, sizeof hdr->tuple_type, "%s", pam.tuple_type);
    hdr->raster_offset = off;
    sp_image_type_of(&type, hdr);
    st = sp_image_raster_size(hdr->width, hdr->height, &type,
                              &hdr->raster_bytes);
    if (st != SP_OK)
        snprintf(why, SP_WHY_MAX, "%zu x %zu pixels", hdr->width, hdr->height);
    return st;
}

/* put_row: libnetpbm's row TUPLES as a row of the binary raster at P:
 * samples of BYTES bytes big-endian, or a PBM's packed bits (libnetpbm
 * gives a PBM's black as 0, the raster has it as a 1 bit). */
static void put_row(const struct pam *pam, const tuple *tuples,
                    unsigned char *p, unsigned bytes, int packed)
{
    if (packed) {
        memset(p, 0, (size_t)pam->width / 8 + (pam->width % 8 != 0));
        for (int x = 0; x < pam->width; x++)
            if (tuples[x][0] == PAM_PBM_BLACK)
                sp_bit_set(p, (size_t)x);
        return;
    }
    for (int x = 0; x < pam->width; x++)
        for (unsigned c = 0; c < pam->depth; c++, p += bytes)
            sp_sample_put(p, (unsigned)tuples[x][c], bytes);
}

/* plain_begin: PAM and *ROW set up for HDR's plain raster, as
 * pnm_readpaminit sets them up, from a header written for it (the
 * input's was read already, and its text is not kept). */
static sp_status plain_begin(const struct sp_header *hdr, struct pam *pam,
                             tuple **row)
{
    struct call c = {NULL, pam, NULL};
    char text[80];
    int n = hdr->packed
                ? snprintf(text, sizeof text, "P%c\n%zu %zu\n", hdr->magic,
                           hdr->width, hdr->height)
                : snprintf(text, sizeof text, "P%c\n%zu %zu\n%u\n",
                           hdr->magic, hdr->width, hdr->height, hdr->maxval);
    FILE *mem = fmemopen(text, (size_t)n, "rb");
    int rc;

    if (mem == NULL)
        return errno;
    rc = read_pam(mem, pam);
    fclose(mem);
    if (rc != 0 || (size_t)pam->width != hdr->width ||
        (size_t)pam->height != hdr->height)
        return SP_E_BADHEADER;
    if (netpbm(call_allocpamrow, &c) != 0)
        return SP_E_BADHEADER;
    *row = c.row;
    return SP_OK;
}

/* plain_row: one row of PAM's plain raster from the LEN bytes at TEXT
 * into C->row, *USED set to the bytes it took.  Returns 0, 1 when
 * libnetpbm met the end of TEXT (the row may go on in what follows), or
 * -1 with netpbm_msg set. */
static int plain_row(struct call *c, const unsigned char *text, size_t len,
                     size_t *used)
{
    static const unsigned char none[1];
    FILE *mem = fmemopen((void *)(len > 0 ? text : none), len, "rb");
    int rc;

    if (mem == NULL)
        return -2;
    c->pam->file = mem;
    rc = netpbm(call_readpamrow, c);
    if (rc != 0 && feof(mem))
        rc = 1;
    *used = (size_t)ftello(mem);
    c->pam->file = NULL;
    fclose(mem);
    return rc;
}

/* The text read at a time, and the most one row's text may take before
 * the row ends (its samples at their longest and a space each, and
 * SP_HEADER_MAX of white space and comments). */
#define PLAIN_CHUNK ((size_t)1 << 16)

static size_t plain_row_max(const struct sp_header *hdr)
{
    size_t samples = hdr->width * (hdr->packed ? 1 : hdr->channels), max;

    if (__builtin_mul_overflow(samples, (size_t)8, &max) ||
        __builtin_add_overflow(max, (size_t)SP_HEADER_MAX, &max))
        return SIZE_MAX;
    return max;
}

/* pull_more: what the text's pull brings after the row now at P of T
 * (T->buf[P..T->len)): that row moved to the buffer's start, the buffer
 * grown while full. */
static sp_status pull_more(struct sp_plain_text *t, size_t p)
{
    ssize_t n;

    if (p > 0 && t->len > p)
        memmove(t->buf, t->buf + p, t->len - p);
    t->len -= p;
    if (t->cap - t->len < PLAIN_CHUNK) {
        /* doubled: a long row is tried again a few times, not often */
        size_t cap = t->cap > PLAIN_CHUNK ? 2 * t->cap : 2 * PLAIN_CHUNK;
        unsigned char *q;

        if (cap < t->cap || (q = realloc(t->buf, cap)) == NULL)
            return ENOMEM;
        t->buf = q;
        t->cap = cap;
    }
    n = t->pull(t->arg, t->buf + t->len, t->cap - t->len);
    if (n < 0)
        return errno;
    t->len += (size_t)n;
    t->eof = n == 0;
    return SP_OK;
}

sp_status sp_header_decode_plain_rows(struct sp_plain_text *t,
                                      const struct sp_header *hdr,
                                      sp_row_fn *row, void *arg, char *why)
{
    struct pam pam;
    struct call c = {NULL, &pam, NULL};
    size_t p = 0, max = plain_row_max(hdr);
    sp_status st;

    why[0] = '\0';
    t->used = 0;
    netpbm_setup();
    st = plain_begin(hdr, &pam, &c.row);
    if (st == SP_E_BADHEADER)
        snprintf(why, SP_WHY_MAX, "%s", netpbm_msg);
    for (size_t y = 0; st == SP_OK && y < hdr->height; y++) {
        unsigned char *out = row(arg, y);
        size_t used = 0;
        int rc = 1;

        if (out == NULL)
            st = ENOMEM;
        while (st == SP_OK && rc == 1) {
            /* an empty text is libnetpbm's to end only at the end */
            rc = t->len > p   ? plain_row(&c, t->buf + p, t->len - p, &used)
                 : t->eof ? plain_row(&c, NULL, 0, &used)
                          : 1;
            if (rc == -2)
                st = errno;
            else if (rc == -1 || (rc == 1 && t->eof)) {
                snprintf(why, SP_WHY_MAX, "%s", netpbm_msg);
                st = SP_E_BADRASTER;
            } else if (rc == 1 && t->len - p >= max) {
                snprintf(why, SP_WHY_MAX, "row %zu: no end to it in %zu "
                         "bytes: a plain row's text (its white space and "
                         "comments too) is read that far at most", y,
                         t->len - p);
                st = SP_E_BADRASTER;
            } else if (rc == 1) {  /* outside the lock: it may block */
                t->used += p;
                st = pull_more(t, p);
                p = 0;
            }
        }
        if (st == SP_OK) {
            put_row(&pam, c.row, out, hdr->sample_size, hdr->packed);
            p += used;
        }
    }
    t->used += p;
    /* what was read past the raster stays at the buffer's start */
    if (p > 0 && t->len > p)
        memmove(t->buf, t->buf + p, t->len - p);
    t->len -= p;
    if (c.row != NULL)
        pnm_freepamrow(c.row);
    return st;
}

/* A flat raster: row Y at Y * stride. */
struct flat {
    unsigned char *raster;
    size_t stride;
};

static unsigned char *flat_row(void *arg, size_t y)
{
    struct flat *fl = arg;

    return fl->raster + y * fl->stride;
}

sp_status sp_header_decode_plain(struct sp_plain_text *t,
                                 const struct sp_header *hdr,
                                 unsigned char *raster, char *why)
{
    struct flat fl = {raster, hdr->raster_bytes / hdr->height};

    return sp_header_decode_plain_rows(t, hdr, flat_row, &fl, why);
}

/* write_pam: pnm_writepaminit(PAM) as netpbm() calls it. */
static int write_pam(struct pam *pam)
{
    struct call c = {NULL, pam, NULL};

    return netpbm(call_writepaminit, &c);
}

sp_status sp_header_write(FILE *f, const struct sp_image *layout, char *why)
{
    struct pam pam;
    char *text = NULL;
    size_t len = 0;
    sp_status st = SP_OK;
    int rc;

    why[0] = '\0';
    netpbm_setup();
    if (layout->width > INT_MAX || layout->height > INT_MAX) {
        snprintf(why, SP_WHY_MAX, "%zu x %zu is too large for PNM",
                 layout->width, layout->height);
        return SP_E_TOOBIG;
    }
    /* libnetpbm writes the tuple type on one line, and reads a header
     * line of up to 255 bytes back: a longer type (read from several
     * TUPLTYPE lines) would make a file it cannot read. */
    if (layout->magic == '7' &&
        strlen(layout->tuple_type) > SP_TUPLE_LINE_MAX) {
        snprintf(why, SP_WHY_MAX, "a PAM tuple type of %zu characters: "
                 "netpbm reads back %d at most",
                 strlen(layout->tuple_type), SP_TUPLE_LINE_MAX);
        return SP_E_BADHEADER;
    }
    memset(&pam, 0, sizeof pam);
    pam.size = sizeof pam;
    pam.len = PAM_LEN;
    switch (layout->magic) {
    case '4': pam.format = RPBM_FORMAT; break;
    case '5': pam.format = RPGM_FORMAT; break;
    case '6': pam.format = RPPM_FORMAT; break;
    case '7': pam.format = PAM_FORMAT; break;
    default:  /* a layout of no type: by its channels */
        pam.format = layout->channels == 1   ? RPGM_FORMAT
                     : layout->channels == 3 ? RPPM_FORMAT
                                             : PAM_FORMAT;
        break;
    }
    pam.plainformat = 0;
    pam.width = (int)layout->width;
    pam.height = (int)layout->height;
    pam.depth = layout->channels;
    pam.maxval = layout->maxval;
    snprintf(pam.tuple_type, sizeof pam.tuple_type, "%s",
             layout->tuple_type);
    /* written to memory under the lock, then to F outside it */
    pam.file = open_memstream(&text, &len);
    if (pam.file == NULL)
        return errno;
    rc = write_pam(&pam);
    if (fclose(pam.file) != 0 && rc == 0)
        st = errno;
    else if (rc != 0) {
        snprintf(why, SP_WHY_MAX, "%s", netpbm_msg);
        st = SP_E_BADHEADER;
    } else if (fwrite(text, 1, len, f) != len)
        st = errno != 0 ? errno : EIO;
    free(text);
    return st;
}

void sp_image_type_of(struct sp_image *img, const struct sp_header *hdr)
{
    img->width = hdr->width;
    img->height = hdr->height;
    img->channels = hdr->channels;
    img->sample_size = hdr->sample_size;
    img->maxval = hdr->maxval;
    img->packed = hdr->packed;
    img->alpha = hdr->alpha;
    img->magic = hdr->plain ? (char)(hdr->magic + 3) : hdr->magic;
    memcpy(img->tuple_type, hdr->tuple_type, sizeof img->tuple_type);
    img->stride = sp_image_row_bytes(img, hdr->width);
}
