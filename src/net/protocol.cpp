#include "net/protocol.hpp"

#include "core/fail.hpp"

namespace cove::net {

const char* op_name(Op op) noexcept {
  switch (op) {
    case Op::Define: return "define";
    case Op::Put: return "put";
    case Op::PutLocal: return "put_local";
    case Op::Release: return "release";
    case Op::Query: return "query";
    case Op::Latest: return "latest";
    case Op::Delete: return "delete";
    case Op::List: return "list";
    case Op::Stat: return "stat";
    case Op::Disconnect: return "disconnect";
    case Op::Stop: return "stop";
    case Op::IndexAdd: return "index_add";
    case Op::MetaPut: return "meta_put";
    case Op::MetaGet: return "meta_get";
    case Op::PutInline: return "put_inline";
    case Op::Pattern: return "pattern";
  }
  return "unknown";
}

void write_stats(WireWriter& out, const ServerStats& s) {
  out.u64(s.variables).u64(s.versions).u64(s.pieces).u64(s.owned_bytes).u64(s.local_bytes);
  out.u64(s.memory_budget).u64(s.requests).u64(s.bytes_in);
  out.u64(s.replicas).u64(s.replica_bytes).u64(s.reorganizations).u64(s.replica_answers).u64(s.patterns);
  out.str(reorg_name(s.reorg)).u32(static_cast<std::uint32_t>(s.layouts.size()));
  for (const Layout& l : s.layouts) out.str(l.to_string());
}

ServerStats read_stats(WireReader& in) {
  ServerStats s;
  for (std::uint64_t* field : {&s.variables, &s.versions, &s.pieces, &s.owned_bytes, &s.local_bytes, &s.memory_budget,
                               &s.requests, &s.bytes_in, &s.replicas, &s.replica_bytes, &s.reorganizations,
                               &s.replica_answers, &s.patterns})
    *field = in.u64();
  s.reorg = parse_reorg(in.str());
  s.layouts.resize(in.u32());
  for (auto& l : s.layouts) l = Layout::parse(in.str());
  in.expect_end();
  return s;
}

Bytes error_reply(std::uint16_t type, std::uint64_t request_id, Code code, const std::string& message) {
  WireWriter w(type, request_id, code);
  w.str(message.size() > kMaxStringBytes ? message.substr(0, kMaxStringBytes) : message);
  return std::move(w).finish();
}

Header check_reply(std::span<const std::byte> reply, std::uint16_t expected_type, std::uint64_t request_id) {
  const Header h = read_header(reply);
  if (h.type != expected_type || h.request_id != request_id)
    detail::fail(Code::Protocol, "reply of type ", h.type, " for request ", h.request_id, " does not answer request ",
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
  return h;
}

}  // namespace cove::net
