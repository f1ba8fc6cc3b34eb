/* The worker and placement calls of the C API (cove.h) against a real
 * group of 2 servers, each with 1 worker slot, 'placed' placed by the time
 * policy and 'grid' by hybrid (placement_capi.sh starts them): worker
 * slots taken and refused, put_on and locate, bytes_read, put_placed with
 * every byte read back, task_done, register_dataflow, and their errors.
 * Pure C11 against cove.h. Prints "N passed, N failed"; exit 1 on a failure.
 *   cove-test-placement-capi GRAPHS_DIR SCRATCH_DIR   (COVE_CONNECT: the group) */
#include <cove.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int passed = 0, failed = 0;
#include "capi_check.h"

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* 64 doubles of version v: v * 1000 + index. */
static void pattern(double* out, int n, int first, uint64_t v) {
  for (int i = 0; i < n; ++i) out[i] = (double)v * 1000.0 + first + i;
}

static int matches(const double* got, int n, int first, uint64_t v) {
  for (int i = 0; i < n; ++i)
    if (got[i] != (double)v * 1000.0 + first + i) return 0;
  return 1;
}

static cove_client_t* connect_or_die(void) {
  cove_client_t* c = NULL;
  if (cove_connect(NULL, 10000, &c) != COVE_OK) {
    fprintf(stderr, "cannot connect: %s\n", cove_last_error());
    return NULL;
  }
  return c;
}

/* A worker slot per server: the second worker of a 1-slot server is
 * refused naming the slots; a worker that disconnects frees its slot. */
static void workers(cove_client_t* a) {
  cove_client_t* b = connect_or_die();
  cove_client_t* c = connect_or_die();
  if (!b || !c) {
    failed++;
    return;
  }
  cove_worker_slot w = {99, 99, 99};
  CHECK(cove_become_worker(a, 0, "w0", &w) == COVE_OK);
  CHECK(w.slot == 0 && w.slots == 1 && w.workers == 1);
  CHECK_ERROR(cove_become_worker(b, 0, "w1", NULL), COVE_UNAVAILABLE, "all 1 worker slots of server");
  CHECK_ERROR(cove_become_worker(a, 0, "again", NULL), COVE_ALREADY_EXISTS, "already worker 'w0'");
  CHECK_ERROR(cove_become_worker(b, 2, "w1", NULL), COVE_OUT_OF_RANGE, "server 2 is not one of the 2 servers");
  CHECK_ERROR(cove_become_worker(b, 1, "", NULL), COVE_INVALID_ARGUMENT, "name is empty");
  CHECK_ERROR(cove_become_worker(b, 1, NULL, NULL), COVE_INVALID_ARGUMENT, "name is NULL");
  CHECK_ERROR(cove_become_worker(NULL, 1, "w1", NULL), COVE_INVALID_ARGUMENT, "client is NULL");
  CHECK(cove_become_worker(b, 1, "w1", &w) == COVE_OK);
  CHECK(w.slot == 0 && w.slots == 1 && w.workers == 1);
  CHECK_ERROR(cove_become_worker(c, 1, "w2", NULL), COVE_UNAVAILABLE, "all 1 worker slots of server");
  /* b goes: its slot of server 1 is c's once the server has seen it close. */
  CHECK(cove_disconnect(b) == COVE_OK);
  cove_status s = COVE_UNAVAILABLE;
  for (int i = 0; i < 200 && s == COVE_UNAVAILABLE; ++i) {
    s = cove_become_worker(c, 1, "w2", &w);
    if (s == COVE_UNAVAILABLE) sleep_ms(25);
  }
  CHECK(s == COVE_OK);
  CHECK(w.slot == 0 && w.slots == 1);
  CHECK(cove_disconnect(c) == COVE_OK);
}

/* put_on a named server; locate says which server holds how many bytes;
 * bytes_read counts by server what a worker of server 0 read. */
