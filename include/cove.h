/* Cove C API.
 *
 * Every function returns a cove_status from the one status table
 * (cove/status_table.h); none throws or aborts. After an error,
 * cove_last_error() describes it, naming the bad argument or value.
 *
 * Regions are given as ndim, start[ndim], count[ndim] in the variable's
 * global index space; buffers hold exactly the region in `layout` ("C",
 * "F" or a permutation such as "P2,0,1"; NULL means "C"). Data types are
 * numpy-style names ("<f8", "f4", "int32", "|V12").
 *
 * Ownership: handles are created by cove_connect / cove_server_start and
 * freed by cove_disconnect / cove_server_stop. Strings returned are owned
 * by the library. Buffers are used only during the call, except put_local
 * buffers, which must stay valid until released or until disconnect.
 * Blocking: every call blocks until done; gets wait as their timeout says
 * (0: answer at once, <0: wait until covered, >0: wait that many ms).
 * Thread-safety: a client or server handle may be used from several
 * threads at once; cove_last_error() is per thread. */
#ifndef COVE_H
#define COVE_H

#include <cove/export.hpp>
#include <cove/status_table.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cove_status {
#define COVE_X(c_name, cpp_name, value, text) c_name = value,
  COVE_STATUS_TABLE(COVE_X)
#undef COVE_X
} cove_status;

/* One-line description of a status, e.g. "invalid argument";
 * "unknown status code" for a value outside the table. */
COVE_EXPORT const char* cove_strerror(cove_status status);
/* The status's name without prefix, e.g. "INVALID_ARGUMENT"; "UNKNOWN" outside the table. */
COVE_EXPORT const char* cove_status_name(cove_status status);
/* The message of this thread's last failed call ("" if none). Valid until
 * this thread's next Cove call. */
COVE_EXPORT const char* cove_last_error(void);

typedef struct cove_server cove_server_t;
typedef struct cove_client cove_client_t;

/* A staging server inside this process. transport: "ucx" or "inproc://NAME".
 * memory_budget in bytes (0: no limit); max_versions per variable (0: all). */
COVE_EXPORT cove_status cove_server_start(const char* transport, uint64_t memory_budget, int max_versions,
                                          cove_server_t** server);
/* The address clients connect to; valid until cove_server_stop. */
COVE_EXPORT const char* cove_server_address(const cove_server_t* server);
/* Stops the server and frees the handle (NULL is a no-op). */
COVE_EXPORT cove_status cove_server_stop(cove_server_t* server);

/* target: a connection file, server addresses separated by commas, or NULL
 * / "" for the COVE_CONNECT environment variable. */
COVE_EXPORT cove_status cove_connect(const char* target, int64_t timeout_ms, cove_client_t** client);
/* A collective connect in any language's MPI binding (Fortran's
 * cove_connect_comm is built on it; C and C++ have cove::connect(MPI_Comm)
 * in <cove/mpi.hpp>): one rank resolves the target into a ticket, which
 * holds the servers' addresses and the group's secret (broadcast it within
 * the job only), and every rank connects with the ticket's bytes, taking a
 * member that does not answer within 2 s for dead where the target was a
 * connection file. cove_connect_ticket waits up to timeout_ms for the
 * connection file, writes the ticket (no terminating NUL) into `ticket`
 * when it fits in `capacity` bytes, and sets *size to its length:
 * COVE_INVALID_ARGUMENT when it does not fit (*size says how much to give;
 * capacity 0 asks only that). cove_connect_with_ticket: as cove_connect;
 * COVE_INVALID_ARGUMENT for bytes that are not a ticket. */
COVE_EXPORT cove_status cove_connect_ticket(const char* target, int64_t timeout_ms, char* ticket, size_t capacity,
                                            size_t* size);
COVE_EXPORT cove_status cove_connect_with_ticket(const char* ticket, size_t size, int64_t timeout_ms,
                                                 cove_client_t** client);
/* Releases this client's put_local pieces and frees the handle (NULL is a
 * no-op). Calls in flight on other threads are waited for (a get waits as
 * its timeout says); calls that begin meanwhile fail with
 * COVE_INVALID_ARGUMENT. Once it returns, the handle must not be used. */
COVE_EXPORT cove_status cove_disconnect(cove_client_t* client);

/* shape: ndim extents of the global domain [0, shape), or NULL for none. */
COVE_EXPORT cove_status cove_define(cove_client_t* client, const char* name, const char* dtype, int ndim,
                                    const int64_t* shape);
