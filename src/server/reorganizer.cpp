#include "server/reorganizer.hpp"

#include <cove/region_copy.hpp>

#include "common/log.hpp"

namespace cove::server {

Reorganizer::Reorganizer(int threads, store::BufferPool& pool, Done done) : pool_(pool), done_(std::move(done)) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

void Reorganizer::submit(ReorgJob job) {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void Reorganizer::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    jobs_.clear();
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void Reorganizer::run() {
  for (;;) {
    ReorgJob job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopped_ || !jobs_.empty(); });
      if (stopped_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    std::shared_ptr<store::BufferPool::Block> replica;
    try {
      const std::size_t bytes = static_cast<std::size_t>(job.box.volume()) * job.elem;
      replica = pool_.acquire(bytes);
      copy_region({job.source->data, job.source->size, job.source_box, job.source_layout},
                  {replica->data, bytes, job.box, job.layout}, job.box, job.elem);
    } catch (...) {
      log::dropped("building a replica (readers fall back to the source)");
      replica.reset();  // reported as a failure
    }
    job.source.reset();
    done_(job, std::move(replica));
  }
}

}  // namespace cove::server