static void put_on_and_locate(cove_client_t* a) {
  const int64_t shape[1] = {64};
  CHECK(cove_define(a, "onvar", "<f8", 1, shape) == COVE_OK);
  double block[32], back[64];
  const int64_t s0[1] = {0}, s1[1] = {32}, n32[1] = {32}, n64[1] = {64}, s8[1] = {8}, n16[1] = {16};
  pattern(block, 32, 0, 1);
  CHECK(cove_put_on(a, 1, "onvar", 1, 1, s0, n32, block, sizeof block, NULL) == COVE_OK);
  pattern(block, 32, 32, 1);
  CHECK(cove_put_on(a, 0, "onvar", 1, 1, s1, n32, block, sizeof block, "C") == COVE_OK);
  CHECK_ERROR(cove_put_on(a, 2, "onvar", 1, 1, s1, n32, block, sizeof block, NULL), COVE_OUT_OF_RANGE,
              "put_on of 'onvar': server 2 is not one of the 2 servers");
  CHECK_ERROR(cove_put_on(a, 0, "onvar", 2, 1, s1, n32, block, 8, NULL), COVE_INVALID_ARGUMENT, "bytes");
  CHECK_ERROR(cove_put_on(a, 0, "nothere", 1, 1, s1, n32, block, sizeof block, NULL), COVE_NOT_FOUND, "nothere");

  uint64_t held[4] = {7, 7, 7, 7};
  size_t servers = 0;
  CHECK(cove_locate(a, "onvar", 1, 1, s0, n64, 0, held, 4, &servers) == COVE_OK);
  CHECK(servers == 2 && held[0] == 256 && held[1] == 256 && held[2] == 7);
  CHECK(cove_locate(a, "onvar", 1, 1, s8, n16, 0, held, 2, &servers) == COVE_OK);
  CHECK(held[0] == 0 && held[1] == 128);
  CHECK(cove_locate(a, "onvar", 1, 1, s1, n16, -1, held, 2, NULL) == COVE_OK);
  CHECK(held[0] == 128 && held[1] == 0);
  /* A short array gets what fits, and the number of servers. */
  held[0] = held[1] = 7;
  CHECK(cove_locate(a, "onvar", 1, 1, s0, n64, 0, held, 1, &servers) == COVE_OK);
  CHECK(servers == 2 && held[0] == 256 && held[1] == 7);
  CHECK(cove_locate(a, "onvar", 1, 1, s0, n64, 0, NULL, 0, &servers) == COVE_OK && servers == 2);
  CHECK_ERROR(cove_locate(a, "onvar", 1, 1, s0, n64, 0, NULL, 2, NULL), COVE_INVALID_ARGUMENT, "held is NULL");
  CHECK_ERROR(cove_locate(a, "nothere", 1, 1, s0, n64, 0, held, 2, NULL), COVE_NOT_FOUND, "nothere");
  CHECK_ERROR(cove_locate(a, "onvar", 1, 0, s0, n64, 0, held, 2, NULL), COVE_INVALID_ARGUMENT, "ndim = 0");
  const int64_t far[1] = {60};
  CHECK_ERROR(cove_locate(a, "onvar", 1, 1, far, n16, 0, held, 2, NULL), COVE_INVALID_ARGUMENT, "onvar");
  CHECK(cove_locate(a, "onvar", 5, 1, s0, n64, 100, held, 2, NULL) == COVE_TIMEOUT);

  size_t count = 0;
  CHECK(cove_server_count(a, &count) == COVE_OK && count == 2);
  CHECK_ERROR(cove_server_count(a, NULL), COVE_INVALID_ARGUMENT, "count is NULL");

  /* a is the worker of server 0: what it reads from server 1 is remote. */
  uint64_t before[2] = {0, 0}, after[2] = {0, 0};
  CHECK(cove_bytes_read(a, before, 2, &servers) == COVE_OK && servers == 2);
  CHECK(cove_get(a, "onvar", 1, 1, s0, n64, back, sizeof back, 0, NULL) == COVE_OK);
  CHECK(matches(back, 64, 0, 1));
  CHECK(cove_bytes_read(a, after, 2, NULL) == COVE_OK);
  CHECK(after[0] - before[0] == 256 && after[1] - before[1] == 256);
  CHECK(cove_get(a, "onvar", 1, 1, s8, n16, back, 16 * sizeof(double), 0, NULL) == COVE_OK);
  CHECK(matches(back, 16, 8, 1));
  CHECK(cove_bytes_read(a, before, 2, NULL) == COVE_OK);
  CHECK(before[0] == after[0] && before[1] - after[1] == 128);
  CHECK_ERROR(cove_bytes_read(a, NULL, 1, NULL), COVE_INVALID_ARGUMENT, "bytes is NULL");
}

