// main() of an accelmem_cc_fuzzer binary built without libFuzzer (the default gcc build): runs
// LLVMFuzzerTestOneInput once on every file named on the command line (directories: every file in
// them, recursively) and ignores libFuzzer's `-flag=value` arguments, so the same command line
// replays a corpus or a reproducer. A crash of the entry point is a crash of this program.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz_standalone_main: cannot read %s\n", path.c_str());
    return 1;
  }
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "Running: %s (%zu bytes)\n", path.c_str(), data.size());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int failures = 0, runs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty() || arg[0] == '-') continue;
    const std::filesystem::path path(arg);
    if (std::filesystem::is_directory(path)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::recursive_directory_iterator(path)) {
        if (!std::filesystem::is_directory(e.path())) files.push_back(e.path());
      }
      for (const auto& f : files) {
        failures += RunFile(f);
        ++runs;
      }
    } else {
      failures += RunFile(path);
      ++runs;
    }
  }
  std::fprintf(stderr, "fuzz_standalone_main: %d inputs run, %d unreadable\n", runs, failures);
  return failures == 0 ? 0 : 1;
}
