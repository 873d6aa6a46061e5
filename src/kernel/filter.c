/* The filters' table (filter.h): a new filter is a row here, defined in
 * its own file. */
#include "filter.h"

#include <string.h>

const struct sp_filter_row *const sp_filters[] = {
    &sp_filter_sample,
    &sp_filter_box,
    &sp_filter_area,
};
const size_t sp_nfilters = sizeof sp_filters / sizeof *sp_filters;

const struct sp_filter_row *sp_filter_named(const char *name)
{
    for (size_t i = 0; i < sp_nfilters; i++)
        if (sp_filters[i]->by_factor &&
            strcmp(name, sp_filters[i]->name) == 0)
            return sp_filters[i];
    return NULL;
}
