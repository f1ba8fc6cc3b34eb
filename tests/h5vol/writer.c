/* An unmodified parallel HDF5 writer: STEPS times, it creates FILE, writes
 * attributes, a group, 1-D to 3-D double datasets decomposed by rows across
 * the ranks, a compound and a string dataset, an extendible dataset, and
 * closes the file. Nothing here knows about Cove.
 *   writer FILE STEPS [FIRST_STEP] */
#include "common.h"

static void write_step(const char* path, int step, int rank, int size) {
  hid_t fapl = mpio_fapl();
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  CHECK(file >= 0, "H5Fcreate %s", path);
  H5Pclose(fapl);

  hid_t scalar = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(file, "step", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(a >= 0 && H5Awrite(a, H5T_NATIVE_INT, &step) >= 0, "attribute step");
  H5Aclose(a);
  hid_t str16 = H5Tcopy(H5T_C_S1);
  H5Tset_size(str16, 16);
  char title[16] = "cove-h5vol-test";
  a = H5Acreate2(file, "title", str16, scalar, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(a >= 0 && H5Awrite(a, str16, title) >= 0, "attribute title");
  H5Aclose(a);
  H5Tclose(str16);
  /* Variable-length strings, as h5py writes its str attributes. */
  hid_t vstr = H5Tcopy(H5T_C_S1);
  H5Tset_size(vstr, H5T_VARIABLE);
  hsize_t two = 2;
  hid_t s2 = H5Screate_simple(1, &two, NULL);
  char note0[32];
  snprintf(note0, sizeof note0, "written at step %d", step);
  const char* notes[2] = {note0, "a second, longer note"};
  a = H5Acreate2(file, "notes", vstr, s2, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(a >= 0 && H5Awrite(a, vstr, notes) >= 0, "attribute notes");
  H5Aclose(a);
  H5Sclose(s2);
  H5Tclose(vstr);

  hid_t fields = H5Gcreate2(file, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(fields >= 0, "H5Gcreate fields");
  hsize_t three = 3;
  hid_t s3 = H5Screate_simple(1, &three, NULL);
  double units[3] = {1.5, 2.5, 3.5 + step};
  a = H5Acreate2(fields, "units", H5T_IEEE_F64LE, s3, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(a >= 0 && H5Awrite(a, H5T_NATIVE_DOUBLE, units) >= 0, "attribute units");
  H5Aclose(a);
  H5Sclose(s3);

  for (int d = 0; d < 3; ++d) {
    const int nd = d + 1;
    hid_t space = H5Screate_simple(nd, kDims[d], NULL);
    hid_t dset = H5Dcreate2(fields, kNames[d], H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(dset >= 0, "H5Dcreate %s", kNames[d]);
    hsize_t start[3] = {0, 0, 0}, count[3] = {kDims[d][0], kDims[d][1], kDims[d][2]};
    block_of(kDims[d][0], rank, size, &start[0], &count[0]);
    hsize_t n = count[0] * count[1] * count[2];
    double* buf = malloc((n ? n : 1) * sizeof(double));
    hsize_t row = kDims[d][1] * kDims[d][2], k = 0;
    for (hsize_t i = start[0]; i < start[0] + count[0]; ++i)
      for (hsize_t j = 0; j < row; ++j) buf[k++] = value_at(step, d, i * row + j);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t mem = H5Screate_simple(nd, count, NULL);
    CHECK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf) >= 0, "H5Dwrite %s", kNames[d]);
    free(buf);
    H5Sclose(mem);
    H5Sclose(space);
    H5Dclose(dset);
  }
  H5Gclose(fields);

  /* An extendible dataset: created empty, extended, then each rank writes its part. */
  hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = 16, ext = kExt;
  hid_t espace = H5Screate_simple(1, &zero, &unlimited);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  hid_t edset = H5Dcreate2(file, "ext", H5T_NATIVE_INT, espace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(edset >= 0, "H5Dcreate ext");
  CHECK(H5Dset_extent(edset, &ext) >= 0, "H5Dset_extent");
  H5Sclose(espace);
  H5Pclose(dcpl);
  espace = H5Dget_space(edset);
  hsize_t lo, cnt;
  block_of(kExt, rank, size, &lo, &cnt);
  int ebuf[kExt];
  for (hsize_t i = 0; i < cnt; ++i) ebuf[i] = (int)(lo + i) * 3 + step;
  H5Sselect_hyperslab(espace, H5S_SELECT_SET, &lo, NULL, &cnt, NULL);
  hid_t emem = H5Screate_simple(1, &cnt, NULL);
  CHECK(H5Dwrite(edset, H5T_NATIVE_INT, emem, espace, H5P_DEFAULT, ebuf) >= 0, "H5Dwrite ext");
  H5Sclose(emem);
  H5Sclose(espace);
  H5Dclose(edset);

  /* Compound and fixed-length string datasets, written by rank 0 alone. */
  hsize_t nrows = kTable, nstr = kStrings;
  hid_t rt = row_type();
  hid_t tspace = H5Screate_simple(1, &nrows, NULL);
  hid_t table = H5Dcreate2(file, "table", rt, tspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t s8 = H5Tcopy(H5T_C_S1);
  H5Tset_size(s8, kStrLen);
  hid_t sspace = H5Screate_simple(1, &nstr, NULL);
  hid_t names = H5Dcreate2(file, "names", s8, sspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(table >= 0 && names >= 0, "H5Dcreate table / names");
  if (rank == 0) {
    Row rows[kTable];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < kTable; ++i) {
      rows[i].id = i + 100 * step;
      rows[i].x = i * 0.25 + step;
      snprintf(rows[i].name, sizeof rows[i].name, "row%d", i);
    }
    char strs[kStrings][kStrLen] = {"alpha", "beta", "gamma", "delta"};
    CHECK(H5Dwrite(table, rt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0, "H5Dwrite table");
    CHECK(H5Dwrite(names, s8, H5S_ALL, H5S_ALL, H5P_DEFAULT, strs) >= 0, "H5Dwrite names");
  }
  H5Dclose(table);
  H5Dclose(names);
  H5Sclose(tspace);
  H5Sclose(sspace);
  H5Tclose(s8);
  H5Tclose(rt);
  H5Sclose(scalar);

  /* A soft link, in every mode: it names its target and leads to it. */
  CHECK(H5Lcreate_soft("/fields/d1", file, "alias", H5P_DEFAULT, H5P_DEFAULT) >= 0, "H5Lcreate_soft");
  H5L_info2_t linfo;
  CHECK(H5Lget_info2(file, "alias", &linfo, H5P_DEFAULT) >= 0 && linfo.type == H5L_TYPE_SOFT, "H5Lget_info2 alias: not soft");
  char target[32] = "";
  CHECK(H5Lget_val(file, "alias", target, sizeof target, H5P_DEFAULT) >= 0 && strcmp(target, "/fields/d1") == 0,
        "H5Lget_val alias: '%s'", target);
  hid_t through = H5Oopen(file, "alias", H5P_DEFAULT);
  CHECK(through >= 0 && H5Iget_type(through) == H5I_DATASET, "H5Oopen through the soft link");
  H5Oclose(through);
  CHECK(H5Ldelete(file, "alias", H5P_DEFAULT) >= 0, "H5Ldelete alias");
  CHECK(H5Lexists(file, "alias", H5P_DEFAULT) == 0, "alias still exists after H5Ldelete");

  /* An external link (in memory, kept with the file; modes file and both
   * leave it to the native connector): its class and value as natively. */
  CHECK(H5Lcreate_external("other.h5", "/x", file, "elink", H5P_DEFAULT, H5P_DEFAULT) >= 0, "H5Lcreate_external");
  CHECK(H5Lget_info2(file, "elink", &linfo, H5P_DEFAULT) >= 0 && linfo.type == H5L_TYPE_EXTERNAL &&
            linfo.u.val_size == 1 + sizeof "other.h5" + sizeof "/x",
        "H5Lget_info2 elink: type %d, size %zu", (int)linfo.type, linfo.u.val_size);
  char value[32];
  const char* ext_file = NULL;
  const char* ext_obj = NULL;
  unsigned ext_flags = 0;
  CHECK(H5Lget_val(file, "elink", value, sizeof value, H5P_DEFAULT) >= 0 &&
            H5Lunpack_elink_val(value, linfo.u.val_size, &ext_flags, &ext_file, &ext_obj) >= 0 &&
            strcmp(ext_file, "other.h5") == 0 && strcmp(ext_obj, "/x") == 0,
        "H5Lget_val elink");
  CHECK(H5Ldelete(file, "elink", H5P_DEFAULT) >= 0, "H5Ldelete elink");  /* the readers list hard links only */
  CHECK(H5Fclose(file) >= 0, "H5Fclose");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(program_comm(), &rank);
  MPI_Comm_size(program_comm(), &size);
  if (argc < 3) {
    fprintf(stderr, "usage: writer FILE STEPS [FIRST_STEP]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int steps = atoi(argv[2]);
  const int first = argc > 3 ? atoi(argv[3]) : 1;
  for (int s = first; s < first + steps; ++s) write_step(argv[1], s, rank, size);
  if (rank == 0) printf("writer: %d steps of %s from %d ranks\n", steps, argv[1], size);
  MPI_Finalize();
  return 0;
}
