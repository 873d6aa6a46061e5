/* input.h: an input: every image of a path, a descriptor or a stream, with
 * an explicit life, all its state in the object.
 *
 *   sp_input_open()    a path ("-": standard input), once
 *   sp_input_next()    the next image: header parsed, checked, offered to
 *                      the caller (sp_accept_fn), a load path picked, its
 *                      raster loaded or attached; the view in IN->img
 *   sp_source_open()   its rows (source.h: the row source)
 *   sp_input_release() the image given back (sp_source_release)
 *   sp_input_more()    whether an image follows; then sp_input_next()
 *   sp_input_close()
 *
 * Each load path (read, mmap, pread, stream) is one file, input_<name>.c,
 * behind one table of operations (input_path.h); this file and input.c
 * never ask which one an image took.
 *
 * A regular file's size is taken once, with its stamp, by the fstat()
 * after open; every header is parsed from a stream that ends at that size,
 * and every check (the raster's length, the mapping's, the ends of the
 * reads) is made against it.  The header is checked, and offered to the
 * caller, before any raster memory is allocated or mapped and before a
 * raster byte is read.  Binary rasters (P4-P7) are used as they are: read
 * into one buffer, used in place inside a mapping, or read by rows as they
 * are wanted.  Plain rasters (P1-P3) are decoded into a buffer, so they
 * always take the read path; from a stream as they arrive.  A file that
 * changes while it is loaded (its stamp differs afterwards) is
 * SP_E_CHANGED.
 *
 * Every image of an input is read through the one descriptor opened for
 * it, so that a stream named by a path (a FIFO, /dev/stdin, a process
 * substitution) loses no byte between its images, and a file renamed over
 * the path between images is not read: the file first opened is.  Between
 * images, whitespace is skipped as libnetpbm's pm_nextimage() does;
 * anything else after an image must be the next image, or its load fails
 * (SP_E_NOTPNM for bytes that are not one).  Two inputs in one process
 * never meet. */
#ifndef SP_INPUT_H
#define SP_INPUT_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "header.h"
#include "image.h"
#include "input_buffer.h"
#include "input_types.h"
#include "meta.h"
#include "status.h"

struct sp_input_path;

/* A source: where an input's bytes are.
 *   PATH    a file opened by name ("-": standard input, never closed);
 *   FD      the caller's descriptor, never closed: a regular file is read
 *           by offset from its current position, which the close leaves
 *           just past what was read (as standard input's); anything else
 *           is read as a stream from where it stands;
 *   MEMORY  LEN bytes at DATA, the caller's, which must outlive the
 *           input: read in place, as a regular file of that size that
 *           never changes (the memory path);
 *   IMAGE   an image already decoded, IMAGE with its metadata META (NULL:
 *           none), the caller's, which must outlive the input: its one
 *           image, its rows read in place (the memory path), no decode.
 * NAME, unless NULL, is what messages call it; else sp_src_name()'s
 * default.  Made by sp_src_path(), sp_src_fd(), sp_src_memory(),
 * sp_src_image(). */
enum sp_src_kind { SP_SRC_PATH, SP_SRC_FD, SP_SRC_MEMORY, SP_SRC_IMAGE };

struct sp_src {
    enum sp_src_kind kind;
    const char *path;           /* PATH */
    int fd;                     /* FD */
    const unsigned char *data;  /* MEMORY: LEN bytes */
    size_t len;
    const struct sp_image *image;  /* IMAGE, with META */
    const struct sp_meta *meta;
    const char *name;           /* what messages call it; NULL: default */
    char label[16];             /* FD's default name, "fd N" */
};

/* sp_src_path, sp_src_fd, sp_src_memory, sp_src_image: a source of
 * each kind, named by default (NAME NULL). */
struct sp_src sp_src_path(const char *path);
struct sp_src sp_src_fd(int fd);
struct sp_src sp_src_memory(const void *data, size_t len);
struct sp_src sp_src_image(const struct sp_image *image,
                           const struct sp_meta *meta);

/* sp_src_name: what messages call S: its NAME if set, else its path, "fd
 * N", "memory" or "image".  Valid as long as S is. */
const char *sp_src_name(const struct sp_src *s);

/* An input.  The caller reads IMG (the image loaded), META, POS, IMAGES
 * and SKIPPED; the rest is the input's and its load path's. */
struct sp_input {
    int fd;
    int own;                /* FD is the input's to close: not stdin */
    int file;               /* a regular file with a size: read by offset
                               (pread), never by the descriptor's position */
    int nowait;             /* opened without waiting for a FIFO's writer */
    const unsigned char *mem;  /* a memory source's bytes (FILE set, the
                                  size STAMP.SIZE), read in place; else
                                  NULL */
    const struct sp_image *given;      /* an image source's image and */
    const struct sp_meta *given_meta;  /* metadata (the caller's), its one
                                          image; else NULL */
    struct sp_stamp stamp;  /* FILE: taken once, by the fstat after open;
                               every image is checked against it */
    off_t pos;              /* where the next image starts: FILE, an offset
                               in the file; else the bytes the images
                               before it took from the stream */
    unsigned images;        /* images loaded so far */
    const struct sp_codec *codec;  /* the last one's */
    size_t skipped;         /* whitespace bytes skipped after the last image
                               by sp_input_more() */
    struct sp_reuse *reuse;  /* the caller's buffer to reuse, or NULL */