/* cove_define, also setting where layouts are reorganized for this variable
 * (cove/reorg.hpp): reorg is "rad", "rasar", "rasia", "sahr" or NULL (the
 * server's); layouts lists the layouts RASIA prepares, separated by commas
 * ("F,P2,0,1"), or NULL (the server's). */
COVE_EXPORT cove_status cove_define_reorg(cove_client_t* client, const char* name, const char* dtype, int ndim,
                                          const int64_t* shape, const char* reorg, const char* layouts);
/* cove_define with a fill value: `fill_bytes` (the dtype's size) bytes that
 * the cells of a sealed version no put covered read as (fill NULL: none).
 * COVE_INVALID_ARGUMENT, naming the variable, for another size or a fill
 * value other than the one the variable has. */
COVE_EXPORT cove_status cove_define_fill(cove_client_t* client, const char* name, const char* dtype, int ndim,
                                         const int64_t* shape, const void* fill, size_t fill_bytes);
/* Seals a version on every server (cove::Client::seal): gets of it never
 * wait (uncovered cells read as the fill value, or COVE_NOT_FOUND without
 * one), puts into it fail with COVE_INVALID_ARGUMENT. Sealing again is not
 * an error; *already (may be NULL) says whether it was sealed before. */
COVE_EXPORT cove_status cove_seal(cove_client_t* client, const char* var, uint64_t version, int* already);
/* Version `to` of each of the `nvars` variables starts as version `from`,
 * sharing its pieces (cove::Client::derive); all or nothing. *shared (may
 * be NULL) receives the pieces shared. COVE_NOT_FOUND for an unknown
 * variable or a missing version `from`, COVE_ALREADY_EXISTS when `to` is
 * there already. */
COVE_EXPORT cove_status cove_derive(cove_client_t* client, const char* const* vars, size_t nvars, uint64_t from,
                                    uint64_t to, size_t* shared);
/* data (here and in cove_put_local, cove_get, cove_get_latest) may be host
 * or GPU device memory: Cove finds out which (docs/gpu.md), as
 * cove::MemorySpace::automatic does in C++. */
COVE_EXPORT cove_status cove_put(cove_client_t* client, const char* var, uint64_t version, int ndim,
                                 const int64_t* start, const int64_t* count, const void* data, size_t bytes,
                                 const char* layout);
COVE_EXPORT cove_status cove_put_local(cove_client_t* client, const char* var, uint64_t version, int ndim,
                                       const int64_t* start, const int64_t* count, const void* data, size_t bytes,
                                       const char* layout);
/* Memory for cove_put_local that readers on this host copy from with one
 * memcpy (a shared-memory segment they map): *data receives `bytes` zeroed,
 * page-aligned bytes. Free it with cove_free once its pieces are released,
 * before cove_disconnect. */
COVE_EXPORT cove_status cove_alloc(cove_client_t* client, size_t bytes, void** data);
/* Frees memory from cove_alloc (NULL is a no-op; other pointers are
 * COVE_INVALID_ARGUMENT). */
COVE_EXPORT cove_status cove_free(cove_client_t* client, void* data);
/* Blocks until no reader copies the piece any more; then its memory may be
 * reused. released (may be NULL): how many pieces the servers dropped. */
COVE_EXPORT cove_status cove_release(cove_client_t* client, const char* var, uint64_t version, int ndim,
                                     const int64_t* start, const int64_t* count, size_t* released);
/* timeout_ms as in cove::Client::get: 0 answers at once, < 0 waits until
 * the region is there, > 0 that long (COVE_TIMEOUT); a variable not defined
 * yet is waited for within the same timeout. */
COVE_EXPORT cove_status cove_get(cove_client_t* client, const char* var, uint64_t version, int ndim,
                                 const int64_t* start, const int64_t* count, void* data, size_t bytes,
                                 int64_t timeout_ms, const char* layout);
/* The newest version covering the region; its number in *version (may be NULL). */
COVE_EXPORT cove_status cove_get_latest(cove_client_t* client, const char* var, int ndim, const int64_t* start,
                                        const int64_t* count, void* data, size_t bytes, int64_t timeout_ms,
                                        const char* layout, uint64_t* version);
