/* load.h: the loader's interface is the input's (input.h): an input
 * opened once, its images loaded one by one by a load path, the row
 * source (source.h) reading their rows. */
#ifndef SP_LOAD_H
#define SP_LOAD_H

#include "input.h"

#endif
