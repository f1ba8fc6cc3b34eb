/* An unmodified parallel HDF5 reader: OPENS times, it opens FILE, checks
 * the attributes, groups and links, reads every dataset in its own
 * decomposition (by the last dimension, across the writers' row blocks),
 * with strided, point and type-converting reads, checks every value against
 * the step found in the file, and checks that bad reads fail. Rank 0 prints
 * the steps it saw: "steps: 1 2 3". Nothing here knows about Cove.
 *   reader FILE[,FILE...] OPENS  normal (several files: fan-in)
 *   reader FILE --missing        H5Fopen must fail (no producer writes FILE) */
#include "common.h"

static int rank_, size_;

static herr_t collect(hid_t group, const char* name, const H5L_info2_t* info, void* data) {
  (void)group;
  char* out = data;
  CHECK(info->type == H5L_TYPE_HARD, "link %s is not hard", name);
  strcat(out, name);
  strcat(out, ",");
  return 0;
}

static void check_dataset(hid_t file, int step, int d) {
  char path[32];
  snprintf(path, sizeof path, "/fields/%s", kNames[d]);
  hid_t dset = H5Dopen2(file, path, H5P_DEFAULT);
  CHECK(dset >= 0, "H5Dopen %s", path);
  const int nd = d + 1;
  hid_t space = H5Dget_space(dset);
  hsize_t dims[3] = {1, 1, 1};
  CHECK(H5Sget_simple_extent_ndims(space) == nd, "%s rank", path);
  H5Sget_simple_extent_dims(space, dims, NULL);
  for (int i = 0; i < nd; ++i) CHECK(dims[i] == kDims[d][i], "%s dim %d is %llu", path, i, (unsigned long long)dims[i]);
  hid_t type = H5Dget_type(dset);
  CHECK(H5Tget_class(type) == H5T_FLOAT && H5Tget_size(type) == 8, "%s type", path);
  H5Tclose(type);

  /* This rank's slab of the last dimension, every row: crosses every writer's block. */
  hsize_t start[3] = {0, 0, 0}, count[3] = {dims[0], dims[1], dims[2]};
  block_of(dims[nd - 1], rank_, size_, &start[nd - 1], &count[nd - 1]);
  hsize_t n = count[0] * count[1] * count[2];
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  hid_t mem = H5Screate_simple(nd, count, NULL);
  double* buf = malloc((n ? n : 1) * sizeof(double));
  float* fbuf = malloc((n ? n : 1) * sizeof(float));
  int* ibuf = malloc((n ? n : 1) * sizeof(int));
  CHECK(H5Dread(dset, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf) >= 0, "H5Dread %s", path);
  CHECK(H5Dread(dset, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, fbuf) >= 0, "H5Dread %s as float", path);
  CHECK(H5Dread(dset, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, ibuf) >= 0, "H5Dread %s as int", path);
  hsize_t k = 0;
  for (hsize_t i = 0; i < count[0]; ++i)
    for (hsize_t j = 0; j < count[1]; ++j)
      for (hsize_t l = 0; l < count[2]; ++l, ++k) {
        hsize_t lin = ((i + start[0]) * dims[1] + j + start[1]) * dims[2] + l + start[2];
        double want = value_at(step, d, lin);
        CHECK(buf[k] == want, "%s[%llu] = %f, want %f", path, (unsigned long long)lin, buf[k], want);
        CHECK(fbuf[k] == (float)want, "%s[%llu] as float = %f", path, (unsigned long long)lin, (double)fbuf[k]);
        CHECK(ibuf[k] == (int)want, "%s[%llu] as int = %d", path, (unsigned long long)lin, ibuf[k]);
      }
  free(buf);
  free(fbuf);
  free(ibuf);
  H5Sclose(mem);

  /* Every other row (a strided selection of many blocks) into a strided memory selection. */
  hsize_t rows = (dims[0] + 1) / 2, per_row = dims[1] * dims[2];
  hsize_t fstart[3] = {0, 0, 0}, fstride[3] = {2, 1, 1}, fcount[3] = {rows, 1, 1}, fblock[3] = {1, dims[1], dims[2]};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, fstart, fstride, fcount, fblock);
  hsize_t mdim = rows * per_row * 2, mstart = 1, mstride = 2, mcount = rows * per_row;
  hid_t mem1 = H5Screate_simple(1, &mdim, NULL);
  H5Sselect_hyperslab(mem1, H5S_SELECT_SET, &mstart, &mstride, &mcount, NULL);
  double* sbuf = calloc(mdim, sizeof(double));
  CHECK(H5Dread(dset, H5T_NATIVE_DOUBLE, mem1, space, H5P_DEFAULT, sbuf) >= 0, "strided H5Dread %s", path);
  for (hsize_t r = 0; r < rows; ++r)
    for (hsize_t j = 0; j < per_row; ++j) {
      double got = sbuf[2 * (r * per_row + j) + 1], want = value_at(step, d, 2 * r * per_row + j);
      CHECK(got == want && sbuf[2 * (r * per_row + j)] == 0.0, "strided %s row %llu: %f, want %f", path,
            (unsigned long long)(2 * r), got, want);
    }
  free(sbuf);
  H5Sclose(mem1);

  /* A point selection. */
  hsize_t pts[4][3];
  for (int p = 0; p < 4; ++p)
    for (int i = 0; i < nd; ++i) pts[p][i] = (dims[i] - 1) * (hsize_t)p / 3;
  hsize_t pflat[12], np = 4;
  for (int p = 0; p < 4; ++p)
    for (int i = 0; i < nd; ++i) pflat[p * nd + i] = pts[p][i];
  H5Sselect_elements(space, H5S_SELECT_SET, 4, pflat);
  hid_t pmem = H5Screate_simple(1, &np, NULL);
  double pbuf[4];
  CHECK(H5Dread(dset, H5T_NATIVE_DOUBLE, pmem, space, H5P_DEFAULT, pbuf) >= 0, "point H5Dread %s", path);
  for (int p = 0; p < 4; ++p) {
    hsize_t lin = (pts[p][0] * dims[1] + (nd > 1 ? pts[p][1] : 0)) * dims[2] + (nd > 2 ? pts[p][2] : 0);
    CHECK(pbuf[p] == value_at(step, d, lin), "point %d of %s", p, path);
  }
  H5Sclose(pmem);
  H5Sclose(space);
  H5Dclose(dset);
}

