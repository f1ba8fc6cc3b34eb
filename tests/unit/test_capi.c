/* A pure C program against cove.h (compiled as C11, linked to cove::c):
 * an in-process server, put and get through the C API, metadata, and the
 * errors a C caller sees. Prints "N passed, N failed". */
#include <cove.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int passed = 0, failed = 0;
#include "capi_check.h"

/* A get that waits, without a timeout, for version 99. */
struct waiting_get {
  cove_client_t* c;
  cove_status status;
};
static void* wait_for_nothing(void* arg) {
  struct waiting_get* g = (struct waiting_get*)arg;
  const int64_t s[2] = {0, 0}, n[2] = {4, 6};
  double out[24];
  g->status = cove_get(g->c, "grid", 99, 2, s, n, out, sizeof out, -1, NULL);
  if (g->status == COVE_OK && out[23] != 23) g->status = COVE_INTERNAL;
  return NULL;
}
/* A cove_disconnect on its own thread. */
struct closing {
  cove_client_t* c;
  cove_status status;
};
static void* disconnect(void* arg) {
  struct closing* d = (struct closing*)arg;
  d->status = cove_disconnect(d->c);
  return NULL;
}

/* A reader that comes first: its get waits for the definition, then the data. */
static void* read_first(void* arg) {
  struct waiting_get* g = (struct waiting_get*)arg;
  const int64_t s[1] = {0}, n[1] = {4};
  float out[4];
  g->status = cove_get(g->c, "early", 1, 1, s, n, out, sizeof out, 30000, NULL);
  if (g->status == COVE_OK && !(out[0] == 1 && out[3] == 4)) g->status = COVE_INTERNAL;
  return NULL;
}

/* Fill values, sealed and derived versions, and readers first. */
static void version_promises(cove_client_t* c) {
  const int64_t shape[1] = {8}, origin[1] = {0}, two[1] = {2}, half[1] = {4};
  const double fill = -7.5, written[4] = {1, 2, 3, 4};
  double out[8];
  CHECK(cove_define_fill(c, "filled", "<f8", 1, shape, &fill, sizeof fill) == COVE_OK);
  CHECK_ERROR(cove_define_fill(c, "odd", "<f8", 1, shape, &fill, 4), COVE_INVALID_ARGUMENT, "fill value of 4 bytes");
  CHECK(cove_put(c, "filled", 1, 1, two, half, written, sizeof written, NULL) == COVE_OK);
  CHECK(cove_get(c, "filled", 1, 1, origin, shape, out, sizeof out, 0, NULL) == COVE_NOT_FOUND); /* not sealed */
  int already = -1;
  CHECK(cove_seal(c, "filled", 1, &already) == COVE_OK && already == 0);
  CHECK(cove_seal(c, "filled", 1, &already) == COVE_OK && already == 1);
  CHECK(cove_get(c, "filled", 1, 1, origin, shape, out, sizeof out, -1, NULL) == COVE_OK);
  CHECK(out[0] == fill && out[1] == fill && out[2] == 1 && out[5] == 4 && out[6] == fill && out[7] == fill);
  CHECK_ERROR(cove_put(c, "filled", 1, 1, two, half, written, sizeof written, NULL), COVE_INVALID_ARGUMENT,
              "is sealed");
  const char* vars[1] = {"filled"};
  size_t shared = 0;
  CHECK(cove_derive(c, vars, 1, 1, 2, &shared) == COVE_OK && shared == 1);
  CHECK(cove_put(c, "filled", 2, 1, origin, two, written, 2 * sizeof(double), NULL) == COVE_OK);
  CHECK(cove_seal(c, "filled", 2, NULL) == COVE_OK);
  CHECK(cove_get(c, "filled", 2, 1, origin, shape, out, sizeof out, 0, NULL) == COVE_OK);
  CHECK(out[0] == 1 && out[1] == 2 && out[2] == 1 && out[5] == 4 && out[7] == fill);
  CHECK_ERROR(cove_derive(c, vars, 1, 1, 2, NULL), COVE_ALREADY_EXISTS, "has a version 2");
  CHECK_ERROR(cove_derive(c, vars, 1, 9, 10, NULL), COVE_NOT_FOUND, "no version 9");

  struct waiting_get g = {c, COVE_INTERNAL};
  pthread_t reader;
  pthread_create(&reader, NULL, read_first, &g);
  const struct timespec a_moment = {0, 100 * 1000 * 1000}; /* the reader asks before the writer defines */
  nanosleep(&a_moment, NULL);
  const float early[4] = {1, 2, 3, 4};
  const int64_t four[1] = {4};
  CHECK(cove_define(c, "early", "<f4", 1, four) == COVE_OK);
  CHECK(cove_put(c, "early", 1, 1, origin, four, early, sizeof early, NULL) == COVE_OK);
  pthread_join(reader, NULL);
  CHECK(g.status == COVE_OK);
}

