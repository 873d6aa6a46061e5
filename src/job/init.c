#include "init.h"

#include "guard.h"
#include "header.h"

sp_status sp_lib_init(void)
{
    sp_header_init();
    return sp_guard_init();
}
