#include "net/messages.hpp"

#include <cmath>
#include <tuple>

#include "core/fail.hpp"

namespace cove::net {

using detail::fail;

namespace {

Bytes blob(WireReader& in) {
  const auto b = in.bytes();
  return Bytes(b.begin(), b.end());
}

// The smallest encodings, for the count checks.
constexpr std::size_t kMinString = 4;
constexpr std::size_t kMinBox = 1 + 2 * 8;

void write_layouts(WireWriter& out, const std::vector<Layout>& layouts) {
  out.u32(static_cast<std::uint32_t>(layouts.size()));
  for (const Layout& l : layouts) out.str(l.to_string());
}
std::vector<Layout> read_layouts(WireReader& in) {
  std::vector<Layout> out(in.count("layouts", kMinString, kMaxCount));
  for (auto& l : out) l = Layout::parse(in.str());
  return out;
}

void write_optional_box(WireWriter& out, const std::optional<Box>& b) {
  out.u8(b ? 1 : 0);
  if (b) out.box(*b);
}
std::optional<Box> read_optional_box(WireReader& in) {
  const std::uint8_t has = in.u8();
  if (has > 1) fail(Code::Protocol, "optional box flag ", int{has}, " is not 0 or 1");
  if (!has) return std::nullopt;
  return in.box();
}

bool read_flag(WireReader& in, const char* what) {
  const std::uint8_t v = in.u8();
  if (v > 1) fail(Code::Protocol, what, " flag ", int{v}, " is not 0 or 1");
  return v != 0;
}

}  // namespace

const char* op_name(Op op) noexcept {
  const OpInfo* i = op_info(static_cast<std::uint16_t>(op));
  return i ? i->name : "unknown";
}

std::uint8_t encode_reorg(std::optional<Reorg> method) noexcept {
  return method ? static_cast<std::uint8_t>(*method) : 0;
}

std::optional<Reorg> decode_reorg(std::uint8_t code) {
  if (code == 0) return std::nullopt;
  if (code > static_cast<std::uint8_t>(Reorg::Sahr))
    fail(Code::Protocol, "reorganization method ", int{code}, " is not one this build knows");
  return static_cast<Reorg>(code);
}

Empty Empty::decode(WireReader&) { return {}; }

void HelloRequest::encode(WireWriter& out) const {
  out.u16(protocol).u8(static_cast<std::uint8_t>(role)).str(address);
}
HelloRequest HelloRequest::decode(WireReader& in) {
  HelloRequest m;
  m.protocol = in.u16();
  const std::uint8_t role = in.u8();
  if (role != static_cast<std::uint8_t>(Role::Client) && role != static_cast<std::uint8_t>(Role::Server))
    fail(Code::Protocol, "hello with role ", int{role}, " (1: client, 2: server)");
  m.role = static_cast<Role>(role);
  m.address = in.str();
  return m;
}

void HelloReply::encode(WireWriter& out) const { out.u16(protocol).str(address).bytes(nonce); }
HelloReply HelloReply::decode(WireReader& in) {
  HelloReply m;
  m.protocol = in.u16();
  m.address = in.str();
  m.nonce = blob(in);
  return m;
}

void JoinRequest::encode(WireWriter& out) const { out.bytes(proof); }
JoinRequest JoinRequest::decode(WireReader& in) { return {blob(in)}; }

void DefineRequest::encode(WireWriter& out) const {
  out.str(name).str(dtype.name()).u8(static_cast<std::uint8_t>(ndim));
  write_optional_box(out, shape);
  out.u8(encode_reorg(reorg));
  write_layouts(out, layouts);
  out.bytes(fill);
}
DefineRequest DefineRequest::decode(WireReader& in) {
  DefineRequest m;
  m.name = in.str();
  m.dtype = DType::parse(in.str());
  m.ndim = in.u8();
  m.shape = read_optional_box(in);
  m.reorg = decode_reorg(in.u8());
  m.layouts = read_layouts(in);
  m.fill = blob(in);
  return m;
}

void PieceHeader::encode(WireWriter& out) const {
  out.str(var).u64(version).box(box).str(layout.to_string()).str(dtype.name()).u64(bytes).u8(define ? 1 : 0);
  if (define) define->encode(out);
}
PieceHeader PieceHeader::decode(WireReader& in) {
  PieceHeader m;
  m.var = in.str();
  m.version = in.u64();
  m.box = in.box();
  m.layout = Layout::parse(in.str());
  m.dtype = DType::parse(in.str());
  m.bytes = in.u64();
  const std::uint8_t has = in.u8();
  if (has > 1) fail(Code::Protocol, "a piece's definition flag ", int{has}, " is not 0 or 1");
  if (has) m.define = DefineRequest::decode(in);
  return m;
}

void PutRequest::encode(WireWriter& out) const {
  piece.encode(out);
  out.bytes(key).u8(encode_reorg(reorg));
}
PutRequest PutRequest::decode(WireReader& in) {
  PutRequest m;
  m.piece = PieceHeader::decode(in);
  m.key = blob(in);
  m.reorg = decode_reorg(in.u8());
  return m;
}

void PutGrantRequest::encode(WireWriter& out) const {
  piece.encode(out);
  out.u8(encode_reorg(reorg)).bytes(key);
}
PutGrantRequest PutGrantRequest::decode(WireReader& in) {
  PutGrantRequest m;
  m.piece = PieceHeader::decode(in);
  m.reorg = decode_reorg(in.u8());
  m.key = blob(in);
  return m;
}

void PutGrantReply::encode(WireWriter& out) const { out.u64(grant).bytes(key); }
PutGrantReply PutGrantReply::decode(WireReader& in) {
  PutGrantReply m;
  m.grant = in.u64();
  m.key = blob(in);
  return m;
}

void PutPublishRequest::encode(WireWriter& out) const { out.u64(grant); }
PutPublishRequest PutPublishRequest::decode(WireReader& in) { return {in.u64()}; }

void PutLocalRequest::encode(WireWriter& out) const {
  piece.encode(out);
  out.str(owner).bytes(key).u8(encode_reorg(reorg));
}
PutLocalRequest PutLocalRequest::decode(WireReader& in) {
  PutLocalRequest m;
  m.piece = PieceHeader::decode(in);
  m.owner = in.str();
  m.key = blob(in);
  m.reorg = decode_reorg(in.u8());
  return m;
}

void PutInlineRequest::encode(WireWriter& out) const {
  piece.encode(out);
  out.bytes(data).u8(encode_reorg(reorg));
}
PutInlineRequest PutInlineRequest::decode(WireReader& in) {
  PutInlineRequest m;
  m.piece = PieceHeader::decode(in);
  m.data = blob(in);
  m.reorg = decode_reorg(in.u8());
  if (m.data.size() != m.piece.bytes)
    fail(Code::Protocol, "inline put announces ", m.piece.bytes, " bytes but carries ", m.data.size());
  return m;
}

void CopyRef::encode(WireWriter& out) const { out.str(holder).bytes(key).u64(id); }
CopyRef CopyRef::decode(WireReader& in) {
  CopyRef m;
  m.holder = in.str();
  m.key = blob(in);
  m.id = in.u64();
  if (m.holder.empty() && (!m.key.empty() || m.id != 0)) fail(Code::Protocol, "a piece's copy without its holder");
  return m;
}

void CopyRequest::encode(WireWriter& out) const {
  piece.encode(out);
  out.bytes(key).bytes(data).u8(restored ? 1 : 0);
}
CopyRequest CopyRequest::decode(WireReader& in) {
  CopyRequest m;
  m.piece = PieceHeader::decode(in);
  m.key = blob(in);
  m.data = blob(in);
  m.restored = read_flag(in, "restored");
  if (m.key.empty() == m.data.empty()) fail(Code::Protocol, "a copy carries its bytes or names a memory key: one of the two");
  if (!m.data.empty() && (m.data.size() != m.piece.bytes || m.data.size() > kEagerBytes))
    fail(Code::Protocol, "a copy carries ", m.data.size(), " bytes for a piece of ", m.piece.bytes);
  return m;
}
void CopyReply::encode(WireWriter& out) const { out.u64(id).bytes(key); }
CopyReply CopyReply::decode(WireReader& in) {
  CopyReply m;
  m.id = in.u64();
  m.key = blob(in);
  return m;
}

void IndexAddRequest::encode(WireWriter& out) const {
  piece.encode(out);
  out.str(holder).bytes(key).u64(piece_id);
  copy.encode(out);
}
IndexAddRequest IndexAddRequest::decode(WireReader& in) {
  IndexAddRequest m;
  m.piece = PieceHeader::decode(in);
  m.holder = in.str();
  m.key = blob(in);
  m.piece_id = in.u64();
  m.copy = CopyRef::decode(in);
  if (m.holder.empty()) fail(Code::Protocol, "index entry without the holder's address");
  return m;
}

void ReleaseRequest::encode(WireWriter& out) const { out.str(var).u64(version).box(box).str(owner); }
ReleaseRequest ReleaseRequest::decode(WireReader& in) {
  ReleaseRequest m;
  m.var = in.str();
  m.version = in.u64();
  m.box = in.box();
  m.owner = in.str();
  return m;
}

void CountReply::encode(WireWriter& out) const { out.u32(count); }
CountReply CountReply::decode(WireReader& in) { return {in.u32()}; }

void QueryRequest::encode(WireWriter& out) const {
  // Which version answers, in one byte: 0 exactly `version`, 1 the newest
  // covering one at or after it, 2 the oldest such.
  const std::uint8_t pick = latest ? (oldest ? 2 : 1) : 0;
  out.str(var).u64(version).u8(pick).box(region).i64(timeout_ms).str(layout.to_string()).u32(eager_max);
  out.u8(encode_reorg(reorg)).i32(shard);
}
QueryRequest QueryRequest::decode(WireReader& in) {
  QueryRequest m;
  m.var = in.str();
  m.version = in.u64();
  const std::uint8_t pick = in.u8();
  if (pick > 2) fail(Code::Protocol, "query: version pick ", static_cast<unsigned>(pick), " (0, 1 or 2)");
  m.latest = pick != 0;
  m.oldest = pick == 2;
  m.region = in.box();
  m.timeout_ms = in.i64();
  m.layout = Layout::parse(in.str());
  m.eager_max = in.u32();
  m.reorg = decode_reorg(in.u8());
  m.shard = in.i32();
  if (m.shard < -1) fail(Code::Protocol, "query for shard ", m.shard);
  return m;
}

void QueryPiece::encode(WireWriter& out) const {
  out.box(box).str(layout.to_string()).str(holder).bytes(key).u64(piece).u8(replica ? 1 : 0);
  if (replica) out.bytes(source);
  copy.encode(out);
  out.u32(static_cast<std::uint32_t>(visible.size()));
  for (const Box& b : visible) out.box(b);
}
QueryPiece QueryPiece::decode(WireReader& in) {
  QueryPiece m;
  m.box = in.box();
  m.layout = Layout::parse(in.str());
  m.holder = in.str();
  m.key = blob(in);
  m.piece = in.u64();
  m.replica = read_flag(in, "replica");
  m.source = m.replica ? blob(in) : m.key;
  m.copy = CopyRef::decode(in);
  m.visible.resize(in.count("visible boxes", 17, kMaxCount));
  for (Box& b : m.visible) {
    b = in.box();
    if (b.ndim != m.box.ndim || !m.box.contains(b))
      fail(Code::Protocol, "a visible part ", b.to_string(), " lies outside its piece ", m.box.to_string());
  }
  return m;
}

void QueryReply::encode(WireWriter& out) const {
  out.u64(version).str(dtype.name());
  write_optional_box(out, shape);
  out.u8(encode_reorg(method)).u64(lease).u8(data ? 1 : 0);
  if (data) {
    out.bytes(*data);
    return;
  }
  out.u32(static_cast<std::uint32_t>(pieces.size()));
  for (const QueryPiece& p : pieces) p.encode(out);
  out.u32(static_cast<std::uint32_t>(holes.size()));
  for (const Box& b : holes) out.box(b);
  out.bytes(fill);
}
QueryReply QueryReply::decode(WireReader& in) {
  QueryReply m;
  m.version = in.u64();
  m.dtype = DType::parse(in.str());
  m.shape = read_optional_box(in);
  const auto method = decode_reorg(in.u8());
  if (!method) fail(Code::Protocol, "a query answer without the method in force");
  m.method = *method;
  m.lease = in.u64();
  if (read_flag(in, "eager")) {
    m.data = blob(in);
    return m;
  }
  m.pieces.resize(in.count("pieces", kMinBox + 3 * kMinString + 9, kMaxCount));
  for (auto& p : m.pieces) p = QueryPiece::decode(in);
  m.holes.resize(in.count("holes", kMinBox, kMaxCount));
  for (Box& b : m.holes) b = in.box();
  m.fill = blob(in);
  if (m.fill.size() != (m.holes.empty() ? 0 : m.dtype.size()))
    fail(Code::Protocol, "a query answer with ", m.holes.size(), " holes and a fill value of ", m.fill.size(),
         " bytes for dtype ", m.dtype.name());
  return m;
}

void LookupRequest::encode(WireWriter& out) const { out.str(var).i64(timeout_ms); }
LookupRequest LookupRequest::decode(WireReader& in) {
  LookupRequest m;
  m.var = in.str();
  m.timeout_ms = in.i64();
  return m;
}
void LookupReply::encode(WireWriter& out) const {
  out.str(dtype.name()).u8(static_cast<std::uint8_t>(ndim));
  write_optional_box(out, shape);
  out.bytes(fill);
}
LookupReply LookupReply::decode(WireReader& in) {
  LookupReply m;
  m.dtype = DType::parse(in.str());
  m.ndim = in.u8();
  if (m.ndim < 1 || m.ndim > kMaxDims) fail(Code::Protocol, "a definition with ", m.ndim, " dimensions");
  m.shape = read_optional_box(in);
  if (m.shape && m.shape->ndim != m.ndim)
    fail(Code::Protocol, "a definition of ", m.ndim, " dimensions with a shape of ", m.shape->ndim);
  m.fill = blob(in);
  if (!m.fill.empty() && m.fill.size() != m.dtype.size())
    fail(Code::Protocol, "a fill value of ", m.fill.size(), " bytes for dtype ", m.dtype.name());
  return m;
}

void SealRequest::encode(WireWriter& out) const {
  out.u32(static_cast<std::uint32_t>(vars.size()));
  for (const std::string& v : vars) out.str(v);
  out.u64(version);
  out.u8(then_meta ? 1 : 0);
  if (then_meta) then_meta->encode(out);
}
SealRequest SealRequest::decode(WireReader& in) {
  SealRequest m;
  m.vars.resize(in.count("variables", kMinString, kMaxCount));
  for (std::string& v : m.vars) v = in.str();
  m.version = in.u64();
  const std::uint8_t has = in.u8();
  if (has > 1) fail(Code::Protocol, "a seal's metadata flag ", int{has}, " is not 0 or 1");
  if (has) m.then_meta = MetaPutRequest::decode(in);
  return m;
}
void SealReply::encode(WireWriter& out) const {
  out.u32(static_cast<std::uint32_t>(already.size()));
  for (const bool a : already) out.u8(a ? 1 : 0);
}
SealReply SealReply::decode(WireReader& in) {
  SealReply m;
  m.already.resize(in.count("variables", 1, kMaxCount));
  for (std::size_t i = 0; i < m.already.size(); ++i) m.already[i] = read_flag(in, "already sealed");
  return m;
}

void DeriveRequest::encode(WireWriter& out) const {
  out.u32(static_cast<std::uint32_t>(vars.size()));
  for (const std::string& v : vars) out.str(v);
  out.u64(from).u64(to).u8(check_only ? 1 : 0);
}
DeriveRequest DeriveRequest::decode(WireReader& in) {
  DeriveRequest m;
  m.vars.resize(in.count("variables", kMinString, kMaxCount));
  for (std::string& v : m.vars) v = in.str();
  m.from = in.u64();
  m.to = in.u64();
  m.check_only = read_flag(in, "check only");
  return m;
}
void UndefineRequest::encode(WireWriter& out) const {
  out.u32(static_cast<std::uint32_t>(vars.size()));
  for (const std::string& v : vars) out.str(v);
}
UndefineRequest UndefineRequest::decode(WireReader& in) {
  UndefineRequest m;
  m.vars.resize(in.count("variables", kMinString, kMaxCount));
  for (std::string& v : m.vars) v = in.str();
  return m;
}
void RecopyRequest::encode(WireWriter& out) const {
  out.str(var).u64(version).str(holder).u64(piece_id);
  copy.encode(out);
}
RecopyRequest RecopyRequest::decode(WireReader& in) {
  RecopyRequest m;
  m.var = in.str();
  m.version = in.u64();
  m.holder = in.str();
  m.piece_id = in.u64();
  m.copy = CopyRef::decode(in);
  if (!m.copy) fail(Code::Protocol, "a recopy of piece ", m.piece_id, " without the copy");
  return m;
}

void BackupEntry::encode(WireWriter& out) const {
  entry.encode(out);
  out.u32(static_cast<std::uint32_t>(visible.size()));
  for (const Box& b : visible) out.box(b);
}
BackupEntry BackupEntry::decode(WireReader& in) {
  BackupEntry m;
  m.entry = IndexAddRequest::decode(in);
  m.visible.resize(in.count("visible boxes", 17, kMaxCount));
  for (Box& b : m.visible) {
    b = in.box();
    if (!m.entry.piece.box.contains(b))
      fail(Code::Protocol, "a backup entry's visible part ", b.to_string(), " is outside its piece ",
           m.entry.piece.box.to_string());
  }
  return m;
}

void BackupRequest::encode(WireWriter& out) const {
  out.i32(shard).u8(static_cast<std::uint8_t>(stage)).str(var).u64(version);
  out.u32(static_cast<std::uint32_t>(entries.size()));
  for (const BackupEntry& e : entries) e.encode(out);
}
BackupRequest BackupRequest::decode(WireReader& in) {
  BackupRequest m;
  m.shard = in.i32();
  const std::uint8_t stage = in.u8();
  if (stage > static_cast<std::uint8_t>(Stage::Recopy)) fail(Code::Protocol, "backup stage ", unsigned{stage});
  m.stage = static_cast<Stage>(stage);
  if (m.shard < 0) fail(Code::Protocol, "backup of shard ", m.shard);
  m.var = in.str();
  m.version = in.u64();
  m.entries.resize(in.count("backup entries", 48, kMaxCount));
  for (BackupEntry& e : m.entries) e = BackupEntry::decode(in);
  if ((m.stage == Stage::Relay || m.stage == Stage::Recopy) && m.entries.size() != 1)
    fail(Code::Protocol, "a relayed backup with ", m.entries.size(), " entries");
  if (m.stage == Stage::Recopy && !m.entries.front().entry.copy)
    fail(Code::Protocol, "a relayed recopy without the copy");
  return m;
}

void VarsReply::encode(WireWriter& out) const {
  out.u32(static_cast<std::uint32_t>(found.size()));
  for (const bool f : found) out.u8(f ? 1 : 0);
  out.u32(pieces);
}
VarsReply VarsReply::decode(WireReader& in) {
  VarsReply m;
  m.found.resize(in.count("variables", 1, kMaxCount));
  for (std::size_t i = 0; i < m.found.size(); ++i) m.found[i] = read_flag(in, "found");
  m.pieces = in.u32();
  return m;
}

void LeaseRequest::encode(WireWriter& out) const {
  out.str(var).u64(version).u32(static_cast<std::uint32_t>(pieces.size()));
  for (const std::uint64_t id : pieces) out.u64(id);
}
LeaseRequest LeaseRequest::decode(WireReader& in) {
  LeaseRequest m;
  m.var = in.str();
  m.version = in.u64();
  m.pieces.resize(in.count("pieces", 8, kMaxCount));
  for (auto& id : m.pieces) id = in.u64();
  return m;
}
void LeaseReply::encode(WireWriter& out) const { out.u64(lease); }
LeaseReply LeaseReply::decode(WireReader& in) { return {in.u64()}; }
void LeaseEndRequest::encode(WireWriter& out) const {
  out.u32(static_cast<std::uint32_t>(leases.size()));
  for (const std::uint64_t id : leases) out.u64(id);
}
LeaseEndRequest LeaseEndRequest::decode(WireReader& in) {
  LeaseEndRequest m;
  m.leases.resize(in.count("leases", 8, kMaxCount));
  for (auto& id : m.leases) id = in.u64();
  return m;
}

void VarRequest::encode(WireWriter& out) const { out.str(var); }
VarRequest VarRequest::decode(WireReader& in) { return {in.str()}; }

void LatestReply::encode(WireWriter& out) const {
  out.u8(version ? 1 : 0);
  if (version) out.u64(*version);
}
LatestReply LatestReply::decode(WireReader& in) {
  LatestReply m;
  if (read_flag(in, "has version")) m.version = in.u64();
  return m;
}

void DeleteRequest::encode(WireWriter& out) const { out.str(var).u64(version); }
DeleteRequest DeleteRequest::decode(WireReader& in) {
  DeleteRequest m;
  m.var = in.str();
  m.version = in.u64();
  return m;
}

void DeleteReply::encode(WireWriter& out) const { out.u8(found ? 1 : 0); }
DeleteReply DeleteReply::decode(WireReader& in) { return {read_flag(in, "found")}; }

void ListReply::encode(WireWriter& out) const {
  out.u32(static_cast<std::uint32_t>(variables.size()));
  for (const VariableInfo& v : variables) {
    out.str(v.name).str(v.dtype.name()).u8(static_cast<std::uint8_t>(v.ndim));
    write_optional_box(out, v.shape);
    out.u8(encode_reorg(v.reorg));
    write_layouts(out, v.layouts);
    out.bytes(v.fill);
    out.u32(static_cast<std::uint32_t>(v.versions.size()));
    for (const VersionInfo& ver : v.versions) {
      out.u64(ver.version).u8(ver.sealed ? 1 : 0).u32(static_cast<std::uint32_t>(ver.pieces.size()));
      for (const PieceInfo& p : ver.pieces) {
        out.box(p.box).u64(p.bytes).str(p.holder).str(p.copy).u32(static_cast<std::uint32_t>(p.replicas.size()));
        for (const ReplicaInfo& r : p.replicas) out.box(r.box).str(r.layout.to_string()).u64(r.bytes).u8(r.ready ? 1 : 0);
      }
    }
  }
}
ListReply ListReply::decode(WireReader& in) {
  ListReply m;
  m.variables.resize(in.count("variables", 2 * kMinString + 3 + 4 + 4, kMaxCount));
  for (VariableInfo& v : m.variables) {
    v.name = in.str();
    v.dtype = DType::parse(in.str());
    v.ndim = in.u8();
    v.shape = read_optional_box(in);
    v.reorg = decode_reorg(in.u8());
    v.layouts = read_layouts(in);
    const Bytes fill = blob(in);
    v.fill.assign(fill.begin(), fill.end());
    v.versions.resize(in.count("versions", 8 + 1 + 4, kMaxCount));
    for (VersionInfo& ver : v.versions) {
      ver.version = in.u64();
      ver.sealed = read_flag(in, "sealed");
      ver.pieces.resize(in.count("pieces", kMinBox + 8 + 2 * kMinString + 4, kMaxCount));
      for (PieceInfo& p : ver.pieces) {
        p.box = in.box();
        p.bytes = in.u64();
        p.holder = in.str();
        p.copy = in.str();
        p.on_server = false;
        p.replicas.resize(in.count("replicas", kMinBox + kMinString + 8 + 1, kMaxCount));
        for (ReplicaInfo& r : p.replicas) {
          r.box = in.box();
          r.layout = Layout::parse(in.str());
          r.bytes = in.u64();
          r.ready = read_flag(in, "ready");
        }
      }
    }
  }
  return m;
}

namespace {

bool same(const ReplicaInfo& a, const ReplicaInfo& b) {
  return a.box == b.box && a.layout == b.layout && a.bytes == b.bytes && a.ready == b.ready;
}
bool same(const PieceInfo& a, const PieceInfo& b) {
  return a.box == b.box && a.bytes == b.bytes && a.holder == b.holder && a.on_server == b.on_server &&
         std::equal(a.replicas.begin(), a.replicas.end(), b.replicas.begin(), b.replicas.end(),
                    [](const auto& x, const auto& y) { return same(x, y); });
}
bool same(const VersionInfo& a, const VersionInfo& b) {
  return a.version == b.version && a.sealed == b.sealed && std::equal(a.pieces.begin(), a.pieces.end(), b.pieces.begin(), b.pieces.end(),
                                              [](const auto& x, const auto& y) { return same(x, y); });
}
bool same(const VariableInfo& a, const VariableInfo& b) {
  return a.name == b.name && a.dtype == b.dtype && a.ndim == b.ndim && a.shape == b.shape && a.reorg == b.reorg &&
         a.layouts == b.layouts && a.fill == b.fill &&
         std::equal(a.versions.begin(), a.versions.end(), b.versions.begin(), b.versions.end(),
                    [](const auto& x, const auto& y) { return same(x, y); });
}

}  // namespace

bool ListReply::operator==(const ListReply& o) const {
  return std::equal(variables.begin(), variables.end(), o.variables.begin(), o.variables.end(),
                    [](const auto& x, const auto& y) { return same(x, y); });
}

namespace {

// The counters of ServerStats, in wire order.
template <typename Stats, typename Fn>
void for_each_counter(Stats& s, Fn&& fn) {
  for (auto* field : {&s.variables, &s.versions, &s.pieces, &s.owned_bytes, &s.local_bytes, &s.memory_budget,
                      &s.requests, &s.bytes_in, &s.bytes_out, &s.replicas, &s.replica_bytes, &s.reorganizations,
                      &s.replica_answers, &s.patterns, &s.parked_gets, &s.clients, &s.uptime_ms, &s.metadata,
                      &s.metadata_bytes, &s.lost_pieces, &s.replication, &s.copies, &s.copy_bytes,
                      &s.single_copies, &s.moved_pieces, &s.lost_members, &s.worker_slots, &s.workers,
                      &s.placements, &s.placement_fallbacks, &s.task_reports, &s.partly_covered,
                      &s.partly_covered_bytes, &s.restored_copies, &s.restored_backups})
    fn(*field);
}

}  // namespace

void StatReply::encode(WireWriter& out) const {
  for_each_counter(stats, [&](std::uint64_t v) { out.u64(v); });
  out.str(reorg_name(stats.reorg));
  write_layouts(out, stats.layouts);
}
StatReply StatReply::decode(WireReader& in) {
  StatReply m;
  for_each_counter(m.stats, [&](std::uint64_t& v) { v = in.u64(); });
  m.stats.reorg = parse_reorg(in.str());
  m.stats.layouts = read_layouts(in);
  return m;
}
bool StatReply::operator==(const StatReply& o) const {
  bool equal = stats.reorg == o.stats.reorg && stats.layouts == o.stats.layouts;
  auto copy = o.stats;
  std::vector<std::uint64_t> mine, theirs;
  for_each_counter(stats, [&](std::uint64_t v) { mine.push_back(v); });
  for_each_counter(copy, [&](std::uint64_t v) { theirs.push_back(v); });
  return equal && mine == theirs;
}

void DisconnectRequest::encode(WireWriter& out) const { out.str(owner); }
DisconnectRequest DisconnectRequest::decode(WireReader& in) { return {in.str()}; }

void MetaPutRequest::encode(WireWriter& out) const { out.str(name).u64(version).bytes(data); }
MetaPutRequest MetaPutRequest::decode(WireReader& in) {
  MetaPutRequest m;
  m.name = in.str();
  m.version = in.u64();
  m.data = blob(in);
  return m;
}

void MetaGetRequest::encode(WireWriter& out) const {
  out.str(name).u8(static_cast<std::uint8_t>(mode)).u64(version).i64(timeout_ms);
}
MetaGetRequest MetaGetRequest::decode(WireReader& in) {
  MetaGetRequest m;
  m.name = in.str();
  const std::uint8_t mode = in.u8();
  if (mode > static_cast<std::uint8_t>(MetaMode::LatestIfAny))
    fail(Code::InvalidArgument, "metadata get mode ", int{mode},
         " is not 0 (exact), 1 (next), 2 (latest) or 3 (latest if any)");
  m.mode = static_cast<MetaMode>(mode);
  m.version = in.u64();
  m.timeout_ms = in.i64();
  return m;
}

void MetaGetReply::encode(WireWriter& out) const { out.u8(found ? 1 : 0).u64(version).bytes(data); }
MetaGetReply MetaGetReply::decode(WireReader& in) {
  MetaGetReply m;
  m.found = read_flag(in, "found");
  m.version = in.u64();
  m.data = blob(in);
  return m;
}

void PatternRequest::encode(WireWriter& out) const {
  out.str(var).str(layout.to_string()).box(region).u64(gets).u64(version);
}
PatternRequest PatternRequest::decode(WireReader& in) {
  PatternRequest m;
  m.var = in.str();
  m.layout = Layout::parse(in.str());
  m.region = in.box();
  m.gets = in.u64();
  m.version = in.u64();
  return m;
}

// ---- locks ----

namespace {

void write_u64s(WireWriter& out, const std::vector<std::uint64_t>& v) {
  out.u32(static_cast<std::uint32_t>(v.size()));
  for (std::uint64_t x : v) out.u64(x);
}

std::vector<std::uint64_t> read_u64s(WireReader& in, const char* what) {
  std::vector<std::uint64_t> v(in.count(what, 8, static_cast<std::uint32_t>(kMaxDims)));
  for (auto& x : v) x = in.u64();
  return v;
}

void read_region(WireReader& in, std::vector<std::uint64_t>& start, std::vector<std::uint64_t>& count) {
  start = read_u64s(in, "lock start");
  count = read_u64s(in, "lock count");
  if (start.size() != count.size())
    fail(Code::Protocol, "lock region with a start of ", start.size(), " and a count of ", count.size(), " dimensions");
}

}  // namespace

void LockRequest::encode(WireWriter& out) const {
  out.str(name).u8(write ? 1 : 0);
  write_u64s(out, start);
  write_u64s(out, count);
  out.i64(timeout_ms);
}
LockRequest LockRequest::decode(WireReader& in) {
  LockRequest m;
  m.name = in.str();
  m.write = read_flag(in, "lock write");
  read_region(in, m.start, m.count);
  m.timeout_ms = in.i64();
  return m;
}

void UnlockRequest::encode(WireWriter& out) const {
  out.str(name);
  write_u64s(out, start);
  write_u64s(out, count);
}
UnlockRequest UnlockRequest::decode(WireReader& in) {
  UnlockRequest m;
  m.name = in.str();
  read_region(in, m.start, m.count);
  return m;
}

void WorkerRequest::encode(WireWriter& out) const { out.str(name); }
WorkerRequest WorkerRequest::decode(WireReader& in) {
  WorkerRequest m;
  m.name = in.str();
  if (m.name.empty()) fail(Code::InvalidArgument, "a worker's name is empty");
  return m;
}

void WorkerReply::encode(WireWriter& out) const { out.u32(slot).u32(slots).u32(workers); }
WorkerReply WorkerReply::decode(WireReader& in) {
  WorkerReply m;
  m.slot = in.u32();
  m.slots = in.u32();
  m.workers = in.u32();
  if (m.slot >= m.slots || m.workers > m.slots)
    fail(Code::Protocol, "worker slot ", m.slot, " with ", m.workers, " workers does not fit ", m.slots, " slots");
  return m;
}

void PlaceRequest::encode(WireWriter& out) const { out.str(var).box(box).u64(bytes); }
PlaceRequest PlaceRequest::decode(WireReader& in) {
  PlaceRequest m;
  m.var = in.str();
  m.box = in.box();
  m.bytes = in.u64();
  return m;
}

void PlaceReply::encode(WireWriter& out) const { out.u32(server).u64(sequence).str(policy); }
PlaceReply PlaceReply::decode(WireReader& in) {
  PlaceReply m;
  m.server = in.u32();
  m.sequence = in.u64();
  m.policy = in.str();
  return m;
}

void TaskDoneRequest::encode(WireWriter& out) const { out.str(var).box(box).f64(seconds); }
TaskDoneRequest TaskDoneRequest::decode(WireReader& in) {
  TaskDoneRequest m;
  m.var = in.str();
  m.box = in.box();
  m.seconds = in.f64();
  if (!(m.seconds >= 0) || !std::isfinite(m.seconds))
    fail(Code::InvalidArgument, "task time ", m.seconds, " s of '", m.var, "' is negative or not finite");
  return m;
}

void DataflowRequest::encode(WireWriter& out) const {
  out.str(source).u8(toml ? 1 : 0).bytes({reinterpret_cast<const std::byte*>(text.data()), text.size()});
}
DataflowRequest DataflowRequest::decode(WireReader& in) {
  DataflowRequest m;
  m.source = in.str();
  m.toml = read_flag(in, "dataflow toml");
  const Bytes b = blob(in);
  if (b.size() > kMaxMetaBytes)
    fail(Code::InvalidArgument, "dataflow graph ", m.source, " has ", b.size(), " bytes; at most ", kMaxMetaBytes);
  m.text.assign(reinterpret_cast<const char*>(b.data()), b.size());
  return m;
}

void PlacementsRequest::encode(WireWriter& out) const { out.u32(max); }
PlacementsRequest PlacementsRequest::decode(WireReader& in) {
  PlacementsRequest m;
  m.max = in.u32();
  if (m.max == 0 || m.max > kMaxPlacements)
    fail(Code::InvalidArgument, "placements: ", m.max, " decisions asked for; 1 to ", kMaxPlacements);
  return m;
}

void PlacementsReply::encode(WireWriter& out) const {
  out.u64(total).u32(static_cast<std::uint32_t>(decisions.size()));
  for (const PlacementDecision& d : decisions) {
    out.u64(d.sequence).str(d.var).box(d.box).u64(d.bytes).str(d.policy).str(d.applied).u32(d.server).u32(d.slot);
    out.f64(d.eet).f64(d.dat).f64(d.eat).f64(d.ect).f64(d.min_ect).i32(d.group).i32(d.affinity).u32(d.candidates);
  }
}
PlacementsReply PlacementsReply::decode(WireReader& in) {
  PlacementsReply m;
  m.total = in.u64();
  // sequence, three string lengths, a box's ndim, bytes, server, slot, five times, group, affinity, candidates
  const std::uint32_t n = in.count("placement decisions", 8 + 12 + 1 + 8 + 8 + 40 + 12, kMaxPlacements);
  if (n > m.total) fail(Code::Protocol, n, " placement decisions of ", m.total, " made");
  m.decisions.resize(n);
  for (PlacementDecision& d : m.decisions) {
    d.sequence = in.u64();
    d.var = in.str();
    d.box = in.box();
    d.bytes = in.u64();
    d.policy = in.str();
    d.applied = in.str();
    d.server = in.u32();
    d.slot = in.u32();
    for (double* t : {&d.eet, &d.dat, &d.eat, &d.ect, &d.min_ect}) {
      *t = in.f64();
      if (!(*t >= 0) || !std::isfinite(*t))
        fail(Code::Protocol, "placement decision ", d.sequence, " of '", d.var, "': time ", *t,
             " is negative or not finite");
    }
    d.group = in.i32();
    d.affinity = in.i32();
    d.candidates = in.u32();
    if (d.group < -1) fail(Code::Protocol, "placement decision ", d.sequence, ": group ", d.group);
  }
  return m;
}
bool PlacementsReply::operator==(const PlacementsReply& o) const {
  auto key = [](const PlacementDecision& d) {
    return std::tie(d.sequence, d.var, d.box, d.bytes, d.policy, d.applied, d.server, d.slot, d.eet, d.dat, d.eat,
                    d.ect, d.min_ect, d.group, d.affinity, d.candidates);
  };
  if (total != o.total || decisions.size() != o.decisions.size()) return false;
  for (std::size_t i = 0; i < decisions.size(); ++i)
    if (key(decisions[i]) != key(o.decisions[i])) return false;
  return true;
}

Bytes error_reply(std::uint16_t type, std::uint64_t request_id, Code code, const std::string& message) {
  WireWriter w(type, request_id, code);
  w.str(message.size() > kMaxStringBytes ? message.substr(0, kMaxStringBytes) : message);
  return std::move(w).finish();
}

Header check_reply(std::span<const std::byte> reply, std::uint16_t expected_type, std::uint64_t request_id) {
  const Header h = read_header(reply);
  // A refusal by the transport itself (a message too large, an endpoint
  // that serves no requests) answers type 0, request 0.
  const bool refusal = h.status != Code::Ok && h.type == 0 && h.request_id == 0;
  if (!refusal && (h.type != expected_type || h.request_id != request_id))
    fail(Code::Protocol, "reply of type ", h.type, " for request ", h.request_id, " does not answer request ",
         request_id, " of type ", expected_type);
  if (h.status != Code::Ok) {
    WireReader r(reply);
    std::string message;
    try {
      message = r.str();
    } catch (const Error&) {
      message = "(no message)";
    }
    throw Error(h.status, message);
  }
  check_version(h);
  return h;
}

}  // namespace cove::net
