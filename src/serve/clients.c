/* --max-per-client: the requests in flight by client address
 * (clients.h). */
#include "clients.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

sp_status sp_clients_init(struct sp_clients *c, unsigned limit, size_t most)
{
    memset(c, 0, sizeof *c);
    c->limit = limit;
    if (limit == 0)
        return SP_OK;
    c->cap = 16;
    while (c->cap < 4 * most)
        c->cap *= 2;
    c->slots = calloc(c->cap, sizeof *c->slots);
    if (c->slots == NULL)
        return ENOMEM;
    pthread_mutex_init(&c->mu, NULL);
    return SP_OK;
}

void sp_clients_destroy(struct sp_clients *c)
{
    if (c->slots == NULL)
        return;
    free(c->slots);
    c->slots = NULL;
    pthread_mutex_destroy(&c->mu);
}

int sp_client_key(const struct sockaddr *sa, struct sp_client_key *key)
{
    memset(key, 0, sizeof *key);
    if (sa == NULL)
        return 0;
    key->family = sa->sa_family;
    if (sa->sa_family == AF_INET)
        memcpy(key->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    else if (sa->sa_family == AF_INET6)
        memcpy(key->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    else
        return 0;
    return 1;
}

/* slot_of: KEY's slot in C, or the first free one of its probe (NULL
 * when the table is full: a caller past its bound). */
static struct sp_client_slot *slot_of(struct sp_clients *c,
                                      const struct sp_client_key *key)
{
    uint64_t h = 0xcbf29ce484222325u ^ key->family;
    struct sp_client_slot *free_slot = NULL;

    for (size_t i = 0; i < sizeof key->addr; i++)
        h = (h ^ key->addr[i]) * 0x100000001b3u;
    for (size_t n = 0, i = h & (c->cap - 1); n < c->cap;
         n++, i = (i + 1) & (c->cap - 1)) {
        struct sp_client_slot *s = &c->slots[i];

        if (!s->taken)
            return free_slot != NULL ? free_slot : s;
        if (memcmp(&s->key, key, sizeof *key) == 0)
            return s;
        if (s->count == 0 && free_slot == NULL)
            free_slot = s;
    }
    return free_slot;
}

/* rebuild: C's table with its tombstones dropped, once the slots ever
 * taken fill half of it, so that a probe always ends at a free slot (the
 * keys in flight fill at most half: init's bound). */
static void rebuild(struct sp_clients *c)
{
    struct sp_client_slot *old = c->slots, *fresh;

    if (c->used < c->cap / 2 ||
        (fresh = calloc(c->cap, sizeof *fresh)) == NULL)
        return;  /* on ENOMEM the probe still ends: tombstones are reused */
    c->slots = fresh;
    c->used = 0;
    for (size_t i = 0; i < c->cap; i++)
        if (old[i].taken && old[i].count > 0) {
            *slot_of(c, &old[i].key) = old[i];
            c->used++;
        }
    free(old);
}

sp_status sp_clients_enter(struct sp_clients *c,
                           const struct sp_client_key *key)
{
    struct sp_client_slot *s;
    sp_status st = SP_OK;

    if (c->limit == 0)
        return SP_OK;
    pthread_mutex_lock(&c->mu);
    rebuild(c);
    s = slot_of(c, key);
    if (s == NULL || (s->taken && s->count >= c->limit &&
                      memcmp(&s->key, key, sizeof *key) == 0))
        st = EAGAIN;
    else {
        if (memcmp(&s->key, key, sizeof *key) != 0 || !s->taken) {
            c->used += !s->taken;
            s->key = *key;
            s->taken = 1;
            s->count = 0;
        }
        s->count++;
    }
    pthread_mutex_unlock(&c->mu);
    return st;
}

void sp_clients_leave(struct sp_clients *c, const struct sp_client_key *key)
{
    struct sp_client_slot *s;

    if (c->limit == 0)
        return;
    pthread_mutex_lock(&c->mu);
    s = slot_of(c, key);
    if (s != NULL && s->taken && s->count > 0 &&
        memcmp(&s->key, key, sizeof *key) == 0)
        s->count--;
    pthread_mutex_unlock(&c->mu);
}