/* cove_disconnect on one thread while a get is in flight on another: it
 * waits for the get, and calls that begin meanwhile are refused. (Under
 * ASan, freeing the handle under the get was a use after free.) */
static void disconnect_under_a_call(const char* address) {
  cove_client_t* c = NULL;
  CHECK(cove_connect(address, 1000, &c) == COVE_OK);
  struct waiting_get g = {c, COVE_OK};
  pthread_t getter, closer;
  pthread_create(&getter, NULL, wait_for_nothing, &g);
  cove_stats st;
  while (cove_stat(c, &st) == COVE_OK && st.parked_gets == 0) {} /* the get is parked at the server */
  struct closing closed = {c, COVE_INTERNAL};
  pthread_create(&closer, NULL, disconnect, &closed);
  int refused = 0;
  for (int i = 0; i < 4000000 && !refused; ++i) refused = cove_stat(c, &st) == COVE_INVALID_ARGUMENT;
  CHECK(refused && strstr(cove_last_error(), "being disconnected") != NULL);
  /* Another client puts what the get waits for: the get, then the disconnect, return. */
  cove_client_t* writer = NULL;
  CHECK(cove_connect(address, 1000, &writer) == COVE_OK);
  double field[24];
  for (int i = 0; i < 24; ++i) field[i] = i;
  const int64_t start[2] = {0, 0}, shape[2] = {4, 6};
  CHECK(cove_put(writer, "grid", 99, 2, start, shape, field, sizeof field, NULL) == COVE_OK);
  pthread_join(getter, NULL);
  pthread_join(closer, NULL);
  CHECK(g.status == COVE_OK);
  CHECK(closed.status == COVE_OK);
  CHECK(cove_disconnect(writer) == COVE_OK);
}

