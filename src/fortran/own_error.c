/* The message of the Fortran module's own checks (a section put_local
 * cannot take, a start of the wrong size), kept per thread like the C
 * API's, so that the Fortran cove_last_error() is per thread too: Fortran
 * itself has no thread-local storage. Internal to libcove-fortran and
 * libcove-fortran-mpi. */
#include <cove.h>

#include <stdio.h>

static _Thread_local char own[512];
static _Thread_local int own_set;

/* Visible outside libcove-fortran for the module cove_mpi (libcove-fortran-mpi). */
__attribute__((visibility("default"))) void cove_fortran_error_set(const char* message);
void cove_fortran_error_clear(void);
const char* cove_fortran_last_error(void);

void cove_fortran_error_set(const char* message) {
  snprintf(own, sizeof own, "%s", message);
  own_set = 1;
}

/* Called before every C API call of the module: its message replaces ours. */
void cove_fortran_error_clear(void) { own_set = 0; }

const char* cove_fortran_last_error(void) { return own_set ? own : cove_last_error(); }
