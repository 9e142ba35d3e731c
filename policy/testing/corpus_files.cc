#include "policy/testing/corpus_files.h"

#include <algorithm>
#include <filesystem>

namespace accelmem {
namespace policy_testing {

std::vector<std::string> ListJsonFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(
           dir, std::filesystem::directory_options::follow_directory_symlink, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->path().extension() == ".json") files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace policy_testing
}  // namespace accelmem