int main(void) {
  CHECK(COVE_OK == 0);
  CHECK(strcmp(cove_strerror(COVE_INVALID_ARGUMENT), "invalid argument") == 0);
  CHECK(strcmp(cove_status_name(COVE_TIMEOUT), "TIMEOUT") == 0);
  CHECK(strcmp(cove_strerror((cove_status)12345), "unknown status code") == 0);

  cove_server_t* server = NULL;
  CHECK(cove_server_start("inproc://capi-test", 0, 0, &server) == COVE_OK);
  cove_client_t* c = NULL;
  CHECK(cove_connect(cove_server_address(server), 1000, &c) == COVE_OK);

  /* A collective connect's ticket: its size, too small a buffer, a
   * connect with it, and bytes that are not one. */
  size_t ticket_size = 0;
  CHECK(cove_connect_ticket(cove_server_address(server), 1000, NULL, 0, &ticket_size) == COVE_OK && ticket_size > 0);
  char ticket[512];
  CHECK(ticket_size <= sizeof ticket);
  CHECK(cove_connect_ticket(cove_server_address(server), 1000, ticket, 3, &ticket_size) == COVE_INVALID_ARGUMENT);
  CHECK(strstr(cove_last_error(), "capacity is 3") != NULL);
  CHECK(cove_connect_ticket(cove_server_address(server), 1000, ticket, sizeof ticket, &ticket_size) == COVE_OK);
  cove_client_t* by_ticket = NULL;
  CHECK(cove_connect_with_ticket(ticket, ticket_size, 1000, &by_ticket) == COVE_OK);
  CHECK(cove_disconnect(by_ticket) == COVE_OK);
  CHECK(cove_connect_with_ticket(ticket, ticket_size - ticket_size / 2 - 8, 1000, &by_ticket) != COVE_OK);
  CHECK(cove_connect_with_ticket("cove-connect-ticket-1\n2\nx\n", 26, 1000, &by_ticket) == COVE_INVALID_ARGUMENT);

  const int64_t shape[2] = {4, 6};
  CHECK(cove_define(c, "grid", "<f8", 2, shape) == COVE_OK);
  double field[24];
  for (int i = 0; i < 24; ++i) field[i] = i;
  const int64_t start[2] = {0, 0};
  CHECK(cove_put(c, "grid", 7, 2, start, shape, field, sizeof field, NULL) == COVE_OK);

  /* Rows 1..2, columns 2..5, read back in column-major order. */
  const int64_t s2[2] = {1, 2}, n2[2] = {2, 4};
  double part[8];
  CHECK(cove_get(c, "grid", 7, 2, s2, n2, part, sizeof part, 0, "F") == COVE_OK);
  CHECK(part[0] == 8 && part[1] == 14 && part[2] == 9 && part[7] == 17);
  uint64_t v = 0;
  CHECK(cove_latest(c, "grid", &v) == COVE_OK && v == 7);
  CHECK(cove_get_latest(c, "grid", 2, s2, n2, part, sizeof part, 0, NULL, &v) == COVE_OK && v == 7);

  CHECK(cove_put_meta(c, "note", 1, "hello", 5) == COVE_OK);
  char text[16] = {0};
  size_t size = 0;
  CHECK(cove_get_meta(c, "note", COVE_META_LATEST, 0, 0, text, sizeof text, &size, &v) == COVE_OK);
  CHECK(size == 5 && strcmp(text, "hello") == 0 && v == 1);

  /* Errors name what is wrong, and nothing stored changes. */
  CHECK(cove_define(c, "grid", "<f4", 2, shape) == COVE_INVALID_ARGUMENT);
  CHECK(strstr(cove_last_error(), "dtype") != NULL);
  CHECK(cove_get(c, "grid", 8, 2, s2, n2, part, sizeof part, 0, NULL) == COVE_NOT_FOUND);
  CHECK(cove_get(c, "grid", 7, 2, s2, n2, part, 3, 0, NULL) == COVE_INVALID_ARGUMENT);
  CHECK(strstr(cove_last_error(), "3 bytes") != NULL);
  CHECK(cove_get(c, "grid", 7, 2, s2, n2, part, sizeof part, 0, "P0,0") == COVE_INVALID_ARGUMENT);
  CHECK(cove_put(NULL, "grid", 1, 2, start, shape, field, sizeof field, NULL) == COVE_INVALID_ARGUMENT);
  CHECK(strstr(cove_last_error(), "client is NULL") != NULL);
  CHECK(cove_get(c, "grid", 7, 11, s2, n2, part, sizeof part, 0, NULL) == COVE_INVALID_ARGUMENT);
  CHECK(cove_get(c, "grid", 7, 2, start, shape, field, sizeof field, 0, NULL) == COVE_OK);
  CHECK(field[23] == 23);

  /* Where layouts are reorganized, per variable: RASAR keeps an F replica. */
  double cube[40 * 40 * 8], back[40 * 40 * 8];
  for (int i = 0; i < 40 * 40 * 8; ++i) cube[i] = i;
  const int64_t cshape[3] = {40, 40, 8}, corigin[3] = {0, 0, 0};
  CHECK(cove_define_reorg(c, "cube", "<f8", 3, cshape, "rasar", "F") == COVE_OK);
  CHECK(cove_put(c, "cube", 1, 3, corigin, cshape, cube, sizeof cube, "C") == COVE_OK);
  CHECK(cove_get(c, "cube", 1, 3, corigin, cshape, back, sizeof back, 0, "F") == COVE_OK);
  CHECK(back[1] == 40 * 8 && back[40] == 8); /* (1,0,0) and (0,1,0) */
  cove_stats st;
  CHECK(cove_stat(c, &st) == COVE_OK && st.replicas == 1 && st.replica_bytes == sizeof cube && st.reorganizations == 1);
  CHECK(cove_define_reorg(c, "cube", "<f8", 3, cshape, "quick", NULL) == COVE_INVALID_ARGUMENT);
  CHECK(strstr(cove_last_error(), "'quick'") != NULL);
  CHECK(cove_define_reorg(c, "cube", "<f8", 3, cshape, NULL, "F,P1,0") == COVE_INVALID_ARGUMENT);
  CHECK(cove_remove(c, "cube", 1) == COVE_OK);

  CHECK(cove_stat(c, &st) == COVE_OK && st.owned_bytes == sizeof field && st.pieces == 1 && st.replicas == 0);
  CHECK(cove_remove(c, "grid", 7) == COVE_OK);
  CHECK(cove_latest(c, "grid", &v) == COVE_NOT_FOUND);

  /* put_local of memory from cove_alloc. */
  double* shared = NULL;
  CHECK(cove_alloc(c, sizeof field, (void**)&shared) == COVE_OK && shared != NULL);
  for (int i = 0; i < 24; ++i) shared[i] = 100 + i;
  CHECK(cove_put_local(c, "grid", 8, 2, start, shape, shared, sizeof field, NULL) == COVE_OK);
  CHECK(cove_get(c, "grid", 8, 2, start, shape, field, sizeof field, 0, NULL) == COVE_OK);
  CHECK(field[5] == 105 && field[23] == 123);
  size_t released = 0;
  CHECK(cove_release(c, "grid", 8, 2, start, shape, &released) == COVE_OK && released == 1);
  CHECK(cove_free(c, shared) == COVE_OK);
  CHECK(cove_free(c, field) == COVE_INVALID_ARGUMENT);
  CHECK(cove_free(c, NULL) == COVE_OK);

  version_promises(c);
  CHECK(cove_disconnect(c) == COVE_OK);
  disconnect_under_a_call(cove_server_address(server));
  CHECK(cove_server_stop(server) == COVE_OK);
  CHECK(cove_disconnect(NULL) == COVE_OK);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
