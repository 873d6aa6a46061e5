/* input_path.h: a load path, for input.c and the paths' own files only:
 * the table of operations each path fills, and what they share.
 *
 * A path is one file, input_<name>.c, holding its whole life: the load
 * (or attach) of an image's raster, its rows, the guard its reads need,
 * the check that the input did not change, the release.  All it keeps is
 * in the input (struct sp_input: IMG, HELD, REST).  Adding a path:
 *
 *   1. input_<name>.c defining `const struct sp_input_path sp_input_<name>`
 *      (the shared calls below fill what it does as another path does);
 *   2. its entry in input.c's table `paths`, its name beside the others
 *      below (and a value of enum sp_io, with its name in sp_io_name, for
 *      the option that asks for it);
 *   3. its file in src/CMakeLists.txt.
 *
 * Threads may call rows and guard at once, each with scratch of its own;
 * done_before one thread at a time; the rest with no rows being read. */
#ifndef SP_INPUT_PATH_H
#define SP_INPUT_PATH_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "header.h"
#include "input_types.h"
#include "status.h"

struct sp_input;

/* What the load asks about a header, and of whom. */
struct sp_accept {
    sp_accept_fn *fn;
    void *arg;
};

struct sp_input_path {
    enum sp_io io;  /* what sp_load_info.io_used says of an image it took */

    /* next: the whole next image of an input this path reads alone (a
     * stream: its header, ACC's verdict, its raster), into IN->img, HELD
     * and INFO.  NULL for a path of regular files: input.c parses the
     * header, then calls LOAD. */
    sp_status (*next)(struct sp_input *in, const struct sp_accept *acc,
                      struct sp_load_info *info);
    /* more: sp_input_more() of such an input; NULL: input.c's, by
     * offset. */
    sp_status (*more)(struct sp_input *in, int *more);
    /* load: the binary raster of HDR (parsed at IN->pos of IN's regular
     * file, checked against its size and accepted) into IN->img's pixels
     * and HELD (sp_input_hold).  On failure nothing is held: input.c may try the read
     * path instead.  NULL: a path that loads no file. */
    sp_status (*load)(struct sp_input *in, const struct sp_header *hdr);

    /* rows: the address of rows [Y0, Y1), packed at the image's stride: in
     * the image, or read into SCRATCH; NULL with *ST set on failure */
    const unsigned char *(*rows)(struct sp_input *in, size_t y0, size_t y1,
                                 unsigned char *scratch, sp_status *st);
    /* scratch: bytes of scratch a request of ROWS rows needs (0: none) */
    size_t (*scratch)(const struct sp_input *in, size_t rows);
    /* done_before: rows before Y will not be asked for again (advice) */
    void (*done_before)(struct sp_input *in, size_t y);
    /* guard: FN(ARG) with the faults the rows can raise turned into
     * SP_E_CHANGED */
    sp_status (*guard)(sp_status (*fn)(void *arg), void *arg);
    /* check: is the file the rows are read from as it was loaded? */
    sp_status (*check)(const struct sp_input *in);
    /* release: give back what HELD holds (IN->img is then emptied by
     * input.c); 0 or an errno value */
    sp_status (*release)(struct sp_input *in);
};

extern const struct sp_input_path sp_input_read, sp_input_mmap,
    sp_input_pread, sp_input_stream, sp_input_memory;

/* sp_input_decoded: the compressed image (JPEG, PNG: decode.h) of CODEC
 * at IN->pos of IN's regular file, its bytes held as PATH holds a raster
 * (mmap: mapped and decoded under the guard; any other: read into a
 * buffer), its header asked about (ACC) before its raster is decoded into
 * a buffer that the read path then holds; IN->pos goes just past the
 * image's end marker, where another image may follow (input_decoded.c). */
sp_status sp_input_decoded(struct sp_input *in,
                           const struct sp_input_path *path,
                           const struct sp_codec *codec,
                           const struct sp_accept *acc,
                           struct sp_load_info *info);

/* sp_input_restamp: after a load that ended with ST, IN's file checked
 * against the stamp taken at open: a load that succeeded on a file
 * changed since is released and SP_E_CHANGED (or the check's error); a
 * failure on a changed file is SP_E_CHANGED, INFO's detail dropped (it
 * described bytes of another version); else ST. */
sp_status sp_input_restamp(struct sp_input *in, sp_status st,
                           struct sp_load_info *info);

/* sp_input_decode: the image of the LEN bytes at P, by CODEC, for
 * sp_input_decoded() and the stream: its header asked about (ACC), then
 * too few bytes for the pixels it claims refused (sp_decode_bound), then
 * its raster decoded, at the shrink ACC picked (header.h), into a buffer
 * that the read path holds (IN->img, IN->path), *USED set to the bytes it
 * took; with no ACC->fn, the shrink HDR holds (a stream's, asked
 * already).  MAPPED: P is a mapping,
 * decoded under the SIGBUS guard. */
sp_status sp_input_decode(struct sp_input *in, const struct sp_codec *codec,
                          const unsigned char *p, size_t len, int mapped,
                          const struct sp_accept *acc, struct sp_header *hdr,
                          size_t *used, char *why);

/* sp_input_decode_header: the header of the LEN bytes at P by CODEC
 * (SP_E_TRUNCATED: more bytes are needed to tell). */
