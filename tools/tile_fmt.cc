// tile_fmt: formats .tile files into the canonical text of the IR contract. See
// tools/tile_fmt_lib.h for the flags.
#include <iostream>
#include <string>
#include <vector>

#include "tools/tile_fmt_lib.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return accelmem::tools::TileFmtMain(args, std::cin, std::cout, std::cerr);
}
