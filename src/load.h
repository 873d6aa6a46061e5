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
    off_t next;             /* where a next image would start: a regular
                               file's offset just past this one; for a
                               stream, the bytes read through this one
                               (never 0): sp_load_at() takes it back */
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

/* sp_load_at: sp_load_checked() of the image that starts at START, the
 * INFO->next of the image before it in a multi-image input (0: the
 * first): in a regular file, its offset; standard input and streams go
 * on from where the last load left them (a stream's bytes read past an
 * image are kept for a load that goes on, sp_load_done() forgets them). */
sp_status sp_load_at(const char *path, off_t start, enum sp_io io,
                     sp_accept_fn *accept, void *arg, struct sp_image *img,
                     struct sp_load_info *info);

/* sp_load_done: forget what a stream's last load read past its image. */
void sp_load_done(void);

/* sp_load: sp_load_checked() with no ACCEPT: every header that parses and
 * fits in memory is loaded. */
sp_status sp_load(const char *path, enum sp_io io, struct sp_image *img,
                  struct sp_load_info *info);

#endif
