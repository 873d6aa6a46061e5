/* The filters' table (filter.h): a new filter is a row here, defined in
 * its own file. */
#include "filter.h"

#include <stdio.h>
#include <string.h>

const struct sp_filter_row *const sp_filters[] = {
    [SP_FILTER_SAMPLE] = &sp_filter_sample,
    [SP_FILTER_BOX] = &sp_filter_box,
    [SP_FILTER_AREA] = &sp_filter_area,
};
const size_t sp_nfilters = sizeof sp_filters / sizeof *sp_filters;

const char *sp_filter_name(enum sp_filter filter)
{
    return (size_t)filter < sp_nfilters ? sp_filters[filter]->name
                                        : "sample";
}

int sp_filter_named(const char *name, enum sp_filter *filter)
{
    for (size_t i = 0; i < sp_nfilters; i++)
        if (sp_filters[i]->by_factor &&
            strcmp(name, sp_filters[i]->name) == 0) {
            *filter = (enum sp_filter)i;
            return 0;
        }
    return -1;
}

void sp_filter_names(char *buf, size_t len)
{
    size_t n = 0, named = 0, all = 0;

    for (size_t i = 0; i < sp_nfilters; i++)
        all += sp_filters[i]->by_factor != 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sp_nfilters && n < len; i++)
        if (sp_filters[i]->by_factor) {
            named++;
            n += (size_t)snprintf(buf + n, len - n, "%s%s",
                                  named == 1     ? ""
                                  : named < all ? ", "
                                                : " or ",
                                  sp_filters[i]->name);
        }
}
