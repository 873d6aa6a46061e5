/* The command line's registry of the outputs out of sight (pending.h's
 * hooks), for its signal handler: a table of slots, lock-free, an output
 * a slot.  A slot's name and directory are set while it is only claimed,
 * and read only while it is named.  A hook's slot is 1 + its index. */
#include "cli_pending.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "pending.h"

enum { FREE, CLAIMED, NAMED };

/* SP_THREADS_MAX: the outputs a batch writes at once at most. */
#define SLOTS 1024

static struct slot {
    atomic_int state;
    int dir;
    char name[NAME_MAX + 1];
} slots[SLOTS];

int sp_cli_discard_pending(void)
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

static int claim(void)
{
    for (int i = 0; i < SLOTS; i++) {
        int free_slot = FREE;

        if (atomic_compare_exchange_strong(&slots[i].state, &free_slot,
                                           CLAIMED))
            return i + 1;
    }
    return 0;
}

static void name(int slot, int dir, const char *text)
{
    slots[slot - 1].dir = dir;
    snprintf(slots[slot - 1].name, sizeof slots[slot - 1].name, "%s", text);
    atomic_store(&slots[slot - 1].state, NAMED);
}

static void unname(int slot)
{
    atomic_store(&slots[slot - 1].state, CLAIMED);
}

static void release(int slot)
{
    atomic_store(&slots[slot - 1].state, FREE);
}

void sp_cli_pending_install(void)
{
    static const struct sp_pending_hooks hooks = {claim, name, unname,
                                                  release};

    sp_pending_hook(&hooks);
}
