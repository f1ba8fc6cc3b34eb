// File coupling with C++ standard I/O (the papers' "std-file" baseline):
// every writer process writes its piece of each variable to a binary file of
// its own (raw C-order elements); readers know the writers' decomposition,
// open the files whose pieces meet their region and read the runs they need
// into place. Warm: the files stay in the page cache. Cold: writers fsync
// (timed, part of the write) and drop the files from the page cache
// (posix_fadvise DONTNEED, untimed) before the readers start, as a reader on
// another node of a parallel file system would see them.
#include "compare_methods.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace cove::bench {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

class BinaryFileMethod final : public Method {
 public:
  explicit BinaryFileMethod(bool cold) : cold_(cold) {}

  void setup(Context& ctx) override {
    if (ctx.world_rank == 0) std::filesystem::create_directories(ctx.dir);
    quiet_barrier(ctx.world);
  }

  void write(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    for (auto& b : blocks) {
      const std::string p = path(ctx, step, *b.var, ctx.local_rank);
      std::FILE* f = std::fopen(p.c_str(), "wb");
      if (!f) fail("cannot create", p);
      if (std::fwrite(b.data, 1, b.bytes, f) != b.bytes) fail("cannot write", p);
      if (std::fflush(f) != 0) fail("cannot write", p);
      if (cold_ && ::fsync(fileno(f)) != 0) fail("cannot fsync", p);
      std::fclose(f);
    }
  }

  void after_write(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    if (!cold_) return;
    for (auto& b : blocks) drop_cache(path(ctx, step, *b.var, ctx.local_rank));
  }

  void read(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    for (auto& b : blocks) {
      const Variable& v = *b.var;
      const std::size_t es = elem_size(v.elem);
      for (std::size_t w = 0; w < v.writer_boxes.size(); ++w) {
        const Box& src = v.writer_boxes[w];
        const Box part = src.intersection(b.box);
        if (part.empty()) continue;
        const std::string p = path(ctx, step, v, static_cast<int>(w));
        std::FILE* f = std::fopen(p.c_str(), "rb");
        if (!f) fail("cannot open", p);
        for_each_run(src, b.box, part, [&](std::size_t so, std::size_t dof, std::size_t len) {
          if (std::fseek(f, static_cast<long>(so * es), SEEK_SET) != 0) fail("cannot seek", p);
          if (std::fread(static_cast<char*>(b.data) + dof * es, es, len, f) != len) fail("short read from", p);
        });
        std::fclose(f);
      }
    }
  }

  void after_read(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    if (ctx.role != Role::Writer) return;
    for (auto& b : blocks) std::filesystem::remove(path(ctx, step, *b.var, ctx.local_rank));
  }

 private:
  static std::string path(const Context& ctx, std::uint64_t step, const Variable& v, int writer) {
    return ctx.dir + "/" + ctx.run_id + "." + v.name + ".s" + std::to_string(step) + ".w" + std::to_string(writer) +
           ".bin";
  }

  static void drop_cache(const std::string& p) {
    const int fd = ::open(p.c_str(), O_RDONLY);
    if (fd < 0) fail("cannot open", p);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }

  bool cold_;
};

}  // namespace

std::unique_ptr<Method> make_binary_file_method(bool cold) { return std::make_unique<BinaryFileMethod>(cold); }

}  // namespace cove::bench