sp_status sp_input_decode_header(const struct sp_codec *codec,
                                 const unsigned char *p,
                                 size_t len, struct sp_header *hdr, char *why);

/* ---- what the paths share (input_bytes.c) ---- */

/* The calls of a path whose raster is in memory: rows used in place,
 * nothing to fault, nothing to give back early, nothing to check; the
 * buffer HELD.P (HELD.LEN bytes) freed or kept (IN->reuse) at release. */
const unsigned char *sp_input_in_place(struct sp_input *in, size_t y0,
                                       size_t y1, unsigned char *scratch,
                                       sp_status *st);
size_t sp_input_no_scratch(const struct sp_input *in, size_t rows);
void sp_input_keep(struct sp_input *in, size_t y);
sp_status sp_input_unguarded(sp_status (*fn)(void *arg), void *arg);
sp_status sp_input_unchanged(const struct sp_input *in);
sp_status sp_input_free(struct sp_input *in);

/* SP_INPUT_IN_MEMORY: those calls, as a path's table names them. */
#define SP_INPUT_IN_MEMORY                                                   \
    .rows = sp_input_in_place, .scratch = sp_input_no_scratch,               \
    .done_before = sp_input_keep, .guard = sp_input_unguarded,               \
    .check = sp_input_unchanged, .release = sp_input_free

/* sp_stamp_of: the stamp of the file SB describes, into *STAMP. */
void sp_stamp_of(const struct stat *sb, struct sp_stamp *stamp);

/* sp_input_stamp_check: IN's file against the stamp taken at open (bytes
 * in memory never change: 0). */
sp_status sp_input_stamp_check(const struct sp_input *in);

/* sp_input_read_at: up to LEN bytes of IN's regular file (or its bytes in
 * memory) at AT into BUF, as sp_sys_pread_some() reads them: the count,
 * 0 at the end, or -1 with errno set. */
ssize_t sp_input_read_at(const struct sp_input *in, void *buf, size_t len,
                       off_t at);

/* sp_input_hold: IN->img viewing the raster at RASTER, laid out as HDR
 * says, held as P (LEN bytes); input.c then records the path that holds
 * it. */
void sp_input_hold(struct sp_input *in, const struct sp_header *hdr, void *p,
                   size_t len, unsigned char *raster);

/* A reader of the input's bytes for the header parser and the plain
 * decoder.  FILE: pread FD (or copy from MEM, unless NULL) from POS,
 * never at or past END, the first block read kept in BLOCK.  Otherwise:
 * the HEAD_LEN bytes at HEAD (read before), then read() from FD, until
 * STOP is set. */
struct sp_reader {
    int fd;
    int file;
    const unsigned char *mem;
    off_t pos;                  /* the next byte's offset */
    off_t end;                  /* FILE: the size taken at open */
    const unsigned char *head;
    size_t head_len;
    size_t taken;               /* bytes read() from FD */
    int eof;                    /* read() said end of file */
    int stop;                   /* read() no more */
    int error;                  /* the errno of a failed read, or 0 */
    int kept;                   /* FILE: BLOCK holds BLOCK_LEN bytes of */
    off_t block_at;             /* the file from BLOCK_AT */
    size_t block_len;
    unsigned char block[8192];
};

/* sp_reader_init: RD holding nothing: every field 0 but BLOCK, which is
 * left as it is (KEPT says when it holds bytes): a reader on the stack
 * costs no 8 KiB memset a header. */
static inline void sp_reader_init(struct sp_reader *rd)
{
    memset(rd, 0, offsetof(struct sp_reader, block));
}

/* sp_reader_pull: the plain decoder's pull (header.h) of RD: one read
 * of up to CAP bytes at RD's position (a file's pread never at or past
 * END), RD->error set on a failure. */
ssize_t sp_reader_pull(void *rd, unsigned char *buf, size_t cap);

/* sp_reader_open: a FILE* that reads RD (which must outlive it; fclose()
 * leaves FD open).  Returns NULL with errno set on failure. */
FILE *sp_reader_open(struct sp_reader *rd);

/* sp_input_ask: ACC's verdict on HDR (0 when there is no ACC->fn). */
sp_status sp_input_ask(const struct sp_accept *acc, struct sp_header *hdr,
                       char *why);

/* sp_input_raster_end: the least input length (from the start of the
 * file or the stream) that can hold the raster HDR promises, saturating
 * at SIZE_MAX (a plain raster: a digit and a separator a sample). */
size_t sp_input_raster_end(const struct sp_header *hdr);

/* sp_input_check_length: is an input of INPUT_BYTES long enough for the
 * raster HDR promises?  SP_E_TRUNCATED, with a detail in WHY, if not. */
sp_status sp_input_check_length(const struct sp_header *hdr,
                                size_t input_bytes, char *why);

/* sp_input_is_magic: do the N bytes at P start with a PNM magic number? */
int sp_input_is_magic(const unsigned char *p, size_t n);

/* sp_input_space: how many of the N bytes at P are whitespace before
 * anything else: the bytes libnetpbm's pm_nextimage() skips between
 * images (isspace() in the C locale). */
size_t sp_input_space(const unsigned char *p, size_t n);

#endif