    /* The image loaded: its view, and the path that holds its raster
     * (NULL: none) with what that path keeps of it. */
    struct sp_image img;
    struct sp_meta meta;    /* its metadata (meta.h: a JPEG's or PNG's
                               profile and EXIF), the input's until the
                               image is released */
    const struct sp_input_path *path;
    struct {
        void *p;            /* read, stream: the buffer; mmap: the mapping */
        size_t len;         /* its bytes */
        size_t done;        /* mmap: bytes at P given back */
        off_t at;           /* pread: where the raster starts in FD */
        size_t grain;       /* mmap: pages go back in blocks ending on
                               multiples of this (a power of two) */
    } held;
    struct sp_inbuf rest;   /* a stream's bytes read past the last image:
                               the next image's start */
};

/* sp_input_open: open SRC once, for IN: a path is opened (standard
 * input, "-", is used as it is), a descriptor used as it stands, bytes
 * in memory read in place, an image source's image used as it is.
 * NOWAIT opens a path with O_NONBLOCK, then
 * clears it, so that a FIFO with no writer is not waited for: its first
 * read then finds the end (SP_E_EMPTY).  REUSE, unless NULL, is the
 * caller's buffer that a raster read into memory reuses
 * (input_buffer.h): it must outlive IN; NULL has each raster malloc'd and
 * freed.  SRC is not kept (a memory source's bytes are, as an image
 * source's image and metadata, and must outlive IN).  On success the caller owns IN and
 * gives it back with sp_input_close().  On failure nothing is open.
 * Returns 0 or an errno value (EISDIR for a directory; EINVAL for an
 * empty memory source or image, or a descriptor below 0). */
sp_status sp_input_open(struct sp_input *in, const struct sp_src *src,
                        int nowait, struct sp_reuse *reuse);

/* sp_input_next: load IN's next image (the first after sp_input_open(),
 * else the one sp_input_more() found) into IN->img, with IO as the load
 * path; AUTO preads a regular file (the measurements behind the rule are
 * in the README).  A pipe, FIFO, terminal, character device, empty-looking
 * or unmappable file, and a plain (P1-P3) raster, is read instead, and
 * INFO->io_used says so.  ACCEPT, unless NULL, is asked about the header
 * once it parses (a file's: once its length is checked too); a stream is
 * then read only as far as the header says.  A regular file's images are
 * checked against the stamp taken at open (SP_E_CHANGED).  The image is
 * IN's until sp_input_release() (or the next sp_input_next(), or the
 * close); a mapped or pread image still reads the file, so check it
 * (sp_source_check) after the last read.  On failure no image is held and
 * INFO->why may add a detail.  Returns 0, an errno value, ACCEPT's status,
 * or SP_E_EMPTY, SP_E_NOTPNM, SP_E_UNSUPPORTED, SP_E_BADHEADER,
 * SP_E_TOOBIG, SP_E_TRUNCATED, SP_E_BADRASTER, or SP_E_CHANGED. */
sp_status sp_input_next(struct sp_input *in, enum sp_io io,
                        sp_accept_fn *accept, void *arg,
                        struct sp_load_info *info);

/* sp_input_release: give back IN's image (free or keep its buffer,
 * madvise(MADV_DONTNEED) + munmap its mapping), IN->img left empty.  Safe
 * with no image.  Returns 0 or munmap's errno. */
sp_status sp_input_release(struct sp_input *in);

/* sp_input_more: skip the whitespace after IN's last image (reading a
 * stream on until it ends or something else comes) and say in *MORE
 * whether anything follows it, which sp_input_next() then loads as the
 * next image (and refuses if it is not one).  IN->skipped counts the
 * bytes skipped.  Returns 0, an errno value, or SP_E_CHANGED (a regular
 * file that changed since it was opened). */
sp_status sp_input_more(struct sp_input *in, int *more);

/* sp_input_ends_here: whether IN's images end before a byte NEXT that
 * follows its last image: after a JPEG or PNG, a byte that begins no
 * image (not 'P', 0xff or 0x89) starts data that djpeg, pngtopam and
 * vips ignore too, such as a phone's motion photo's video, and is
 * skipped to the end, counted in IN->skipped.  After a PNM image
 * anything but whitespace is the next image or an error. */
int sp_input_ends_here(const struct sp_input *in, unsigned char next);

/* sp_input_close: release IN's image and close what sp_input_open()
 * opened; a regular file as standard input is left just past what was
 * read of it (its last image and the whitespace after), as netpbm's tools
 * leave it. */
void sp_input_close(struct sp_input *in);

/* sp_load_checked: the first image of PATH, by IO, as an image of its own:
 * a raster in memory (read, a stream, a plain raster) becomes IMG's
 * (SP_BACKING_MALLOC); a mapped or pread one stays its input's, which IMG
 * then owns (SP_BACKING_OWNED: base and base_len are the mapping, or
 * NULL); sp_image_release() gives either back.  On failure IMG is empty.
 * For the tests and the tools: the program reads its inputs through
 * sp_input_next(). */
sp_status sp_load_checked(const char *path, enum sp_io io,
                          sp_accept_fn *accept, void *arg,
                          struct sp_image *img, struct sp_load_info *info);

/* sp_load: sp_load_checked() with no ACCEPT. */
sp_status sp_load(const char *path, enum sp_io io, struct sp_image *img,
                  struct sp_load_info *info);

#endif
