// Uses an installed Cove through find_package(Cove): C++ and C APIs.
#include <cove.h>
#include <cove/cove.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
  const cove::Box box = cove::Box::from_shape(std::vector<cove::Index>{3, 4});
  std::vector<int> src(12), dst(12);
  for (int i = 0; i < 12; ++i) src[i] = i;
  cove::copy_region({src.data(), 48, box, cove::Layout::c()}, {dst.data(), 48, box, cove::Layout::f()}, box, 4);
  // Element (1, 2) is 6 in C order and sits at 1 + 2*3 = 7 in F order.
  if (dst[7] != 6 || std::string(cove_strerror(COVE_TIMEOUT)) != "timed out") return 1;
  std::printf("consumer ok\n");
  return 0;
}