static void check_bad_reads(hid_t file) {
  hid_t dset = H5Dopen2(file, "/fields/d1", H5P_DEFAULT);
  H5E_auto2_t func;
  void* data;
  H5Eget_auto2(H5E_DEFAULT, &func, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  /* Outside the extent: a file space larger than the dataset. */
  hsize_t big = kDims[0][0] + 10, start = kDims[0][0], count = 5;
  hid_t space = H5Screate_simple(1, &big, NULL);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &count, NULL);
  hid_t mem = H5Screate_simple(1, &count, NULL);
  double buf[5];
  /* (HDF5's native connector, which mode file passes to, does not check this.) */
  const char* mode = getenv("H5VOL_MODE");
  if (!mode || strcmp(mode, "file") != 0)
    CHECK(H5Dread(dset, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf) < 0, "a read outside the extent succeeded");
  /* No conversion from double to a compound type. */
  hid_t rt = row_type();
  Row rows[5];
  CHECK(H5Dread(dset, rt, mem, space, H5P_DEFAULT, rows) < 0, "a double -> compound read succeeded");
  H5Tclose(rt);
  CHECK(H5Dopen2(file, "/fields/nope", H5P_DEFAULT) < 0, "opening a missing dataset succeeded");
  H5Eset_auto2(H5E_DEFAULT, func, data);
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(dset);
}