/* COVE_NOT_FOUND when the variable has no versions. */
COVE_EXPORT cove_status cove_latest(cove_client_t* client, const char* var, uint64_t* version);
COVE_EXPORT cove_status cove_remove(cove_client_t* client, const char* var, uint64_t version);
/* Removes a variable and everything it holds from every server
 * (COVE_NOT_FOUND if it is not defined); `dropped` (may be NULL) receives
 * the number of pieces dropped. See cove::Client::undefine. */
COVE_EXPORT cove_status cove_undefine(cove_client_t* client, const char* var, size_t* dropped);

typedef enum cove_meta_mode { COVE_META_EXACT = 0, COVE_META_NEXT = 1, COVE_META_LATEST = 2 } cove_meta_mode;
COVE_EXPORT cove_status cove_put_meta(cove_client_t* client, const char* name, uint64_t version, const void* data,
                                      size_t bytes);
/* Copies up to `capacity` bytes into `data`; *size gets the blob's full size
 * and *found_version its version (either may be NULL). mode EXACT takes
 * `version`, NEXT the first after it, LATEST ignores it. */
COVE_EXPORT cove_status cove_get_meta(cove_client_t* client, const char* name, cove_meta_mode mode, uint64_t version,
                                      int64_t timeout_ms, void* data, size_t capacity, size_t* size,
                                      uint64_t* found_version);

/* Locks on an object or a region of it (ndim 0: the whole object, start
 * and count may be NULL). See cove::Client::lock_read: readers share, a
 * writer is alone, waiting requests go in arrival order, a lock lasts until
 * cove_unlock or until the client's connection closes; COVE_TIMEOUT after
 * timeout_ms (0: only if free now). Blocking; thread-safe as every call on
 * a client. */
COVE_EXPORT cove_status cove_lock_read(cove_client_t* client, const char* name, int ndim, const int64_t* start,
                                       const int64_t* count, int64_t timeout_ms);
COVE_EXPORT cove_status cove_lock_write(cove_client_t* client, const char* name, int ndim, const int64_t* start,
                                        const int64_t* count, int64_t timeout_ms);
/* COVE_NOT_FOUND when nobody holds that region, COVE_PERMISSION_DENIED when another client does. */
COVE_EXPORT cove_status cove_unlock(cove_client_t* client, const char* name, int ndim, const int64_t* start,
                                    const int64_t* count);

/* ---- In-staging workers and placement (docs/placement.md, "Workers" and
 * "Placement in the servers"); the C spellings of cove::Client's calls.
 * Servers are numbered 0 .. cove_server_count() - 1, in the order of the
 * connection file (server 0 is the group's placement master). Every call
 * blocks until done and is thread-safe as every call on a client. */

/* The number of servers of the client's group, in *count. No request. */
COVE_EXPORT cove_status cove_server_count(cove_client_t* client, size_t* count);

/* A worker slot taken by cove_become_worker. */
typedef struct cove_worker_slot {
  uint32_t slot;    /* 0 .. slots - 1 */
  uint32_t slots;   /* the server's worker slots */
  uint32_t workers; /* workers registered there now, this one included */
} cove_worker_slot;
/* Makes this client a consumer worker of server `server`: its connection
 * takes one of that server's worker slots (--worker-slots, [server]
 * worker_slots) until cove_disconnect or until the process ends (exits,
 * crashes, is killed). `name` names the worker in the server's log. `slot`
 * (may be NULL) receives the slot taken. One request. Errors:
 * COVE_OUT_OF_RANGE for a server past the group; COVE_INVALID_ARGUMENT for
 * a NULL or empty name; COVE_UNAVAILABLE when every slot is taken (the
 * message names the server's slots) or the server is gone;
 * COVE_ALREADY_EXISTS when this client already is a worker of that server. */
COVE_EXPORT cove_status cove_become_worker(cove_client_t* client, size_t server, const char* name,
                                           cove_worker_slot* slot);

/* The bytes of a region of `var` version `version` held by each server,
 * from the servers' index: held[i] for server i (put_local pieces left in
 * their writers' memory count for no server). Waits for the version as
 * cove_get does (timeout_ms 0: at once, <0: until it is there, >0: that
 * long, then COVE_TIMEOUT); COVE_NOT_FOUND for an unknown variable, or with
 * timeout_ms 0 for a version that is not there. The caller owns `held`:
 * min(capacity, servers) entries are written (held may be NULL when
 * capacity is 0); *servers (may be NULL) receives the number of servers,
 * so a capacity below it is not an error, only a shorter answer. */
