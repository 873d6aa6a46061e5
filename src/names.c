#include "names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

sp_status sp_names_add(struct sp_names *l, const char *name)
{
    char *copy;

    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        char **grown = realloc(l->name, cap * sizeof *grown);

        if (grown == NULL)
            return ENOMEM;
        l->name = grown;
        l->cap = cap;
    }
    copy = strdup(name);
    if (copy == NULL)
        return ENOMEM;
    l->name[l->n++] = copy;
    return SP_OK;
}

sp_status sp_names_read(FILE *f, int sep, struct sp_names *l)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    sp_status st = SP_OK;

    errno = 0;
    while (st == SP_OK && (got = getdelim(&line, &cap, sep, f)) >= 0) {
        if (got > 0 && line[got - 1] == (char)sep)
            line[--got] = '\0';
        if (got > 0)
            st = sp_names_add(l, line);
        errno = 0;
    }
    if (st == SP_OK && ferror(f))
        st = errno ? errno : EIO;
    free(line);
    return st;
}

void sp_names_free(struct sp_names *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->name[i]);
    free(l->name);
    *l = (struct sp_names){0};
}

/* put: N bytes of S at *AT in OUT (LEN bytes), leaving room for the
 * terminating NUL; -1 when they do not fit. */
static int put(char *out, size_t len, size_t *at, const char *s, size_t n)
{
    if (n >= len - *at)
        return -1;
    memcpy(out + *at, s, n);
    *at += n;
    return 0;
}

sp_status sp_batch_name(const char *target, int dir, const char *format,
                        const char *in, char *out, size_t len)
{
    const char *slash = strrchr(in, '/');
    const char *base = slash != NULL ? slash + 1 : in;
    const char *dot = strrchr(base, '.');
    size_t stem = dot != NULL && dot != base ? (size_t)(dot - base)
                                             : strlen(base);
    size_t at = 0, n = strlen(target);
    int bad = 0;

    if (dir) {
        bad |= put(out, len, &at, target, n);
        if (n > 0 && target[n - 1] != '/')
            bad |= put(out, len, &at, "/", 1);
        if (format == NULL) {
            bad |= put(out, len, &at, base, strlen(base));
        } else {
            bad |= put(out, len, &at, base, stem);
            bad |= put(out, len, &at, ".", 1);
            bad |= put(out, len, &at, format, strlen(format));
        }
    } else {
        for (const char *p = target; *p != '\0' && !bad; p++) {
            if (p[0] == '%' && p[1] == 's')
                bad |= put(out, len, &at, base, stem), p++;
            else if (p[0] == '%' && p[1] == '%')
                bad |= put(out, len, &at, "%", 1), p++;
            else
                bad |= put(out, len, &at, p, 1);
        }
    }
    if (bad)
        return ENAMETOOLONG;
    out[at] = '\0';
    return SP_OK;
}

int sp_pattern_ok(const char *target)
{
    int has = 0;

    for (const char *p = target; *p != '\0'; p++) {
        if (*p != '%')
            continue;
        if (p[1] == 's')
            has = 1;
        else if (p[1] != '%')
            return 0;
        p++;
    }
    return has;
}

static char *const *sorted_names;

static int by_name(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = strcmp(sorted_names[i], sorted_names[j]);

    return c != 0 ? c : (i > j) - (i < j);
}

int sp_names_clash(char *const *names, size_t n, size_t *first,
                   size_t *second)
{
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    int found = 0;

    if (order == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    sorted_names = names;  /* qsort has no argument for its comparison */
    qsort(order, n, sizeof *order, by_name);
    for (size_t k = 1; k < n; k++) {
        size_t a = order[k - 1], b = order[k];

        if (strcmp(names[a], names[b]) != 0 || (found && b >= *second))
            continue;
        *first = a;
        *second = b;
        found = 1;
    }
    free(order);
    return found;
}
