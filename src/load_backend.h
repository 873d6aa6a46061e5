/* load_backend.h: what the loader's files share, apart from the public
 * load.h: the three backends and the reader of a header's bytes. */
#ifndef SP_LOAD_BACKEND_H
#define SP_LOAD_BACKEND_H

#include <stdio.h>
#include <sys/types.h>

#include "header.h"
#include "load.h"
#include "image.h"
#include "status.h"

/* The three backends, for the loader only: FD is open on a regular file
 * of FILE_SIZE bytes (the size taken at open) whose header HDR is already
 * checked against it; the loader compares the file's stamp afterwards. */
sp_status sp_load_read(int fd, const struct sp_header *hdr,
                       struct sp_image *img);
sp_status sp_load_mmap(int fd, size_t file_size, const struct sp_header *hdr,
                       struct sp_image *img);
sp_status sp_load_pread(int fd, const struct sp_header *hdr,
                        struct sp_image *img);

/* A reader of the input's bytes for the header parser and the plain
 * decoder (load_reader.c), for the loader only.  FILE: pread FD from POS,
 * never at or past END, the first block read kept in BLOCK.  Otherwise:
 * the HEAD_LEN bytes at HEAD (read before), then read() from FD, until
 * STOP is set. */
struct sp_reader {
    int fd;
    int file;
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

/* sp_reader_open: a FILE* that reads RD (which must outlive it; fclose()
 * leaves FD open).  Returns NULL with errno set on failure. */
FILE *sp_reader_open(struct sp_reader *src);

/* What sp_load_checked asks about a header, and of whom. */
struct sp_accept {
    sp_accept_fn *fn;
    void *arg;
};

/* sp_load_ask: ACC's verdict on HDR (0 when there is no ACC->fn). */
sp_status sp_load_ask(const struct sp_accept *acc,
                      const struct sp_header *hdr, char *why);

/* sp_load_raster_end: the least input length (from the start of the file
 * or the stream) that can hold the raster HDR promises, saturating at
 * SIZE_MAX (a plain raster: a digit and a separator a sample). */
size_t sp_load_raster_end(const struct sp_header *hdr);

/* sp_load_check_length: is an input of INPUT_BYTES long enough for the
 * raster HDR promises?  SP_E_TRUNCATED, with a detail in WHY, if not. */
sp_status sp_load_check_length(const struct sp_header *hdr,
                               size_t input_bytes, char *why);

/* sp_load_is_magic: do the N bytes at P start with a PNM magic number? */
int sp_load_is_magic(const unsigned char *p, size_t n);

/* sp_load_space: how many of the N bytes at P are whitespace before
 * anything else: the bytes libnetpbm's pm_nextimage() skips between
 * images (isspace() in the C locale). */
size_t sp_load_space(const unsigned char *p, size_t n);

/* sp_load_decode_plain: decode F's plain raster into a fresh malloc'd
 * IMG; *END gets the offset just past its last sample. */
sp_status sp_load_decode_plain(FILE *f, const struct sp_header *hdr,
                               struct sp_image *img, off_t *end, char *why);

/* sp_load_stream: anything that is not a regular file with a size: a
 * pipe, FIFO, terminal, device, open on FD (load_stream.c).  Reads the
 * header first (from REST, what the last image left, then FD), and after
 * ACC accepts it, the raster it announces (plain: up to its last sample);
 * what it read past the image is left in REST for the next image. */
sp_status sp_load_stream(int fd, struct sp_inbuf *rest,
                         const struct sp_accept *acc, struct sp_image *img,
                         struct sp_load_info *info);

/* sp_load_stream_skip: skip the whitespace at the start of REST, reading
 * on from FD while REST runs out, until something else comes (*MORE = 1,
 * REST starting with it) or the stream ends (*MORE = 0); *SKIPPED grows
 * by the bytes skipped.  Returns 0 or an errno value. */
sp_status sp_load_stream_skip(int fd, struct sp_inbuf *rest, size_t *skipped,
                              int *more);

#endif
