#include "pending.h"

#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>


enum { FREE, CLAIMED, NAMED };

/* SP_THREADS_MAX: the outputs a batch writes at once at most. */
#define SLOTS 1024

static struct slot {
    atomic_int state;
    int dir;
    char name[NAME_MAX + 1];
} slots[SLOTS];

int sp_outfile_discard_pending(void)
{
    int any = 0;

    for (int i = 0; i < SLOTS; i++) {
        int state = atomic_load(&slots[i].state);

        if (state == NAMED)
            (void)unlinkat(slots[i].dir, slots[i].name, 0);
        any |= state != FREE;
    }
    return any;
}

int sp_pending_claim(void)
{
    for (int i = 0; i < SLOTS; i++) {
        int free_slot = FREE;

        if (atomic_compare_exchange_strong(&slots[i].state, &free_slot,
                                           CLAIMED))
            return i + 1;
    }
    return 0;
}

void sp_pending_name(int slot, int dir, const char *name)
{
    if (slot == 0)
        return;
    slots[slot - 1].dir = dir;
    snprintf(slots[slot - 1].name, sizeof slots[slot - 1].name, "%s", name);
    atomic_store(&slots[slot - 1].state, NAMED);
}

void sp_pending_unname(int slot)
{
    if (slot != 0)
        atomic_store(&slots[slot - 1].state, CLAIMED);
}

int sp_pending_free(int slot)
{
    if (slot != 0)
        atomic_store(&slots[slot - 1].state, FREE);
    return 0;
}