/* put_placed: server 0 chooses (time for 'placed', hybrid for 'grid', none
 * for 'unplaced': put()'s server); locate agrees, and get reads every byte. */
static void put_placed(cove_client_t* a) {
  const int64_t shape[1] = {64};
  CHECK(cove_define(a, "placed", "<f8", 1, shape) == COVE_OK);
  CHECK(cove_define(a, "unplaced", "<f8", 1, shape) == COVE_OK);
  const char* vars[2] = {"placed", "unplaced"};
  for (int k = 0; k < 2; ++k) {
    for (uint64_t v = 0; v < 3; ++v) {
      for (int b = 0; b < 4; ++b) {
        double block[16];
        const int64_t start[1] = {16 * b}, count[1] = {16};
        pattern(block, 16, 16 * b, v);
        size_t on = 99;
        CHECK(cove_put_placed(a, vars[k], v, 1, start, count, block, sizeof block, NULL, &on) == COVE_OK);
        CHECK(on < 2);
        uint64_t held[2] = {0, 0};
        CHECK(cove_locate(a, vars[k], v, 1, start, count, 0, held, 2, NULL) == COVE_OK);
        CHECK(on < 2 && held[on] == sizeof block && held[1 - on] == 0);
        if (on < 2 && held[on] != sizeof block)
          fprintf(stderr, "  %s v%llu block %d: put_placed says server %zu, locate %llu + %llu bytes\n", vars[k],
                  (unsigned long long)v, b, on, (unsigned long long)held[0], (unsigned long long)held[1]);
      }
      double back[64];
      const int64_t s0[1] = {0}, n64[1] = {64};
      CHECK(cove_get(a, vars[k], v, 1, s0, n64, back, sizeof back, 0, NULL) == COVE_OK);
      CHECK(matches(back, 64, 0, v));
    }
  }
  /* A 2-D piece in Fortran order, placed by hybrid, read back in C order. */
  const int64_t gshape[2] = {4, 6}, g0[2] = {0, 0};
  CHECK(cove_define(a, "grid", "<f8", 2, gshape) == COVE_OK);
  double f[24], c[24];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) f[j * 4 + i] = 10.0 * i + j;
  size_t on = 99;
  CHECK(cove_put_placed(a, "grid", 1, 2, g0, gshape, f, sizeof f, "F", &on) == COVE_OK && on < 2);
  CHECK(cove_get(a, "grid", 1, 2, g0, gshape, c, sizeof c, 0, NULL) == COVE_OK);
  int ok = 1;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) ok = ok && c[i * 6 + j] == 10.0 * i + j;
  CHECK(ok);
  /* Bad input: refused as put() refuses it, nothing stored. */
  double block[16];
  const int64_t far[1] = {56}, n16[1] = {16}, s0[1] = {0};
  CHECK_ERROR(cove_put_placed(a, "placed", 7, 1, far, n16, block, sizeof block, NULL, NULL), COVE_INVALID_ARGUMENT,
              "placed");
  CHECK_ERROR(cove_put_placed(a, "placed", 7, 1, s0, n16, block, 8, NULL, NULL), COVE_INVALID_ARGUMENT, "bytes");
  CHECK_ERROR(cove_put_placed(a, "placed", 7, 1, s0, n16, block, sizeof block, "Q", NULL), COVE_INVALID_ARGUMENT,
              "Q");
  CHECK_ERROR(cove_put_placed(a, NULL, 7, 1, s0, n16, block, sizeof block, NULL, NULL), COVE_INVALID_ARGUMENT,
              "var is NULL");
  uint64_t held[2];
  CHECK(cove_locate(a, "placed", 7, 1, s0, n16, 0, held, 2, NULL) == COVE_NOT_FOUND);
}

