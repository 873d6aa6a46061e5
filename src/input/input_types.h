/* input_types.h: the types an input's interface (input.h) and its load
 * paths' table (input_path.h) share: the paths' names, what a load tells
 * of an image, the caller's verdict on a header, a file's stamp, a
 * stream's bytes read ahead.  Apart, so that a path's table needs no more
 * of the input than its name (struct sp_input). */
#ifndef SP_INPUT_TYPES_H
#define SP_INPUT_TYPES_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "header.h"
#include "status.h"

/* The load paths: PREAD leaves the raster in the file, to be read as the
 * rows are wanted into small buffers; AUTO picks by the input (see
 * sp_input_next).  A stream always takes its own path, reported READ;
 * bytes in memory (a memory source) always theirs, reported MEMORY,
 * which is never asked for. */
enum sp_io { SP_IO_READ, SP_IO_MMAP, SP_IO_PREAD, SP_IO_AUTO, SP_IO_MEMORY };

/* sp_io_name: "read", "mmap", "pread", "auto" or "memory". */
const char *sp_io_name(enum sp_io io);

/* A codec an image may come in: a row of decode.h's registry. */
struct sp_codec;

struct sp_load_info {
    enum sp_io io_used;     /* READ when mmap or pread was asked but not
                               possible */
    const struct sp_codec *codec;  /* what the input's bytes are
                                      (decode.h); NULL when not known (the
                                      load failed before the magic was
                                      read, or it is no format read) */
    char magic;             /* '1' to '7' (P1 to P7); of a JPEG or PNG, the
                               PNM type it is decoded to */
    off_t raster_offset;    /* where the raster starts, as NEXT is
                               counted; a JPEG's or PNG's, whose raster is
                               not in the input: where the image starts */
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
 * on, or a status for the load to return, with a detail in WHY
 * (SP_WHY_MAX bytes) if it likes.  It may set hdr->shrink, up to
 * hdr->shrink_max (header.h: shrink-on-load), and hdr->orient to
 * hdr->orientation (the picture turned upright); nothing else.  ARG is
 * the caller's. */
typedef sp_status sp_accept_fn(struct sp_header *hdr, void *arg,
                               char *why);

/* A file's identity and last change, from one fstat(): two stamps of the
 * same open file differ once it was written, resized or had its inode
 * changed in between (tar's test of a file that changed as it was read).
 * Times in nanoseconds; a change within the file system's timestamp
 * granularity of the first stamp, that keeps the size, goes unseen.  A
 * change of the link count moves the ctime too, and says nothing of the
 * bytes (the file was renamed over, or linked): then the ctime is not
 * compared, so that a file replaced by rename while it is read is still
 * read, unchanged, through the descriptor held. */
struct sp_stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    long long mtime_ns;
    long long ctime_ns;
    nlink_t nlink;
};

/* sp_stamp_check: fstat FD (through the sys seam) and compare it with
 * WAS: the one comparison of stamps (input_bytes.c).  Returns 0 when they match,
 * SP_E_CHANGED when not, or fstat's errno value. */
sp_status sp_stamp_check(int fd, const struct sp_stamp *was);

/* Bytes read from a stream and not yet used: LEN of the CAP at BUF; EOF
 * once read() said the stream ended. */
struct sp_inbuf {
    unsigned char *buf;
    size_t len, cap;
    int eof;
};

#endif
