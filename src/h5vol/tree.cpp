#include "h5vol/tree.hpp"

#include "h5vol/errors.hpp"
#include "h5vol/vlen.hpp"

#include <set>
#include <cstring>
#include <unordered_map>
#include <cstdio>

namespace cove::h5vol {
namespace {

constexpr std::uint32_t kMagic = 0x43483533;  // "CH53"

class Writer {
 public:
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void bytes(const void* p, std::size_t n) {
    u64(n);
    raw(p, n);
  }
  void str(const std::string& s) { bytes(s.data(), s.size()); }
  void type(const TypeRef& t) { bytes(t.encoded().data(), t.encoded().size()); }
  void space(hid_t s) {
    std::size_t n = 0;
    check(H5Sencode2(s, nullptr, &n, H5P_DEFAULT), "H5Sencode2");
    std::vector<std::byte> b(n);
    check(H5Sencode2(s, b.data(), &n, H5P_DEFAULT), "H5Sencode2");
    bytes(b.data(), n);
  }
  void plist(hid_t p) {
    std::size_t len = 0;
    check(H5Pencode2(p, nullptr, &len, H5P_DEFAULT), "H5Pencode2");
    std::vector<std::byte> b(len);
    check(H5Pencode2(p, b.data(), &len, H5P_DEFAULT), "H5Pencode2");
    bytes(b.data(), len);
  }
  std::vector<std::byte> out;
  std::unordered_map<const Node*, std::uint64_t> seen;  // nodes written, in order

