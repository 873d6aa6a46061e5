/* load.h: load a PNM image with read() or mmap(), or open it for pread()
 * of its rows, behind one interface.
 *
 *   sp_load()          -> an sp_image whose pixels are the raster, or
 *                         whose rows sp_image_read_rows() reads (pread)
 *   sp_image_release() -> free(), madvise(MADV_DONTNEED) + munmap(), or
 *                         close()
 *
 * The header is parsed and checked against the file's length before any
 * raster memory is allocated or mapped.  Binary rasters (P5/P6) are used
 * as they are: read into one malloc'd buffer, or used in place inside the
 * mapping at the header's offset.  Plain rasters (P2/P3) are decoded into
 * a malloc'd buffer, so they always take the read path. */
#ifndef SP_LOAD_H
#define SP_LOAD_H

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
    char magic;             /* '2', '3', '5' or '6' */
    off_t raster_offset;
    size_t input_bytes;     /* the file's size, or the bytes of the stream */
    size_t trailing_bytes;  /* bytes after the first image, ignored */
    int trailing_image;     /* they start with a PNM magic number */
    char why[SP_WHY_MAX];   /* detail of an error, possibly empty */
};

/* sp_load: load the image at PATH ("-" is standard input) into IMG, with
 * IO as the load path; AUTO preads a regular file and reads anything else
 * (the measurements behind the rule are in the README).  A pipe, FIFO,
 * terminal, character device, empty-looking or unmappable file, and a
 * plain (P2/P3) raster, is read whole instead, and INFO->io_used says
 * so.  On success the caller owns IMG and releases it with
 * sp_image_release(); on failure IMG is empty, nothing is left open or
 * mapped, and INFO->why may add a detail to the status.  Returns 0, an
 * errno value, or SP_E_EMPTY, SP_E_NOTPNM, SP_E_UNSUPPORTED,
 * SP_E_BADHEADER, SP_E_TOOBIG, SP_E_TRUNCATED, SP_E_BADRASTER, or
 * SP_E_CHANGED (the file shrank while it was being loaded). */
sp_status sp_load(const char *path, enum sp_io io, struct sp_image *img,
                  struct sp_load_info *info);

/* The two backends, for the loader only: FD is open on a regular file of
 * FILE_SIZE bytes whose header HDR is already checked against it. */
sp_status sp_load_read(int fd, const struct sp_header *hdr,
                       struct sp_image *img);
sp_status sp_load_mmap(int fd, size_t file_size, const struct sp_header *hdr,
                       struct sp_image *img);
sp_status sp_load_pread(int fd, const struct sp_header *hdr,
                         struct sp_image *img);

/* sp_read_full: read LEN bytes from FD into BUF, looping on short reads and
 * EINTR.  *GOT gets the bytes read (less than LEN only at end of file).
 * Returns 0 or an errno value. */
sp_status sp_read_full(int fd, void *buf, size_t len, size_t *got);

/* sp_image_adopt: make IMG own BASE (BASE_LEN bytes, released by its
 * BACKING) and view the raster at RASTER inside it, laid out as HDR says. */
void sp_image_adopt(struct sp_image *img, enum sp_backing backing, void *base,
                    size_t base_len, const struct sp_header *hdr,
                    unsigned char *raster);

#endif
