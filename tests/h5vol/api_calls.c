/* Plain HDF5 calls HDF5's own API tests (test/API) make and the connector
 * got wrong (make conformance, tests/conformance/hdf5_api.sh), one line of
 * output per call, so that a run through the connector can be compared
 * with a native one (tests/h5vol/run.sh case api):
 *   - H5Lcreate_hard with H5L_SAME_LOC for either location (HDF5 passes the
 *     connector no object for the new link's location; it crashed);
 *   - H5Fmount / H5Funmount of one file onto a group of another (mode file
 *     passed the connector's own object of the child to the native one);
 *   - in memory: H5Ovisit (was refused), H5Oget_info's reference count
 *     (was always 1) and H5Oincr/decr_refcount (were ignored), attributes by
 *     index in name and creation order (were refused), H5Arename and
 *     H5Adelete_by_idx (were refused), hard links to a group copied or moved
 *     into it (were refused), H5Dset_extent of a contiguous dataset (was
 *     allowed), a link's creation order in a group not tracking it (was
 *     reported valid), an emptied group's
 *     maximum creation order (kept its old value), invalid property lists
 *     (were accepted), H5Dset_extent shrinking and growing back (the cells
 *     cut off kept their old values; a variable-length dataset's elements
 *     kept their linear positions);
 *   - H5Fdelete of a file in memory (was refused): the file goes, opening or
 *     deleting it again fails, and a new file of that name starts afresh;
 *   - in memory: compounds read or written through a subset of their fields
 *     (the other fields were zeroed), an attribute never written (its read
 *     failed) and its creation list's character set (was lost), a committed
 *     datatype's reference count (did not count the datasets and attributes
 *     of its type) and its name once unlinked (was kept), an external link
 *     followed from a file open read-write (opened its file read-only),
 *     H5Dvlen_get_buf_size (0: the transfer list's allocator was not used),
 *     H5Fget_obj_count (counted the types the connector kept, and every
 *     handle's objects for H5F_OBJ_LOCAL).
 * Usage: cove-h5vol-api-calls PARENT CHILD   (two file names; a third,
 *        CHILD.del.h5, is created and deleted) */
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

static herr_t visited(hid_t obj, const char* name, const H5O_info2_t* info, void* data) {
  (void)obj;
  (void)data;
  printf("visit %s: type %d, rc %u\n", name, (int)info->type, info->rc);
  return 0;
}

