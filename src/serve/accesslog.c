/* The server's access log (accesslog.h). */
#include "accesslog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

/* append: PATH opened for appending, line-buffered (a line is in the
 * file when its request ends), into *F: 0 or an errno value. */
static sp_status append(const char *path, FILE **f)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    sp_status st;

    if (fd < 0)
        return errno;
    if ((*f = fdopen(fd, "a")) == NULL) {
        st = errno;
        close(fd);
        return st;
    }
    setvbuf(*f, NULL, _IOLBF, 0);
    return SP_OK;
}

sp_status sp_accesslog_open(struct sp_accesslog *log, const char *path,
                            FILE *stream)
{
    FILE *f = stream;
    sp_status st;

    if (path != NULL && (st = append(path, &f)) != SP_OK)
        return st;
    pthread_mutex_init(&log->mu, NULL);
    log->f = f;
    log->path = path;
    return SP_OK;
}

void sp_accesslog_line(struct sp_accesslog *log, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&log->mu);
    if (log->f != NULL) {
        va_start(ap, fmt);
        vfprintf(log->f, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&log->mu);
}

sp_status sp_accesslog_reopen(struct sp_accesslog *log)
{
    FILE *f, *old;
    sp_status st;

    if (log->path == NULL)
        return SP_OK;
    if ((st = append(log->path, &f)) != SP_OK)
        return st;
    pthread_mutex_lock(&log->mu);
    old = log->f;
    log->f = f;
    pthread_mutex_unlock(&log->mu);
    fclose(old);
    return SP_OK;
}

void sp_accesslog_close(struct sp_accesslog *log)
{
    if (log->path != NULL)
        fclose(log->f);
    pthread_mutex_destroy(&log->mu);
}
