// Handlers that describe the space: List (Stat is Service::stats()).
#include "server/service.hpp"

namespace cove::server {

net::ListReply Service::list() {
  net::ListReply out;
  std::lock_guard lock(mutex);
  for (const auto& v : store_.list()) {
    VariableInfo info;
    info.name = v.def->name;
    info.dtype = v.def->dtype;
    info.ndim = v.def->ndim;
    info.shape = v.def->shape;
    info.reorg = v.def->reorg;
    info.layouts = v.def->layouts;
    info.fill = v.def->fill;
    for (const auto& ver : v.versions) {
      VersionInfo vi{ver.version, {}, ver.sealed};
      for (const store::Piece* p : ver.pieces) {
        if (p->is_copy) continue;  // listed as the copy of the piece it is
        PieceInfo pi{p->box, p->bytes, p->owner, false, {}, p->copy.holder};
        for (const auto& rep : p->replicas)
          if (rep->state != store::Replica::State::Failed)
            pi.replicas.push_back({rep->box, rep->layout, rep->bytes, rep->state == store::Replica::State::Ready});
        vi.pieces.push_back(std::move(pi));
      }
      info.versions.push_back(std::move(vi));
    }
    out.variables.push_back(std::move(info));
  }
  return out;
}

}  // namespace cove::server
