/* load.h: load a PNM image with read() or mmap(), or open it for pread()
 * of its rows, behind one interface.
 *
 *   sp_load()          -> an sp_image whose pixels are the raster, or
 *                         whose rows the pread row source reads
 *                         (source.h)
 *   sp_image_release() -> free(), madvise(MADV_DONTNEED) + munmap(), or
 *                         close()
 *
 * A regular file's size is taken once, with its stamp (image.h), by the
 * fstat() after open; the header is parsed from a stream that ends at that
 * size, and every check (the raster's length, the mapping's, the ends of
 * the reads) is made against it.  The header is checked, and offered to
 * the caller (sp_accept_fn), before any raster memory is allocated or
 * mapped and before a raster byte is read.  Binary rasters (P4-P7) are
 * used as they are: read into one malloc'd buffer, or used in place inside
 * the mapping at the header's offset.  Plain rasters (P1-P3) are decoded
 * into a malloc'd buffer, so they always take the read path; from a
 * stream they are decoded as they arrive.  A file that changes while it
 * is loaded (its stamp differs afterwards) is SP_E_CHANGED. */
#ifndef SP_LOAD_H
#define SP_LOAD_H

#include <stdio.h>
#include <sys/types.h>

#include "header.h"
#include "image.h"
#include "status.h"

/* PREAD leaves the raster in the file, to be read as the rows are wanted
 * into small buffers; AUTO picks by the input: see sp_load(). */
enum sp_io { SP_IO_READ, SP_IO_MMAP, SP_IO_PREAD, SP_IO_AUTO };

/* sp_io_name: "read", "mmap", "pread" or "auto". */
const char *sp_io_name(enum sp_io io);

struct sp_load_info {
    enum sp_io io_used;     /* READ when mmap or pread was asked but not
                               possible */
    char magic;             /* '1' to '7' (P1 to P7) */
    off_t raster_offset;
    off_t next;             /* just past this image: a regular file's
                               offset; a stream's count of bytes from
                               where this image started */
    size_t input_bytes;     /* the file's size when opened, or the bytes
                               read from the stream */
    size_t trailing_bytes;  /* bytes after the image (of a stream: those
                               read so far) */
    int trailing_image;     /* they start with a PNM magic number: the
                               next image of a multi-image input */
    char why[SP_WHY_MAX];   /* detail of an error, possibly empty */
};

/* sp_accept_fn: the caller's verdict on the parsed header HDR, asked
 * before any raster byte is buffered, allocated, mapped or read: 0 to go
 * on, or a status for sp_load to return, with a detail in WHY (SP_WHY_MAX
 * bytes) if it likes.  ARG is the caller's. */
typedef sp_status sp_accept_fn(const struct sp_header *hdr, void *arg,
                               char *why);

/* sp_load_checked: load the image at PATH ("-" is standard input) into
 * IMG, with IO as the load path; AUTO preads a regular file and reads
 * anything else (the measurements behind the rule are in the README).  A
 * pipe, FIFO, terminal, character device, empty-looking or unmappable
 * file, and a plain (P2/P3) raster, is read instead, and INFO->io_used
 * says so.  ACCEPT, unless NULL, is asked about the header once it parses
 * (a file's: once its length is checked too); a stream is then read only
 * as far as the header says: a binary raster's bytes, or a plain raster's
 * samples.  On success the caller owns IMG and releases it with
 * sp_image_release(); a mapped or pread IMG still reads the file, so
 * sp_image_check() it after the last read.  On failure IMG is empty,
 * nothing is left open or mapped, and INFO->why may add a detail to the
 * status.  Returns 0, an errno value, ACCEPT's status, or SP_E_EMPTY,
 * SP_E_NOTPNM, SP_E_UNSUPPORTED, SP_E_BADHEADER, SP_E_TOOBIG,
 * SP_E_TRUNCATED, SP_E_BADRASTER, or SP_E_CHANGED (the file changed after
 * it was opened). */
sp_status sp_load_checked(const char *path, enum sp_io io,
                          sp_accept_fn *accept, void *arg,
                          struct sp_image *img, struct sp_load_info *info);

/* Bytes read from a stream and not yet used: LEN of the CAP at BUF; EOF
 * once read() said the stream ended. */
struct sp_inbuf {
    unsigned char *buf;
    size_t len, cap;
    int eof;
};

/* An input: every image of a path, or of standard input, read through
 * the one descriptor opened for it, so that a stream named by a path (a
 * FIFO, /dev/stdin, a process substitution) loses no byte between its
 * images, and a file renamed over the path between images is not read:
 * the file first opened is.  What the input must remember between images
 * lives here, never in a global: two inputs in one process never meet.
 *
 *   sp_input_open()  -> sp_input_load() the first image
 *   sp_input_more()  -> whether an image follows; then sp_input_load() it
 *   sp_input_close()
 *
 * Between images, whitespace is skipped as libnetpbm's pm_nextimage()
 * does; anything else after an image must be the next image, or its load
 * fails (SP_E_NOTPNM for bytes that are not one). */
struct sp_input {
    int fd;
    int own;                /* FD is the input's to close: not stdin */
    int file;               /* a regular file with a size: read by offset
                               (pread), never by the descriptor's position */
    int nowait;             /* opened without waiting for a FIFO's writer */
    struct sp_stamp stamp;  /* FILE: taken once, by the fstat after open;
                               every image is checked against it */
    off_t pos;              /* where the next image starts: FILE, an offset
                               in the file; else the bytes the images
                               before it took from the stream */
    unsigned images;        /* images loaded so far */
    size_t skipped;         /* whitespace bytes skipped after the last image
                               by sp_input_more() */
    struct sp_inbuf rest;   /* a stream's bytes read past the last image:
                               the next image's start */
};

/* sp_input_open: open PATH ("-" is standard input, used as it is and
 * never closed) once, for IN.  NOWAIT opens with O_NONBLOCK, then clears
 * it, so that a FIFO with no writer is not waited for: its first read
 * then finds the end (SP_E_EMPTY).  On success the caller owns IN and
 * gives it back with sp_input_close().  On failure nothing is open.
 * Returns 0 or an errno value (EISDIR for a directory). */
sp_status sp_input_open(struct sp_input *in, const char *path, int nowait);

/* sp_input_load: sp_load_checked() of IN's next image: the first after
 * sp_input_open(), else the one sp_input_more() found.  A regular file's
 * images are checked against the stamp taken at open (SP_E_CHANGED).
 * INFO->next is where the image ends, INFO->trailing_bytes what follows
 * it (a stream: what was read past it so far). */
sp_status sp_input_load(struct sp_input *in, enum sp_io io,
                        sp_accept_fn *accept, void *arg,
                        struct sp_image *img, struct sp_load_info *info);

/* sp_input_more: skip the whitespace after IN's last image (reading a
 * stream on until it ends or something else comes) and say in *MORE
 * whether anything follows it, which sp_input_load() then loads as the
 * next image (and refuses if it is not one).  IN->skipped counts the
 * bytes skipped.  Returns 0, an errno value, or SP_E_CHANGED (a regular
 * file that changed since it was opened). */
sp_status sp_input_more(struct sp_input *in, int *more);

/* sp_input_close: close what sp_input_open() opened and free what IN
 * holds; a regular file as standard input is left just past what was
 * read of it (its last image and the whitespace after), as netpbm's tools
 * leave it. */
void sp_input_close(struct sp_input *in);

/* sp_load: sp_load_checked() with no ACCEPT: every header that parses and
 * fits in memory is loaded. */
sp_status sp_load(const char *path, enum sp_io io, struct sp_image *img,
                  struct sp_load_info *info);

#endif
