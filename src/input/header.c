#include "header.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
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
 * (netpbm()).  A header read from a stream that stalls holds the others'
 * calls until it comes or fails. */
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

static void netpbm_init(void)
{
    pm_init("scaleppm", 0);
    pm_setusererrormsgfn(keep_error);
    pm_setusermessagefn(drop_message);
}

static void netpbm_setup(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    (void)pthread_once(&once, netpbm_init);
    netpbm_msg[0] = '\0';
}

/* netpbm: FN(ARG), a call into libnetpbm, with libnetpbm's exit() on an
 * error turned into a return: 0, or -1 with netpbm_msg set. */
static int netpbm(void (*fn)(void *), void *arg)
{
    jmp_buf jb;

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

/* A PAM header, copied: the bytes libnetpbm reads, and how many were
 * added to the input's. */
struct pam_copy {
    char *p;
    size_t len, cap;
    size_t added;
    int cut;  /* stopped at SP_HEADER_MAX, with no ENDHDR line */
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

/* read_header: pnm_readpaminit of the header at F's position into PAM,
 * *END set to the input's offset of its raster.  A PAM header is read
 * from a copy made once (copy_pam), so that libnetpbm reads the bytes the
 * copy was checked in, whatever is written to the input meanwhile.
 * Returns 0, an errno value, or SP_E_BADHEADER with netpbm_msg set. */
static sp_status read_header(FILE *f, int magic, struct pam *pam, off_t *end)
{
    struct pam_copy c = {NULL, 0, 0, 0, 0};
    off_t start = ftello(f);
    sp_status st;
    FILE *mem;

    if (magic != '7') {
        if (read_pam(f, pam) != 0)
            return SP_E_BADHEADER;
        *end = ftello(f);
        return *end < 0 ? SP_E_BADHEADER : SP_OK;
    }
    st = start < 0 ? errno : copy_pam(f, &c);
    mem = st == SP_OK ? fmemopen(c.p, c.len, "rb") : NULL;
    if (st == SP_OK && mem == NULL)
        st = errno;
    if (mem != NULL) {
        st = read_pam(mem, pam) != 0 ? SP_E_BADHEADER : SP_OK;
        *end = start + ftello(mem) - (off_t)c.added;
        fclose(mem);
    }
    if (st == SP_E_BADHEADER && c.cut)
        snprintf(netpbm_msg, sizeof netpbm_msg, "no end to it in the first "
                 "%u bytes: a PAM header (its comments too) is read that far "
                 "at most", SP_HEADER_MAX);
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

/* read_rows: decode every row of PAM to where ROW(ARG, y) says, a row a
 * call into libnetpbm (so a batch's other loads go on between them).
 * Returns 0, -1 with netpbm_msg set, or -2 when ROW had no memory for a
 * row. */
static int read_rows(struct pam *pam, sp_row_fn *row, void *arg,
                     const struct sp_header *hdr)
{
    struct call c = {NULL, pam, NULL};
    int rc = 0;

    if (netpbm(call_allocpamrow, &c) != 0)
        return -1;
    for (int y = 0; y < pam->height && rc == 0; y++) {
        unsigned char *p = row(arg, (size_t)y);

        if (p == NULL)
            rc = -2;
        else if (netpbm(call_readpamrow, &c) != 0)
            rc = -1;
        else
            put_row(pam, c.row, p, hdr->sample_size, hdr->packed);
    }
    pnm_freepamrow(c.row);
    return rc;
}

sp_status sp_header_decode_plain_rows(FILE *f, const struct sp_header *hdr,
                                      sp_row_fn *row, void *arg, off_t *end,
                                      char *why)
{
    struct pam pam;
    int rc;

    why[0] = '\0';
    netpbm_setup();
    if (fseeko(f, hdr->start, SEEK_SET) != 0 || read_pam(f, &pam) != 0) {
        snprintf(why, SP_WHY_MAX, "%s", netpbm_msg);
        return SP_E_BADHEADER;
    }
    if ((size_t)pam.width != hdr->width || (size_t)pam.height != hdr->height)
        return SP_E_BADHEADER;
    rc = read_rows(&pam, row, arg, hdr);
    if (rc == -2)
        return ENOMEM;
    if (rc != 0) {
        snprintf(why, SP_WHY_MAX, "%s", netpbm_msg);
        return SP_E_BADRASTER;
    }
    *end = ftello(f);
    return SP_OK;
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

sp_status sp_header_decode_plain(FILE *f, const struct sp_header *hdr,
                                 unsigned char *raster, off_t *end, char *why)
{
    struct flat fl = {raster, hdr->raster_bytes / hdr->height};

    return sp_header_decode_plain_rows(f, hdr, flat_row, &fl, end, why);
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
    pam.file = f;
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
    if (write_pam(&pam) != 0) {
        snprintf(why, SP_WHY_MAX, "%s", netpbm_msg);
        return SP_E_BADHEADER;
    }
    return SP_OK;
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
