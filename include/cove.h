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
