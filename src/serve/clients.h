/* clients.h: --max-per-client: the requests in flight from each client
 * address, so that one client cannot take every worker and queue slot.
 * A connection carries one request at a time (HTTP/1.1 without
 * pipelining), so this caps a client's busy connections; its idle
 * keep-alive ones cost a descriptor, capped by --max-connections.  Past
 * the cap the server answers 429 (docs/serve.md). */
#ifndef SP_SERVE_CLIENTS_H
#define SP_SERVE_CLIENTS_H

#include <pthread.h>
#include <stddef.h>
#include <sys/socket.h>

#include "status.h"

/* A client's address as a key: its family and the address's bytes (16
 * for IPv6, the first 4 for IPv4); the port is not part of it. */
struct sp_client_key {
    sa_family_t family;
    unsigned char addr[16];
};

/* The ledger: an open-addressed table of CAP slots (a power of two, at
 * least four times the requests that can be in flight at once), each a
 * key and its count; a slot whose count falls to 0 is kept as a tombstone
 * until the table is rebuilt. */
struct sp_clients {
    pthread_mutex_t mu;
    unsigned limit;          /* requests in flight a client; 0: none */
    size_t cap, used;        /* slots, and slots ever taken */
    struct sp_client_slot {
        struct sp_client_key key;
        unsigned count;
        int taken;
    } *slots;
};

/* sp_clients_init: a ledger of LIMIT requests a client (0: no limit, and
 * nothing allocated) for up to MOST requests in flight in all.  Returns 0
 * or ENOMEM. */
sp_status sp_clients_init(struct sp_clients *c, unsigned limit, size_t most);
void sp_clients_destroy(struct sp_clients *c);

/* sp_client_key: the key of the address SA (NULL, or a family other than
 * IPv4 and IPv6, such as a Unix socket's: 0 and no key: not counted). */
int sp_client_key(const struct sockaddr *sa, struct sp_client_key *key);

/* sp_clients_enter: one more request from KEY: 0; EAGAIN when KEY has
 * LIMIT in flight already (not counted: no leave follows). */
sp_status sp_clients_enter(struct sp_clients *c,
                           const struct sp_client_key *key);

/* sp_clients_leave: a request from KEY, entered before, done. */
void sp_clients_leave(struct sp_clients *c, const struct sp_client_key *key);

#endif
