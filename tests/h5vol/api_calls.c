/* Plain HDF5 calls HDF5's own API tests (test/API) make and the connector
 * got wrong (make conformance, tests/conformance/hdf5_api.sh), one line of
 * output per call, so that a run through the connector can be compared
 * with a native one (tests/h5vol/run.sh case api):
 *   - H5Lcreate_hard with H5L_SAME_LOC for either location (HDF5 passes the
 *     connector no object for the new link's location; it crashed);
 *   - H5Fmount / H5Funmount of one file onto a group of another (mode file
 *     passed the connector's own object of the child to the native one).
 * Usage: cove-h5vol-api-calls PARENT CHILD   (two file names) */
#include <hdf5.h>
#include <stdio.h>

static int value(hid_t loc, const char* name) {
  int v = -1;
  hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
  if (d < 0) return -1;
  if (H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) < 0) v = -1;
  H5Dclose(d);
  return v;
}

static int scalar(hid_t loc, const char* name, int v) {
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t d = H5Dcreate2(loc, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) < 0 ? -1 : 0;
  if (d >= 0) H5Dclose(d);
  H5Sclose(s);
  return rc;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s PARENT CHILD\n", argv[0]);
    return 2;
  }
  hid_t child = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (child < 0 || scalar(child, "c", 11) < 0 || H5Fclose(child) < 0) return 1;

  hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) return 1;
  hid_t g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t m = H5Gcreate2(f, "mnt", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0 || m < 0 || scalar(f, "x", 7) < 0) return 1;

  /* The new link beside the target's location, and the target beside the new link's. */
  printf("same_loc new: %d\n", H5Lcreate_hard(g, "/x", H5L_SAME_LOC, "y", H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0);
  printf("same_loc target: %d\n", H5Lcreate_hard(H5L_SAME_LOC, "/x", g, "z", H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0);
  printf("g/y: %d, g/z: %d\n", value(f, "g/y"), value(f, "g/z"));
  printf("both same_loc: %d\n",
         H5Lcreate_hard(H5L_SAME_LOC, "/x", H5L_SAME_LOC, "w", H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0);

  /* The child mounted on /mnt: its dataset is seen through the parent, and gone after unmounting. */
  child = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (child < 0) return 1;
  H5E_BEGIN_TRY {
    herr_t mounted = H5Fmount(f, "mnt", child, H5P_DEFAULT);
    printf("mount: %d\n", mounted < 0 ? -1 : 0);
    if (mounted >= 0) {
      printf("mnt/c: %d\n", value(f, "mnt/c"));
      printf("unmount: %d\n", H5Funmount(f, "mnt") < 0 ? -1 : 0);
      printf("mnt/c after unmount: %d\n", value(f, "mnt/c"));
    }
  }
  H5E_END_TRY
  H5Fclose(child);
  H5Gclose(m);
  H5Gclose(g);
  return H5Fclose(f) < 0 ? 1 : 0;
}
