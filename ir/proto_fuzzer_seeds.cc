// Writes the initial corpus of //ir:proto_fuzzer: each input .tile file parsed and serialized as an
// accelmem.ir.pb.Program message (the form `tile_opt --emit=proto` writes).
//
//   proto_fuzzer_seeds OUT_DIR IN.tile...    # writes OUT_DIR/<basename>.pb
// Files that do not parse are skipped (with a note on stderr).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "ir/parser.h"
#include "ir/proto_convert.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: proto_fuzzer_seeds OUT_DIR IN.tile...\n");
    return 2;
  }
  const std::string out_dir = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string path = argv[i];
    std::ifstream in(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto program = accelmem::ir::ParseProgram(text, path);
    if (!program.ok()) {
      std::fprintf(stderr, "proto_fuzzer_seeds: skipping %s\n", path.c_str());
      continue;
    }
    std::string base = path.substr(path.find_last_of('/') + 1);
    base = base.substr(0, base.find_last_of('.'));
    std::ofstream out(out_dir + "/" + base + ".pb", std::ios::binary);
    out << accelmem::ir::ToProto(**program).SerializeAsString();
    if (!out) {
      std::fprintf(stderr, "proto_fuzzer_seeds: cannot write %s\n", base.c_str());
      return 1;
    }
  }
  return 0;
}