/* task_done: times of the consumer's tasks (counted by server 0: the
 * script checks `cove stat`), and the times refused. */
static void task_done(cove_client_t* a) {
  for (int b = 0; b < 4; ++b) {
    const int64_t start[1] = {16 * b}, count[1] = {16};
    CHECK(cove_task_done(a, "placed", 1, start, count, 0.001 * (b + 1)) == COVE_OK);
  }
  const int64_t s0[1] = {0}, n16[1] = {16};
  CHECK_ERROR(cove_task_done(a, "placed", 1, s0, n16, -1.0), COVE_INVALID_ARGUMENT, "negative or not finite");
  CHECK_ERROR(cove_task_done(a, "placed", 1, s0, n16, NAN), COVE_INVALID_ARGUMENT, "negative or not finite");
  CHECK_ERROR(cove_task_done(a, "placed", 1, s0, n16, INFINITY), COVE_INVALID_ARGUMENT, "negative or not finite");
  CHECK_ERROR(cove_task_done(a, "placed", 0, s0, n16, 1.0), COVE_INVALID_ARGUMENT, "ndim = 0");
  CHECK_ERROR(cove_task_done(a, NULL, 1, s0, n16, 1.0), COVE_INVALID_ARGUMENT, "var is NULL");
  /* By read intervals: three gets and the end of the last read are three
   * more task times (the first get only starts one); off, none. */
  double back[16];
  CHECK(cove_monitor_reads(a, 1) == COVE_OK);
  for (int i = 0; i < 3; ++i) CHECK(cove_get(a, "placed", 1, 1, s0, n16, back, sizeof back, 0, NULL) == COVE_OK);
  CHECK(cove_end_read_task(a) == COVE_OK);
  CHECK(cove_end_read_task(a) == COVE_OK);
  CHECK(cove_monitor_reads(a, 0) == COVE_OK);
  CHECK(cove_get(a, "placed", 1, 1, s0, n16, back, sizeof back, 0, NULL) == COVE_OK);
  CHECK(cove_end_read_task(a) == COVE_OK);
  CHECK(cove_monitor_reads(NULL, 1) == COVE_INVALID_ARGUMENT);
}

/* register_dataflow: a good graph, and graphs refused naming the culprit. */
static void dataflow(cove_client_t* a, const char* graphs, const char* scratch) {
  char path[4096];
  snprintf(path, sizeof path, "%s/reduction8.toml", graphs);
  CHECK(cove_register_dataflow(a, path) == COVE_OK);
  snprintf(path, sizeof path, "%s/cycle.json", graphs);
  CHECK_ERROR(cove_register_dataflow(a, path), COVE_INVALID_ARGUMENT,
              "dataflow graph has a cycle: local -> join -> fix -> local");
  CHECK(strstr(cove_last_error(), "cycle.json") != NULL);
  snprintf(path, sizeof path, "%s/unknown.json", scratch);
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("{\"objects\": [{\"name\": \"b0\", \"var\": \"placed\", \"bytes\": 8}],\n"
          " \"tasks\": [{\"name\": \"local\", \"reads\": [\"b0\", \"b9\"]}]}\n",
          f);
    fclose(f);
  }
  CHECK_ERROR(cove_register_dataflow(a, path), COVE_INVALID_ARGUMENT, "task 'local' reads unknown object 'b9'");
  snprintf(path, sizeof path, "%s/absent.json", scratch);
  CHECK_ERROR(cove_register_dataflow(a, path), COVE_NOT_FOUND, "absent.json");
  snprintf(path, sizeof path, "%s/graph.txt", scratch);
  CHECK_ERROR(cove_register_dataflow(a, path), COVE_INVALID_ARGUMENT, "expected a .json or .toml file");
  CHECK_ERROR(cove_register_dataflow(a, NULL), COVE_INVALID_ARGUMENT, "path is NULL");
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s GRAPHS_DIR SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  cove_client_t* a = connect_or_die();
  if (!a) return 1;
  workers(a);
  put_on_and_locate(a);
  put_placed(a);
  task_done(a);
  dataflow(a, argv[1], argv[2]);
  CHECK(cove_disconnect(a) == COVE_OK);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