 private:
  // resize + memcpy, not insert: GCC 12 flags insert's move of the (empty)
  // old elements when the vector first grows (-Wstringop-overflow, a false positive).
  void raw(const void* p, std::size_t n) {
    if (n == 0) return;
    const auto at = out.size();
    out.resize(at + n);
    std::memcpy(out.data() + at, p, n);
  }
};

class Reader {
 public:
  explicit Reader(const std::vector<std::byte>& b) : b_(b) {}
  std::uint64_t u64() {
    std::uint64_t v;
    raw(&v, sizeof v);
    return v;
  }
  std::vector<std::byte> bytes() {
    const auto n = u64();
    if (n > b_.size() - pos_) fail("file metadata is truncated");
    std::vector<std::byte> v(b_.begin() + static_cast<std::ptrdiff_t>(pos_),
                             b_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
    return v;
  }
  std::string str() {
    auto v = bytes();
    return {reinterpret_cast<const char*>(v.data()), v.size()};
  }
  TypeRef type() { return TypeRef::from_encoded(bytes()); }
  Hid space() {
    auto v = bytes();
    return Hid(check(H5Sdecode(v.data()), "H5Sdecode of a stored dataspace"));
  }
  std::vector<std::shared_ptr<Node>> nodes;  // read so far, in order (kSeen refers to them)

 private:
  void raw(void* p, std::size_t n) {
    if (n > b_.size() - pos_) fail("file metadata is truncated");
    std::memcpy(p, b_.data() + pos_, n);
    pos_ += n;
  }

 private:
  const std::vector<std::byte>& b_;
  std::size_t pos_ = 0;
};

// A node met again (a second hard link to it, maybe a cycle) is written as a
// reference to its first appearance, so that it stays one object.
constexpr std::uint64_t kSeen = 0xff;

void write_node(Writer& w, const Node& n) {
  if (auto it = w.seen.find(&n); it != w.seen.end()) {
    w.u64(kSeen);
    w.u64(it->second);
    return;
  }
  w.seen.emplace(&n, w.seen.size());
  w.u64(static_cast<std::uint64_t>(n.kind));
  if (n.kind == Node::Kind::soft || n.kind == Node::Kind::external) {
    w.str(n.target);
    return;
  }
  w.u64(static_cast<std::uint64_t>(n.mtime));
  w.u64(n.attributes.size());
  for (const auto& a : n.attributes) {
    w.str(a->name);
    w.type(a->type);
    w.space(a->space.get());
    w.bytes(a->data.data(), a->data.size());
    w.str(a->named_type);
    w.u64(static_cast<std::uint64_t>(a->name_cset));
  }
  if (n.kind == Node::Kind::datatype) {
    w.type(n.type);
    return;
  }
  if (n.kind == Node::Kind::dataset) {
    w.type(n.type);
    w.u64(n.dims.size());
    for (std::size_t d = 0; d < n.dims.size(); ++d) {
      w.u64(n.dims[d]);
      w.u64(n.maxdims[d]);
    }
    // A variable-length fill value goes beside the list (vlen.hpp: H5Pencode keeps only its pointers).
    const auto vfill = is_vlen(n.type.get()) ? vlen_fill(n.dcpl.get(), n.type.get()) : std::nullopt;
    if (vfill) {
      Hid bare(check(H5Pcopy(n.dcpl.get()), "H5Pcopy"));
      check(H5Pset_fill_value(bare.get(), n.type.get(), nullptr), "H5Pset_fill_value");
      w.plist(bare.get());
    } else {
      w.plist(n.dcpl.get());
    }
    w.u64((n.file_only ? 1u : 0u) | (n.held ? 2u : 0u) | (n.written ? 4u : 0u) | (n.null_space ? 8u : 0u) |
          (vfill ? 16u : 0u));
    if (vfill) w.bytes(vfill->data(), vfill->size());
    w.str(n.var);
    w.str(n.named_type);
    w.u64(n.vlen.size());
    for (const auto& e : n.vlen) w.bytes(e.data(), e.size());
    return;
  }
  w.u64(n.dcpl.get() >= 0 ? 1 : 0);
  if (n.dcpl.get() >= 0) w.plist(n.dcpl.get());
  w.u64(n.links.size());
  w.u64(static_cast<std::uint64_t>(n.next_link_corder));
  for (const auto& name : n.link_order) {  // in creation order
    w.str(name);
    w.u64(static_cast<std::uint64_t>(n.link_corder.at(name)));
    write_node(w, *n.links.at(name));
  }
}

std::shared_ptr<Node> read_node(Reader& r, const std::string& path, std::uint64_t& next_id, int depth) {
  if (depth > 256) fail("file metadata nests groups too deep");
  const auto kind = r.u64();
  if (kind == kSeen) {
    const auto at = r.u64();
    if (at >= r.nodes.size()) fail("file metadata refers to an object it has not described");
    return r.nodes[static_cast<std::size_t>(at)];
  }
  auto n = std::make_shared<Node>();
  r.nodes.push_back(n);
  n->path = path;
  n->id = next_id++;
  if (kind > static_cast<std::uint64_t>(Node::Kind::external)) fail("file metadata has an unknown object kind");
  n->kind = static_cast<Node::Kind>(kind);
  if (n->kind == Node::Kind::soft || n->kind == Node::Kind::external) {
    n->target = r.str();
    return n;
  }
  n->mtime = static_cast<std::int64_t>(r.u64());
  const auto nattr = r.u64();
  for (std::uint64_t i = 0; i < nattr; ++i) {
    auto a = std::make_shared<Attribute>();
    a->name = r.str();
    a->type = r.type();
    a->space = r.space();
    auto data = r.bytes();
    a->data = std::move(data);
    a->named_type = r.str();
    const auto cset = r.u64();
    if (cset != H5T_CSET_ASCII && cset != H5T_CSET_UTF8) fail("file metadata has an unknown character set");
    a->name_cset = static_cast<H5T_cset_t>(cset);
    a->corder = n->next_corder++;
    n->attributes.push_back(std::move(a));
  }
  if (n->kind == Node::Kind::datatype) {
    n->type = r.type();
    return n;
  }
  if (n->kind == Node::Kind::dataset) {
    n->type = r.type();
    const auto rank = r.u64();
    if (rank > H5S_MAX_RANK) fail("file metadata has a dataset of rank > 32");
    for (std::uint64_t d = 0; d < rank; ++d) {
      n->dims.push_back(r.u64());
      n->maxdims.push_back(r.u64());
    }
    auto plist = r.bytes();
    n->dcpl = Hid(check(H5Pdecode(plist.data()), "H5Pdecode of a dataset creation list"));
    const auto flags = r.u64();
    n->file_only = (flags & 1u) != 0;
    n->held = (flags & 2u) != 0;
    n->written = (flags & 4u) != 0;
    n->null_space = (flags & 8u) != 0;
    if (flags & 16u) set_vlen_fill(n->dcpl.get(), n->type.get(), r.bytes());
    n->var = r.str();
    n->named_type = r.str();
    const auto nvlen = r.u64();
    if (nvlen > (1u << 28)) fail("file metadata has too many variable-length elements");
    n->vlen.reserve(static_cast<std::size_t>(nvlen));
    for (std::uint64_t i = 0; i < nvlen; ++i) n->vlen.push_back(r.bytes());
    return n;
  }
  if (r.u64() != 0) {
    auto plist = r.bytes();
    n->dcpl = Hid(check(H5Pdecode(plist.data()), "H5Pdecode of a group creation list"));
  }
  const auto nlinks = r.u64();
  n->next_link_corder = static_cast<std::int64_t>(r.u64());
  for (std::uint64_t i = 0; i < nlinks; ++i) {
    auto name = r.str();
    n->link_corder[name] = static_cast<std::int64_t>(r.u64());
    n->link_order.push_back(name);
    n->links[name] = read_node(r, join_path(path, name), next_id, depth + 1);
  }
  return n;
}

}  // namespace

std::string join_path(const std::string& parent, const std::string& name) {
  return parent == "/" ? "/" + name : parent + "/" + name;
}

Attribute* Node::find_attribute(const std::string& name) const {
  for (const auto& a : attributes)
    if (a->name == name) return a.get();
  return nullptr;
}

void Node::remove_link(const std::string& leaf) {
  links.erase(leaf);
  link_corder.erase(leaf);
  for (auto it = link_order.begin(); it != link_order.end(); ++it)
    if (*it == leaf) {
      link_order.erase(it);
      break;
    }
  if (links.empty()) next_link_corder = 0;  // as natively: an empty group's creation order starts again at 0
}

hid_t Node::make_space() const {
  if (null_space) return check(H5Screate(H5S_NULL), "H5Screate");
  if (dims.empty()) return check(H5Screate(H5S_SCALAR), "H5Screate");
  return check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data()), "H5Screate_simple");
}

std::vector<std::byte> serialize(const Node& root) {
  Writer w;
  w.u64(kMagic);
  write_node(w, root);
  return std::move(w.out);
}

std::shared_ptr<Node> deserialize(const std::vector<std::byte>& bytes, std::uint64_t& next_id) {
  Reader r(bytes);
  if (r.u64() != kMagic) fail("the metadata under this file's name was not written by the Cove VOL connector");
  return read_node(r, "/", next_id, 0);
}

void for_each_memory_dataset(const std::shared_ptr<Node>& root, const std::function<void(Node&)>& fn) {
  std::vector<std::shared_ptr<Node>> stack{root};
  std::set<const Node*> seen;
  while (!stack.empty()) {
    auto n = stack.back();
    stack.pop_back();
    if (!seen.insert(n.get()).second) continue;
    for (auto& [leaf, child] : n->links) stack.push_back(child);
    if (n->kind == Node::Kind::dataset && !n->file_only) fn(*n);
  }
}

}  // namespace cove::h5vol