COVE_EXPORT cove_status cove_locate(cove_client_t* client, const char* var, uint64_t version, int ndim,
                                    const int64_t* start, const int64_t* count, int64_t timeout_ms, uint64_t* held,
                                    size_t capacity, size_t* servers);
/* The bytes this client's gets have read so far, by the server they came
 * from (bytes[i]: server i): pieces a server holds and small regions a
 * server answered with; bytes read from writers' memory (put_local) count
 * for no server. A worker's bytes from servers other than its own are the
 * bytes it moved between nodes. Caller-owned array as in cove_locate. No
 * request. */
COVE_EXPORT cove_status cove_bytes_read(cove_client_t* client, uint64_t* bytes, size_t capacity, size_t* servers);

/* cove_put onto server `server` instead of the one the variable's sharding
 * names (a writer's own placement); the servers' index still finds it
 * from every reader. When that server does not answer, the piece goes to
 * the next that does: a put is never lost. COVE_OUT_OF_RANGE for a server
 * past the group; otherwise as cove_put. */
COVE_EXPORT cove_status cove_put_on(cove_client_t* client, size_t server, const char* var, uint64_t version, int ndim,
                                    const int64_t* start, const int64_t* count, const void* data, size_t bytes,
                                    const char* layout);
/* cove_put of a piece placed by the group's placement component: server 0
 * chooses the server by the variable's policy (placement,
 * placement_variables in the servers' configuration) and the piece goes
 * there. Whatever goes wrong with the placement (no policy for the
 * variable, server 0 gone or refusing), the piece goes where cove_put
 * sends it: it is never lost and always readable. A put that cove_put
 * would refuse (region, buffer size, layout) is refused before server 0
 * is asked, so it takes no placement decision. `server` (may be NULL)
 * receives the index of the server it went to. One more request than
 * cove_put; errors as cove_put's. */
COVE_EXPORT cove_status cove_put_placed(cove_client_t* client, const char* var, uint64_t version, int ndim,
                                        const int64_t* start, const int64_t* count, const void* data, size_t bytes,
                                        const char* layout, size_t* server);
/* Reports to the placement component (server 0) that the consumer task
 * reading this region of `var` ran `seconds`: the task monitor predicts
 * the next step's execution time from it. One request.
 * COVE_INVALID_ARGUMENT for a negative or non-finite time; COVE_UNAVAILABLE
 * when server 0 is gone. */
COVE_EXPORT cove_status cove_task_done(cove_client_t* client, const char* var, int ndim, const int64_t* start,
                                       const int64_t* count, double seconds);
/* The task monitor by read intervals, as in the paper: with on != 0, each
 * cove_get / cove_get_latest of this client ends the task that read the
 * previous get's region, and the time between the two requests is
 * reported as by cove_task_done (a failed report is dropped; the get goes
 * on). cove_end_read_task ends the last one (at most one request). No
 * request now; afterwards one more request per get. */
COVE_EXPORT cove_status cove_monitor_reads(cove_client_t* client, int on);
COVE_EXPORT cove_status cove_end_read_task(cove_client_t* client);
/* Hands the consumer's dataflow graph (a .json or .toml file of at most
 * 1 MiB, read by this process) to the placement component, which groups
 * the objects read together (METIS, one group per server) for the data and
 * hybrid policies once every object it reads has a task time. One request.
 * COVE_NOT_FOUND for a file that cannot be read; COVE_INVALID_ARGUMENT,
 * the message naming the file and the culprit, for another extension, a
 * graph that does not parse, has a cycle ("dataflow graph has a cycle: a
 * -> b -> a") or reads an unknown object. */
COVE_EXPORT cove_status cove_register_dataflow(cove_client_t* client, const char* path);

typedef struct cove_stats {
  uint64_t variables, versions, pieces;
  uint64_t owned_bytes, local_bytes, memory_budget;
  uint64_t requests, bytes_in;
  uint64_t replicas, replica_bytes; /* parts of pieces held in other layouts, and their bytes */
  uint64_t reorganizations;         /* replicas built so far */
  uint64_t parked_gets;             /* gets and metadata gets waiting for data now */
  uint64_t metadata_bytes;          /* memory of the metadata kept, counted against the budget */
} cove_stats;
/* Totals over all servers. */
COVE_EXPORT cove_status cove_stat(cove_client_t* client, cove_stats* stats);

#ifdef __cplusplus
}
#endif

#endif /* COVE_H */
