/* A pure C program against cove.h: it must compile as C11 and link to cove::c. */
#include <cove.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  int failures = 0;
  if (COVE_OK != 0) failures++;
  if (strcmp(cove_strerror(COVE_INVALID_ARGUMENT), "invalid argument") != 0) failures++;
  if (strcmp(cove_status_name(COVE_TIMEOUT), "TIMEOUT") != 0) failures++;
  if (strcmp(cove_strerror((cove_status)12345), "unknown status code") != 0) failures++;
  if (strcmp(cove_status_name((cove_status)12345), "UNKNOWN") != 0) failures++;
  printf("%d passed, %d failed\n", 5 - failures, failures);
  return failures == 0 ? 0 : 1;
}
