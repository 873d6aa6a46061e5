#include "pending.h"

#include <stdatomic.h>
#include <stddef.h>

/* The program's hooks, NULL in a library host. */
static const struct sp_pending_hooks *_Atomic hooks;

void sp_pending_hook(const struct sp_pending_hooks *h)
{
    atomic_store(&hooks, h);
}

int sp_pending_claim(void)
{
    const struct sp_pending_hooks *h = atomic_load(&hooks);

    return h != NULL ? h->claim() : 0;
}

void sp_pending_name(int slot, int dir, const char *name)
{
    const struct sp_pending_hooks *h = atomic_load(&hooks);

    if (h != NULL && slot != 0)
        h->name(slot, dir, name);
}

void sp_pending_unname(int slot)
{
    const struct sp_pending_hooks *h = atomic_load(&hooks);

    if (h != NULL && slot != 0)
        h->unname(slot);
}

int sp_pending_free(int slot)
{
    const struct sp_pending_hooks *h = atomic_load(&hooks);

    if (h != NULL && slot != 0)
        h->release(slot);
    return 0;
}
