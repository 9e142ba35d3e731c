// The JSON files under a folder of the vendored schema-v1 corpus, for tests.
#ifndef ACCELMEM_POLICY_TESTING_CORPUS_FILES_H_
#define ACCELMEM_POLICY_TESTING_CORPUS_FILES_H_

#include <string>
#include <vector>

namespace accelmem {
namespace policy_testing {

// Every `*.json` under `dir` (recursively), sorted; empty if `dir` cannot be read.
std::vector<std::string> ListJsonFiles(const std::string& dir);

}  // namespace policy_testing
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_TESTING_CORPUS_FILES_H_