static int read_once(const char* path) {
  hid_t fapl = mpio_fapl();
  const char* mode = getenv("H5VOL_MODE");
  if (mode && strcmp(mode, "file") == 0) /* passed to the native connector */
    CHECK(H5Fis_accessible(path, fapl) > 0, "H5Fis_accessible %s", path);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  CHECK(file >= 0, "H5Fopen %s", path);
  H5Pclose(fapl);

  int step = -1;
  hid_t a = H5Aopen(file, "step", H5P_DEFAULT);
  CHECK(a >= 0 && H5Aread(a, H5T_NATIVE_INT, &step) >= 0 && step > 0, "attribute step");
  H5Aclose(a);
  hid_t str16 = H5Tcopy(H5T_C_S1);
  H5Tset_size(str16, 16);
  char title[16];
  a = H5Aopen(file, "title", H5P_DEFAULT);
  CHECK(a >= 0 && H5Aread(a, str16, title) >= 0 && strcmp(title, "cove-h5vol-test") == 0, "attribute title");
  H5Aclose(a);
  H5Tclose(str16);
  hid_t vstr = H5Tcopy(H5T_C_S1);
  H5Tset_size(vstr, H5T_VARIABLE);
  char* notes[2] = {NULL, NULL};
  char want0[32];
  snprintf(want0, sizeof want0, "written at step %d", step);
  a = H5Aopen(file, "notes", H5P_DEFAULT);
  CHECK(a >= 0 && H5Aread(a, vstr, notes) >= 0, "attribute notes");
  CHECK(notes[0] && strcmp(notes[0], want0) == 0, "attribute notes[0] is \"%s\", want \"%s\"", notes[0] ? notes[0] : "(null)", want0);
  CHECK(notes[1] && strcmp(notes[1], "a second, longer note") == 0, "attribute notes[1] is \"%s\"", notes[1] ? notes[1] : "(null)");
  H5free_memory(notes[0]);
  H5free_memory(notes[1]);
  H5Aclose(a);
  H5Tclose(vstr);

  CHECK(H5Lexists(file, "fields", H5P_DEFAULT) > 0, "H5Lexists fields");
  CHECK(H5Lexists(file, "nope", H5P_DEFAULT) == 0, "H5Lexists nope");
  char names[256] = "";
  CHECK(H5Literate2(file, H5_INDEX_NAME, H5_ITER_INC, NULL, collect, names) >= 0, "H5Literate /");
  CHECK(strcmp(names, "ext,fields,names,table,") == 0, "links of /: %s", names);
  hid_t fields = H5Gopen2(file, "fields", H5P_DEFAULT);
  CHECK(fields >= 0, "H5Gopen fields");
  names[0] = '\0';
  CHECK(H5Literate2(fields, H5_INDEX_NAME, H5_ITER_INC, NULL, collect, names) >= 0, "H5Literate fields");
  CHECK(strcmp(names, "d1,d2,d3,") == 0, "links of /fields: %s", names);
  H5G_info_t ginfo;
  CHECK(H5Gget_info(fields, &ginfo) >= 0 && ginfo.nlinks == 3, "H5Gget_info");
  double units[3];
  float funits[3];
  a = H5Aopen(fields, "units", H5P_DEFAULT);
  CHECK(a >= 0 && H5Aread(a, H5T_NATIVE_DOUBLE, units) >= 0, "attribute units");
  CHECK(H5Aread(a, H5T_NATIVE_FLOAT, funits) >= 0, "attribute units as float");
  CHECK(units[0] == 1.5 && units[1] == 2.5 && units[2] == 3.5 + step && funits[2] == (float)(3.5 + step), "units");
  H5Aclose(a);
  H5Gclose(fields);

  for (int d = 0; d < 3; ++d) check_dataset(file, step, d);

  hid_t ext = H5Dopen2(file, "ext", H5P_DEFAULT);
  hid_t espace = H5Dget_space(ext);
  hsize_t edim = 0, emax = 0;
  H5Sget_simple_extent_dims(espace, &edim, &emax);
  CHECK(edim == kExt && emax == H5S_UNLIMITED, "ext extent %llu", (unsigned long long)edim);
  int ebuf[kExt];
  CHECK(H5Dread(ext, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ebuf) >= 0, "H5Dread ext");
  for (int i = 0; i < kExt; ++i) CHECK(ebuf[i] == i * 3 + step, "ext[%d] = %d", i, ebuf[i]);
  H5Sclose(espace);
  H5Dclose(ext);

  /* The compound table, read into a memory type with the fields in another order and one left out. */
  typedef struct {
    double x;
    int id;
  } Part;
  hid_t pt = H5Tcreate(H5T_COMPOUND, sizeof(Part));
  H5Tinsert(pt, "x", HOFFSET(Part, x), H5T_NATIVE_DOUBLE);
  H5Tinsert(pt, "id", HOFFSET(Part, id), H5T_NATIVE_INT);
  Part parts[kTable];
  hid_t table = H5Dopen2(file, "table", H5P_DEFAULT);
  CHECK(H5Dread(table, pt, H5S_ALL, H5S_ALL, H5P_DEFAULT, parts) >= 0, "H5Dread table");
  for (int i = 0; i < kTable; ++i)
    CHECK(parts[i].id == i + 100 * step && parts[i].x == i * 0.25 + step, "table row %d", i);
  Row rows[kTable];
  hid_t rt = row_type();
  CHECK(H5Dread(table, rt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0, "H5Dread table (whole rows)");
  for (int i = 0; i < kTable; ++i) {
    char want[8];
    snprintf(want, sizeof want, "row%d", i);
    CHECK(strcmp(rows[i].name, want) == 0, "table row %d name %s", i, rows[i].name);
  }
  H5Tclose(rt);
  H5Tclose(pt);
  H5Dclose(table);
  hid_t s8 = H5Tcopy(H5T_C_S1);
  H5Tset_size(s8, kStrLen);
  char strs[kStrings][kStrLen];
  hid_t nm = H5Dopen2(file, "names", H5P_DEFAULT);
  if (getenv("H5VOL_NAMES_FILE_ONLY")) {
    /* A dataset rule kept /names in the file only: reading it from memory fails. */
    H5E_auto2_t func;
    void* data;
    H5Eget_auto2(H5E_DEFAULT, &func, &data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    CHECK(H5Dread(nm, s8, H5S_ALL, H5S_ALL, H5P_DEFAULT, strs) < 0, "a file-only dataset was read from memory");
    H5Eset_auto2(H5E_DEFAULT, func, data);
  } else {
    CHECK(H5Dread(nm, s8, H5S_ALL, H5S_ALL, H5P_DEFAULT, strs) >= 0, "H5Dread names");
    CHECK(strcmp(strs[0], "alpha") == 0 && strcmp(strs[3], "delta") == 0, "names %s %s", strs[0], strs[3]);
  }
  H5Tclose(s8);
  H5Dclose(nm);

  check_bad_reads(file);
  CHECK(H5Fclose(file) >= 0, "H5Fclose");
  return step;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(program_comm(), &rank_);
  MPI_Comm_size(program_comm(), &size_);
  if (argc < 3) {
    fprintf(stderr, "usage: reader FILE OPENS | reader FILE --missing\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (strcmp(argv[2], "--missing") == 0) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = mpio_fapl();
    hid_t file = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
    CHECK(file < 0, "H5Fopen of %s, which nobody writes, succeeded", argv[1]);
    if (rank_ == 0) {
      H5Eprint2(H5E_DEFAULT, stdout);  /* the script checks that the entry names the file */
      printf("missing: H5Fopen failed as it should\n");
    }
    MPI_Finalize();
    return 0;
  }
  /* FILE may list several files, "a.h5,b.h5" (fan-in): each open reads every one of them. */
  const int opens = atoi(argv[2]);
  char seen[1024] = "steps:";
  for (int i = 0; i < opens; ++i) {
    char files[512];
    snprintf(files, sizeof files, "%s", argv[1]);
    char* save = NULL; /* strtok_r: HDF5 itself calls strtok while opening */
    for (char* f = strtok_r(files, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
      int step = read_once(f);
      char one[16];
      snprintf(one, sizeof one, " %d", step);
      strcat(seen, one);
    }
  }
  if (rank_ == 0) printf("%s\n", seen);
  MPI_Finalize();
  return 0;
}
