#pragma once

#include "h5vol/type_ref.hpp"

#include <cove/box.hpp>

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cove::h5vol {

// An HDF5 identifier this code owns (a copied type, space or property list).
class Hid {
 public:
  Hid() = default;
  explicit Hid(hid_t id) : id_(id) {}
  ~Hid() { reset(); }
  Hid(Hid&& o) noexcept : id_(o.id_) { o.id_ = H5I_INVALID_HID; }
  Hid& operator=(Hid&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  hid_t get() const { return id_; }
  hid_t release() {
    hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }
  void reset() {
    if (id_ >= 0) H5Idec_ref(id_);
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

struct Attribute {
  std::string name;
  TypeRef type;  // the stored (file) type
  Hid space;
  std::vector<std::byte> data;  // npoints * size of `type`
  std::int64_t corder = 0;
  std::string named_type;  // created with a committed datatype: its path (H5Aget_type gives it committed)
  H5T_cset_t name_cset = H5T_CSET_ASCII;  // its creation list's character set of the name (H5Aget_create_plist)
};

struct Node {
  // soft: a soft link (H5Lcreate_soft) to `target`; datatype: a committed datatype (`type`);
  // external: an external link (H5Lcreate_external), `target` its value as HDF5 packs it
  // (H5Lget_val, H5Lunpack_elink_val: a flags byte, the file name and the object path, each ended by '\0')
  enum class Kind : std::uint8_t { group, dataset, soft, datatype, external };
  Kind kind = Kind::group;
  std::string path;  // "/" or "/a/b"; "" while anonymous (H5Dcreate_anon, H5Gcreate_anon, not linked yet)
  // Datasets: the Cove variable's name within the file ("h5:<file>:<var>"):
  // the path it was created at, or "#anon/v<version>/<id>" for an anonymous
  // one; it stays when the dataset is linked, moved or linked again.
  std::string var;
  std::string named_type;  // datasets created with a committed datatype: its path (H5Dget_type gives it committed)
  std::string target;  // soft links: the path they name (followed by lookup, never stored resolved); external links: their value
  std::uint64_t id = 0;
  std::map<std::string, std::shared_ptr<Node>> links;  // groups
  std::vector<std::string> link_order;                  // the link names in creation order
  std::map<std::string, std::int64_t> link_corder;      // each link's creation order (never reused)
  std::int64_t next_link_corder = 0;
  std::vector<std::shared_ptr<Attribute>> attributes;  // in creation order
  // Datasets: seconds since the epoch when it was created if its creation list tracks
  // times (H5Pset_obj_track_times, on by default), else 0: H5Oget_info's times,
  // H5Gget_objinfo's mtime. Groups and committed datatypes: 0, as natively in a file
  // of the default format (their version-1 object headers keep no times).
  std::int64_t mtime = 0;
  std::int64_t next_corder = 0;
  // H5Oincr_refcount / H5Odecr_refcount: added to the count of hard links (H5Oget_info's rc).
  // In this process only: not published with the file's metadata.
  std::int64_t ref_adjust = 0;
  // datasets (and committed datatypes: theirs)
  TypeRef type;
  std::vector<hsize_t> dims;
  std::vector<hsize_t> maxdims;
  Hid dcpl;  // datasets: the creation list; groups: theirs (the root: the file's creation list)
  bool file_only = false;  // mode both, dataset rule file: in the file, not staged
  bool null_space = false;  // an H5S_NULL dataspace: no elements at all
  // A variable-length dataset's elements (vlen.hpp), by linear index: a
  // string's bytes, or a sequence's elements in the base type; empty: unwritten.
  std::vector<std::vector<std::byte>> vlen;
  // Transfer shallow or local: the producer holds the bytes, and a version
  // goes (is retired) when the dataset is written in a later one.
  bool held = false;
  // Some H5Dwrite put data into this version (H5Dget_space_status, storage size).
  bool written = false;
  // A writer's own puts into the open version, for its reads before the
  // version is sealed: cells outside them read as the fill value (one process only).
  // Not kept across processes; `written_overflow` when there were too many to keep.
  std::vector<Box> written_boxes;
  bool written_overflow = false;

  Attribute* find_attribute(const std::string& name) const;
  // Removes the link `leaf` of this group (H5Ldelete, H5Lmove).
  void remove_link(const std::string& leaf);
  hid_t make_space() const;  // a new simple (scalar, null) dataspace of dims / maxdims
};

// Bytes the metadata of a file version travels as (put_meta).
std::vector<std::byte> serialize(const Node& root);
// Rebuilds a tree; `next_id` numbers the nodes. Throws Failure on bad bytes.
std::shared_ptr<Node> deserialize(const std::vector<std::byte>& bytes, std::uint64_t& next_id);

std::string join_path(const std::string& parent, const std::string& name);

// Calls fn(node) for every dataset held in memory (not file_only) under
// `root`, each once, however many hard links (or cycles) reach it.
void for_each_memory_dataset(const std::shared_ptr<Node>& root, const std::function<void(Node&)>& fn);

}  // namespace cove::h5vol