static unsigned refs(hid_t loc, const char* name) {
  H5O_info2_t info;
  return H5Oget_info_by_name3(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ? 0u : info.rc;
}

static int scalar(hid_t loc, const char* name, int v) {
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t d = H5Dcreate2(loc, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) < 0 ? -1 : 0;
  if (d >= 0) H5Dclose(d);
  H5Sclose(s);
  return rc;
}

typedef struct {
  int a, b;
} pair_t;

/* Writes all of a {a, b} compound, reads field a into a buffer of -1s,
 * writes field b alone, and reads both back: through a dataset (is_attr 0)
 * or an attribute of `loc`. */
static void compound_subsets(hid_t loc, int is_attr) {
  hsize_t dims[1] = {3};
  hid_t s = H5Screate_simple(1, dims, NULL);
  hid_t full = H5Tcreate(H5T_COMPOUND, sizeof(pair_t));
  H5Tinsert(full, "a", HOFFSET(pair_t, a), H5T_NATIVE_INT);
  H5Tinsert(full, "b", HOFFSET(pair_t, b), H5T_NATIVE_INT);
  hid_t only_a = H5Tcreate(H5T_COMPOUND, sizeof(pair_t));
  H5Tinsert(only_a, "a", HOFFSET(pair_t, a), H5T_NATIVE_INT);
  hid_t only_b = H5Tcreate(H5T_COMPOUND, sizeof(pair_t));
  H5Tinsert(only_b, "b", HOFFSET(pair_t, b), H5T_NATIVE_INT);
  hid_t x = is_attr ? H5Acreate2(loc, "pairs", full, s, H5P_DEFAULT, H5P_DEFAULT)
                    : H5Dcreate2(loc, "pairs", full, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  pair_t w[3] = {{1, 2}, {3, 4}, {5, 6}}, r[3];
#define IO(rw, type, buf) \
  (is_attr ? H5A##rw(x, type, buf) : H5D##rw(x, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf))
  herr_t rc = IO(write, full, w);
  for (int i = 0; i < 3; ++i) r[i].a = r[i].b = -1;
  rc |= IO(read, only_a, r);
  printf("%s read a: %d %d, %d %d, %d %d (%d)\n", is_attr ? "attribute" : "dataset", r[0].a, r[0].b, r[1].a, r[1].b,
         r[2].a, r[2].b, rc < 0 ? -1 : 0);
  for (int i = 0; i < 3; ++i) w[i].a = 100 + i, w[i].b = 200 + i;
  rc = IO(write, only_b, w);
  for (int i = 0; i < 3; ++i) r[i].a = r[i].b = -1;
  rc |= IO(read, full, r);
#undef IO
  printf("%s wrote b: %d %d, %d %d, %d %d (%d)\n", is_attr ? "attribute" : "dataset", r[0].a, r[0].b, r[1].a, r[1].b,
         r[2].a, r[2].b, rc < 0 ? -1 : 0);
  is_attr ? H5Aclose(x) : H5Dclose(x);
  H5Tclose(only_b);
  H5Tclose(only_a);
  H5Tclose(full);
  H5Sclose(s);
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

  /* Attributes b, a, c (created in that order) by index. */
  const char* names[] = {"b", "a", "c"};
  for (int i = 0; i < 3; ++i) {
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g, names[i], H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
    int v = 10 + i;
    if (a < 0 || H5Awrite(a, H5T_NATIVE_INT, &v) < 0) return 1;
    H5Aclose(a);
    H5Sclose(s);
  }
  const H5_index_t idx[] = {H5_INDEX_NAME, H5_INDEX_CRT_ORDER};
  const H5_iter_order_t ord[] = {H5_ITER_INC, H5_ITER_DEC};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      char name[16] = "";
      int v = -1;
      H5A_info_t info;
      H5Aget_name_by_idx(g, ".", idx[i], ord[j], 0, name, sizeof name, H5P_DEFAULT);
      hid_t a = H5Aopen_by_idx(g, ".", idx[i], ord[j], 0, H5P_DEFAULT, H5P_DEFAULT);
      if (a >= 0) H5Aread(a, H5T_NATIVE_INT, &v), H5Aclose(a);
      herr_t got = H5Aget_info_by_idx(g, ".", idx[i], ord[j], 1, &info, H5P_DEFAULT);
      printf("attribute index %d order %d: first %s = %d, second's creation order %d\n", (int)idx[i], (int)ord[j],
             name, v, got < 0 ? -1 : (int)info.corder);
    }

  /* Reference counts: /x has three hard links (x, g/y, g/z). */
  hid_t x = H5Oopen(f, "x", H5P_DEFAULT);
  printf("rc x: %u, g: %u\n", refs(f, "x"), refs(f, "g"));
  const int incr = H5Oincr_refcount(x) < 0 ? -1 : 0;
  printf("incr: %d, rc %u\n", incr, refs(f, "x"));
  const int decr = H5Odecr_refcount(x) < 0 ? -1 : 0;
  printf("decr: %d, rc %u\n", decr, refs(f, "x"));
  H5Oclose(x);

  /* Every object once, by name and by creation order, from the root and from g. */
  printf("visit: %d\n", H5Ovisit3(f, H5_INDEX_NAME, H5_ITER_INC, visited, NULL, H5O_INFO_BASIC) < 0 ? -1 : 0);
  printf("visit g: %d\n", H5Ovisit_by_name3(f, "g", H5_INDEX_NAME, H5_ITER_DEC, visited, NULL, H5O_INFO_BASIC,
                                              H5P_DEFAULT) < 0 ? -1 : 0);

  /* Attributes renamed and deleted by index; a hard link to g copied and moved into g. */
  printf("rename: %d, by name: %d\n", H5Arename(g, "a", "a2") < 0 ? -1 : 0,
         H5Arename_by_name(f, "g", "b", "b2", H5P_DEFAULT) < 0 ? -1 : 0);
  printf("delete by index: %d\n", H5Adelete_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, 0, H5P_DEFAULT) < 0 ? -1 : 0);
  printf("attributes a2: %d, b2: %d, c: %d\n", (int)H5Aexists(g, "a2"), (int)H5Aexists(g, "b2"), (int)H5Aexists(g, "c"));
  H5Lcreate_hard(g, ".", g, "self", H5P_DEFAULT, H5P_DEFAULT);
  printf("copy into itself: %d\n", H5Lcopy(g, "self", g, "self2", H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0);
  printf("move into itself: %d\n", H5Lmove(g, "self2", g, "self3", H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0);
  printf("g/self3/x... %d, rc g: %u\n", value(f, "g/self3/self/y"), refs(f, "g"));

  /* H5Dset_extent: refused on a contiguous dataset, as natively; a chunked one grows. */
  {
    hsize_t dims[1] = {4}, maxdims[1] = {H5S_UNLIMITED}, chunk[1] = {2}, grown[1] = {6};
    hid_t s = H5Screate_simple(1, dims, NULL);
    hid_t d = H5Dcreate2(f, "contiguous", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5E_BEGIN_TRY { printf("set_extent contiguous: %d\n", H5Dset_extent(d, dims) < 0 ? -1 : 0); }
    H5E_END_TRY
    H5Dclose(d);
    H5Sclose(s);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    s = H5Screate_simple(1, dims, maxdims);
    d = H5Dcreate2(f, "chunked", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    printf("set_extent chunked: %d\n", H5Dset_extent(d, grown) < 0 ? -1 : 0);
    H5Dclose(d);
    H5Sclose(s);
    H5Pclose(dcpl);
  }

  /* H5Dset_extent shrinking then growing back: the cells cut off read the fill
   * value (7 here; 0 for the strings), never their old values; the kept ones
   * stay where they were (2-D: linear positions change). */
  {
    hsize_t dims[2] = {3, 4}, maxdims[2] = {H5S_UNLIMITED, H5S_UNLIMITED}, chunk[2] = {2, 2}, small[2] = {2, 2};
    int fill = 7, v[12], back[12];
    for (int i = 0; i < 12; ++i) v[i] = 100 + i;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
    hid_t s = H5Screate_simple(2, dims, maxdims);
    hid_t d = H5Dcreate2(f, "shrunk", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    herr_t shrink = H5Dset_extent(d, small), grow = H5Dset_extent(d, dims);
    printf("shrink: %d, grow: %d\n", shrink < 0 ? -1 : 0, grow < 0 ? -1 : 0);
    for (int i = 0; i < 12; ++i) back[i] = -1;
    H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back);
    printf("shrunk and grown:");
    for (int i = 0; i < 12; ++i) printf(" %d", back[i]);
    printf("\n");
    H5Dclose(d);
    H5Sclose(s);
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, H5T_VARIABLE);
    const char* words[12] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"};
    char* got[12];
    H5Pclose(dcpl);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    s = H5Screate_simple(2, dims, maxdims);
    d = H5Dcreate2(f, "shrunk_strings", str, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Dwrite(d, str, H5S_ALL, H5S_ALL, H5P_DEFAULT, words);
    shrink = H5Dset_extent(d, small);
    grow = H5Dset_extent(d, dims);
    printf("strings shrink: %d, grow: %d\n", shrink < 0 ? -1 : 0, grow < 0 ? -1 : 0);
    for (int i = 0; i < 12; ++i) got[i] = NULL;
    H5Dread(d, str, H5S_ALL, H5S_ALL, H5P_DEFAULT, got);
    printf("strings shrunk and grown:");
    for (int i = 0; i < 12; ++i) printf(" %s", got[i] && *got[i] ? got[i] : "-");
    printf("\n");
    H5Dvlen_reclaim(str, s, H5P_DEFAULT, got);
    H5Dclose(d);
    H5Sclose(s);
    H5Tclose(str);
    H5Pclose(dcpl);
  }

  /* A group tracking creation order, emptied: its maximum creation order is 0 again. */
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED);
  hid_t co = H5Gcreate2(f, "co", H5P_DEFAULT, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  H5G_info_t ginfo;
  if (co < 0 || scalar(co, "p", 1) < 0 || scalar(co, "q", 2) < 0) return 1;
  H5Gget_info(co, &ginfo);
  printf("co max_corder: %lld\n", (long long)ginfo.max_corder);
  H5L_info2_t tracked, untracked;
  H5Lget_info2(co, "q", &tracked, H5P_DEFAULT);
  H5Lget_info2(f, "x", &untracked, H5P_DEFAULT);
  printf("corder co/q: valid %d, %lld; x: valid %d, %lld\n", (int)tracked.corder_valid, (long long)tracked.corder,
         (int)untracked.corder_valid, (long long)untracked.corder);
  H5Ldelete(co, "p", H5P_DEFAULT);
  H5Ldelete(co, "q", H5P_DEFAULT);
  H5Gget_info(co, &ginfo);
  printf("co max_corder emptied: %lld\n", (long long)ginfo.max_corder);
  H5Gclose(co);

  /* Invalid property lists: refused, nothing created or deleted. */
  H5E_BEGIN_TRY {
    hid_t bad = H5Gcreate2(f, "bad", H5P_DEFAULT, H5P_DEFAULT, H5I_INVALID_HID);
    printf("invalid gapl: %d\n", bad < 0 ? -1 : 0);
    if (bad >= 0) H5Gclose(bad);
    printf("invalid lapl link: %d\n", H5Lcreate_hard(f, "x", f, "bad2", H5P_DEFAULT, H5I_INVALID_HID) < 0 ? -1 : 0);
    printf("invalid lapl delete: %d\n", H5Ldelete(f, "x", H5I_INVALID_HID) < 0 ? -1 : 0);
    printf("invalid lapl move: %d\n", H5Lmove(f, "x", f, "bad3", H5P_DEFAULT, H5I_INVALID_HID) < 0 ? -1 : 0);
    H5L_info2_t linfo;
    printf("invalid lapl info: %d\n", H5Lget_info2(f, "x", &linfo, H5I_INVALID_HID) < 0 ? -1 : 0);
  }
  H5E_END_TRY
  printf("bad: %d, bad2: %d, bad3: %d, x: %d\n", (int)H5Lexists(f, "bad", H5P_DEFAULT),
         (int)H5Lexists(f, "bad2", H5P_DEFAULT), (int)H5Lexists(f, "bad3", H5P_DEFAULT), (int)H5Lexists(f, "x", H5P_DEFAULT));

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

  /* Compounds written and read from a subset of their fields: the other
   * fields keep their values, in the dataset and in the caller's buffer. */
  compound_subsets(f, 0);
  compound_subsets(g, 1);

  /* An attribute never written reads as zeros; its creation list keeps the
   * name's character set. */
  {
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t acpl = H5Pcreate(H5P_ATTRIBUTE_CREATE);
    H5Pset_char_encoding(acpl, H5T_CSET_UTF8);
    hid_t a = H5Acreate2(g, "unwritten", H5T_NATIVE_INT, s, acpl, H5P_DEFAULT);
    int v = -1;
    herr_t rc = H5Aread(a, H5T_NATIVE_INT, &v);
    hid_t got = H5Aget_create_plist(a);
    H5T_cset_t cset = H5T_CSET_ERROR;
    H5Pget_char_encoding(got, &cset);
    H5A_info_t info;
    H5Aget_info(a, &info);
    printf("unwritten attribute: %d (%d), creation list cset %d, info cset %d\n", v, rc < 0 ? -1 : 0, (int)cset,
           (int)info.cset);
    H5Pclose(got);
    H5Pclose(acpl);
    H5Aclose(a);
    H5Sclose(s);
  }

  /* A committed datatype counts each dataset and attribute of its type in
   * its reference count; unlinked while open it has no name, even once
   * linked again under another. */
  {
    hid_t t = H5Tcopy(H5T_NATIVE_INT);
    hid_t s = H5Screate(H5S_SCALAR);
    H5Tcommit2(g, "t", t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const unsigned alone = refs(g, "t");
    hid_t a = H5Acreate2(g, "typed", t, s, H5P_DEFAULT, H5P_DEFAULT);
    const unsigned with_attr = refs(g, "t");
    hid_t d = H5Dcreate2(g, "typed", t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    printf("rc committed type: %u, with an attribute %u, and a dataset %u\n", alone, with_attr, refs(g, "t"));
    H5Dclose(d);
    H5Aclose(a);
    char name[64] = "";
    H5Iget_name(t, name, sizeof name);
    H5Ldelete(g, "t", H5P_DEFAULT);
    const ssize_t unlinked = H5Iget_name(t, NULL, 0);
    H5Lcreate_hard(t, ".", g, "t2", H5P_DEFAULT, H5P_DEFAULT);
    printf("type name %s, unlinked %zd, linked again %zd\n", name, unlinked, H5Iget_name(t, NULL, 0));
    H5Sclose(s);
    H5Tclose(t);
  }

  /* H5Dvlen_get_buf_size (HDF5 reads the elements with an allocator of its
   * own in the transfer list, which the connector's parts must come from). */
  {
    hsize_t dims[1] = {3};
    int v[6] = {1, 2, 3, 4, 5, 6};
    hvl_t w[3] = {{1, &v[0]}, {2, &v[1]}, {3, &v[3]}};
    hid_t t = H5Tvlen_create(H5T_NATIVE_INT);
    hid_t s = H5Screate_simple(1, dims, NULL);
    hid_t d = H5Dcreate2(f, "vlen", t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t size = 0;
    herr_t rc = H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, w);
    rc |= H5Dvlen_get_buf_size(d, t, s, &size);
    printf("vlen buffer size: %llu (%d)\n", (unsigned long long)size, rc < 0 ? -1 : 0);
    H5Dclose(d);
    H5Sclose(s);
    H5Tclose(t);
  }

  /* An external link followed from a file open read-write opens its file
   * read-write: a group created through it is in that file once the last
   * object through the link closes. */
  {
    H5Lcreate_external(argv[2], "/", f, "ext", H5P_DEFAULT, H5P_DEFAULT);
    hid_t through = H5Gopen2(f, "ext", H5P_DEFAULT);
    hid_t made = through < 0 ? -1 : H5Gcreate2(through, "made", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    printf("through the external link: open %d, create %d\n", through < 0 ? -1 : 0, made < 0 ? -1 : 0);
    if (made >= 0) H5Gclose(made);
    if (through >= 0) H5Gclose(through);
    child = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
    printf("made in the linked file: %d, c %d\n", child < 0 ? -1 : (int)H5Lexists(child, "made", H5P_DEFAULT),
           value(child, "c"));
    if (child >= 0) H5Fclose(child);
    H5Ldelete(f, "ext", H5P_DEFAULT);
  }

  /* H5Fget_obj_count: the datatypes the connector keeps are not the
   * program's identifiers; H5F_OBJ_LOCAL counts what one handle opened. */
  {
    hid_t again = H5Fopen(argv[1], H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t through_again = H5Gopen2(again, "g", H5P_DEFAULT);
    printf("open objects: %zd, through this handle %zd, through the other %zd, datatypes %zd\n",
           H5Fget_obj_count(f, H5F_OBJ_ALL), H5Fget_obj_count(f, H5F_OBJ_ALL | H5F_OBJ_LOCAL),
           H5Fget_obj_count(again, H5F_OBJ_ALL | H5F_OBJ_LOCAL), H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_DATATYPE));
    H5Gclose(through_again);
    H5Fclose(again);
  }

  H5Gclose(m);
  H5Gclose(g);
  if (H5Fclose(f) < 0) return 1;

  /* H5Fdelete: the file goes; opening or deleting it again fails; a new
     file of the same name has only what is written into it. */
  char third[4096];
  snprintf(third, sizeof third, "%s.del.h5", argv[2]);
  hid_t d = H5Fcreate(third, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (d < 0 || scalar(d, "v", 5) < 0 || H5Fclose(d) < 0) return 1;
  printf("delete: %d\n", H5Fdelete(third, H5P_DEFAULT) < 0 ? -1 : 0);
  H5E_BEGIN_TRY {
    hid_t gone = H5Fopen(third, H5F_ACC_RDONLY, H5P_DEFAULT);
    printf("open deleted: %d\n", gone < 0 ? -1 : 0);
    if (gone >= 0) H5Fclose(gone);
    gone = H5Fopen(third, H5F_ACC_RDWR, H5P_DEFAULT);
    printf("open deleted read-write: %d\n", gone < 0 ? -1 : 0);
    if (gone >= 0) H5Fclose(gone);
    printf("accessible deleted: %d\n", H5Fis_accessible(third, H5P_DEFAULT) > 0 ? 1 : 0);
    printf("delete again: %d\n", H5Fdelete(third, H5P_DEFAULT) < 0 ? -1 : 0);
  }
  H5E_END_TRY
  d = H5Fcreate(third, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  if (d < 0 || scalar(d, "w", 6) < 0 || H5Fclose(d) < 0) return 1;
  d = H5Fopen(third, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (d < 0) return 1;
  printf("recreated: w %d, v exists %d\n", value(d, "w"), (int)H5Lexists(d, "v", H5P_DEFAULT));
  H5Fclose(d);
  return H5Fdelete(third, H5P_DEFAULT) < 0 ? 1 : 0;
}
