#include "runtime/cuda/ptxas_testing.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "runtime/cuda/kernel_budgets_data.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

std::string& PtxasPath() {
  static std::string* path = new std::string();
  return *path;
}

}  // namespace

void SetPtxasFromArgs(int argc, char** argv) {
  if (argc > 1) PtxasPath() = argv[1];
}

const std::string& TestPtxas() { return PtxasPath(); }

absl::Status AssembleWithPtxas(const std::string& ptx, const std::string& name,
                               const std::string& sm) {
  if (TestPtxas().empty()) return absl::FailedPreconditionError("no ptxas (CUDA not configured)");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string ptx_path = absl::StrCat(dir, "/", name, ".ptx");
  const std::string cubin = absl::StrCat(dir, "/", name, ".cubin");
  std::ofstream(ptx_path) << ptx;
  const std::string command =
      absl::StrCat(TestPtxas(), " -arch=", sm, " -o ", cubin, " ", ptx_path);
  const int status = std::system(command.c_str());
  if (status != 0) {
    return absl::InternalError(absl::StrCat("`", command, "` exited with ", status));
  }
  std::ifstream in(cubin, std::ios::binary | std::ios::ate);
  if (static_cast<long>(in.tellg()) <= 0) {
    return absl::InternalError(absl::StrCat("`", command, "` wrote no cubin"));
  }
  return absl::OkStatus();
}

bool PtxOrderingCounts::operator==(const PtxOrderingCounts& o) const {
  return fence == o.fence && atom == o.atom && red == o.red && ld_volatile == o.ld_volatile &&
         st_volatile == o.st_volatile && ld_acquire == o.ld_acquire && st_release == o.st_release;
}

namespace {

// One function of a PTX module: its own counts and the functions it calls.
struct PtxFunction {
  bool entry = false;
  PtxOrderingCounts own;
  std::set<std::string> callees;
};

// The function a header line declares or defines (`.visible .entry NAME(`, `.func NAME(`,
// `.func  (.param .b64 func_retval0) NAME(`), or empty.
std::string FunctionName(absl::string_view line, bool* entry) {
  const size_t entry_at = line.find(".entry ");
  const size_t func_at = line.find(".func ");
  if (entry_at == absl::string_view::npos && func_at == absl::string_view::npos) return "";
  if (!absl::StartsWith(line, ".")) return "";  // directives start at column 0; instructions don't
  *entry = entry_at != absl::string_view::npos;
  absl::string_view rest = line.substr(*entry ? entry_at + 7 : func_at + 6);
  rest = absl::StripLeadingAsciiWhitespace(rest);
  if (absl::StartsWith(rest, "(")) {  // a return value: the name follows its closing parenthesis
    const size_t close = rest.find(')');
    if (close == absl::string_view::npos) return "";
    rest = absl::StripLeadingAsciiWhitespace(rest.substr(close + 1));
  }
  const size_t end = rest.find_first_of("( ;");
  return std::string(rest.substr(0, end));
}

void CountInstruction(absl::string_view line, PtxOrderingCounts* c) {
  line = absl::StripLeadingAsciiWhitespace(line);
  if (absl::StartsWith(line, "@")) {  // a predicate guard: the instruction follows it
    const size_t space = line.find_first_of(" \t");
    if (space == absl::string_view::npos) return;
    line = absl::StripLeadingAsciiWhitespace(line.substr(space));
  }
  if (absl::StartsWith(line, "membar.") || absl::StartsWith(line, "fence.")) ++c->fence;
  if (absl::StartsWith(line, "atom.")) ++c->atom;
  if (absl::StartsWith(line, "red.")) ++c->red;
  if (absl::StartsWith(line, "ld.volatile.")) ++c->ld_volatile;
  if (absl::StartsWith(line, "st.volatile.")) ++c->st_volatile;
  if (absl::StartsWith(line, "ld.acquire.")) ++c->ld_acquire;
  if (absl::StartsWith(line, "st.release.")) ++c->st_release;
}

void Add(const PtxOrderingCounts& a, PtxOrderingCounts* sum) {
  sum->fence += a.fence;
  sum->atom += a.atom;
  sum->red += a.red;
  sum->ld_volatile += a.ld_volatile;
  sum->st_volatile += a.st_volatile;
  sum->ld_acquire += a.ld_acquire;
  sum->st_release += a.st_release;
}

}  // namespace

std::map<std::string, PtxOrderingCounts> CountPtxOrdering(absl::string_view ptx) {
  std::map<std::string, PtxFunction> functions;
  std::vector<absl::string_view> lines = absl::StrSplit(ptx, '\n');
  // Pass 1: names. Pass 2: bodies (a definition's body runs from its `{` to the `}` at column 0).
  for (absl::string_view line : lines) {
    bool entry = false;
    const std::string name = FunctionName(line, &entry);
    if (!name.empty()) functions[name].entry |= entry;
  }
  PtxFunction* current = nullptr;
  std::string pending;  // a header seen, its body not opened yet
  for (absl::string_view line : lines) {
    bool entry = false;
    const std::string name = FunctionName(line, &entry);
    if (!name.empty()) {
      pending = name;
      current = nullptr;
    }
    if (current == nullptr) {
      if (!pending.empty() && absl::StartsWith(line, "{")) {
        current = &functions[pending];
        pending.clear();
      } else if (!pending.empty() &&
                 absl::EndsWith(absl::StripTrailingAsciiWhitespace(line), ";")) {
        pending.clear();  // a declaration
      }
      continue;
    }
    if (absl::StartsWith(line, "}")) {
      current = nullptr;
      continue;
    }
    CountInstruction(line, &current->own);
    // A call names its callee on a line of its own (`call.uni (retval0), \n\tNAME, \n\t(...)`):
    // any token of the body that names a function is a callee.
    for (absl::string_view token : absl::StrSplit(line, absl::ByAnyChar(" \t,();"))) {
      if (token.size() > 1 && (token[0] == '_' || absl::StartsWith(token, "accelmem")) &&
          functions.count(std::string(token)) != 0) {
        current->callees.insert(std::string(token));
      }
    }
  }
  std::map<std::string, PtxOrderingCounts> out;
  for (const auto& [name, function] : functions) {
    if (!function.entry) continue;
    std::set<std::string> seen = {name};
    std::vector<std::string> todo = {name};
    PtxOrderingCounts sum;
    while (!todo.empty()) {
      const std::string f = todo.back();
      todo.pop_back();
      Add(functions[f].own, &sum);
      for (const std::string& callee : functions[f].callees) {
        if (seen.insert(callee).second) todo.push_back(callee);
      }
    }
    out[name] = sum;
  }
  return out;
}

absl::StatusOr<std::map<std::string, PtxasEntryStats>> PtxasVerbose(const std::string& ptx,
                                                                    const std::string& name,
                                                                    const std::string& sm) {
  if (TestPtxas().empty()) return absl::FailedPreconditionError("no ptxas (CUDA not configured)");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string ptx_path = absl::StrCat(dir, "/", name, ".ptx");
  const std::string cubin = absl::StrCat(dir, "/", name, ".cubin");
  const std::string report = absl::StrCat(dir, "/", name, ".ptxas.txt");
  std::ofstream(ptx_path) << ptx;
  const std::string command =
      absl::StrCat(TestPtxas(), " -v -arch=", sm, " -o ", cubin, " ", ptx_path, " 2>", report);
  if (const int status = std::system(command.c_str()); status != 0) {
    return absl::InternalError(absl::StrCat("`", command, "` exited with ", status));
  }
  std::ifstream in(report);
  std::stringstream text;
  text << in.rdbuf();
  // "Compiling entry function 'E'", then "Function properties for F" followed by a line
  // "N bytes stack frame, N bytes spill stores, N bytes spill loads", and for entries
  // "Used N registers, ... [, N bytes cumulative stack size]".
  std::map<std::string, PtxasEntryStats> out;
  int function_spills = 0;
  std::string properties_of;
  std::string entry;
  for (absl::string_view line : absl::StrSplit(text.str(), '\n')) {
    int a = 0, b = 0, c = 0;
    char buffer[1024];
    const std::string l(line);
    if (std::sscanf(l.c_str(), "ptxas info : Compiling entry function '%1023[^']'", buffer) == 1) {
      entry = buffer;
      out[entry];
    } else if (std::sscanf(l.c_str(), "ptxas info : Function properties for %1023s", buffer) == 1) {
      properties_of = buffer;
    } else if (std::sscanf(l.c_str(),
                           " %d bytes stack frame, %d bytes spill stores, %d bytes spill loads", &a,
                           &b, &c) == 3) {
      if (properties_of == entry && out.count(entry) != 0) {
        out[entry].stack_bytes = std::max(out[entry].stack_bytes, a);
        out[entry].spill_bytes += b + c;
      } else {
        function_spills += b + c;
      }
    } else if (std::sscanf(l.c_str(), "ptxas info : Used %d registers", &a) == 1 &&
               out.count(entry) != 0) {
      out[entry].registers = a;
      const size_t cumulative = l.find(" bytes cumulative stack size");
      if (cumulative != std::string::npos) {
        const size_t start = l.rfind(", ", cumulative);
        int bytes = 0;
        if (start != std::string::npos &&
            absl::SimpleAtoi(l.substr(start + 2, cumulative - start - 2), &bytes)) {
          out[entry].stack_bytes = std::max(out[entry].stack_bytes, bytes);
        }
      }
    }
  }
  for (auto& [e, stats] : out) stats.spill_bytes += function_spills;
  if (out.empty()) return absl::InternalError(absl::StrCat("no entries in ", report));
  return out;
}

absl::StatusOr<std::map<std::string, KernelBudget>> ParseKernelBudgets(absl::string_view text) {
  std::map<std::string, KernelBudget> out;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (fields.empty()) continue;
    int v[10];
    bool ok = fields.size() == 11;
    for (int k = 0; ok && k < 10; ++k) ok = absl::SimpleAtoi(fields[k + 1], &v[k]);
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel budgets, line ", line_number, ": want a name and 10 integers"));
    }
    KernelBudget& b = out[std::string(fields[0])];
    b.counts = {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    b.registers = v[7];
    b.stack_bytes = v[8];
    b.spill_bytes = v[9];
  }
  return out;
}

std::string FormatKernelBudgets(const std::map<std::string, KernelBudget>& entries) {
  std::string out =
      absl::StrFormat("# %-44s %5s %4s %3s %5s %5s %5s %5s %4s %5s %5s\n", "entry", "fence", "atom",
                      "red", "ld.vo", "st.vo", "ld.aq", "st.rl", "regs", "stack", "spill");
  for (const auto& [name, b] : entries) {
    absl::StrAppendFormat(&out, "%-46s %5d %4d %3d %5d %5d %5d %5d %4d %5d %5d\n", name,
                          b.counts.fence, b.counts.atom, b.counts.red, b.counts.ld_volatile,
                          b.counts.st_volatile, b.counts.ld_acquire, b.counts.st_release,
                          b.registers, b.stack_bytes, b.spill_bytes);
  }
  return out;
}

absl::string_view KernelBudgetTable() {
  const kernel_budgets_data_file* file = kernel_budgets_data_find("kernel_budgets.txt");
  if (file == nullptr) return "";
  return absl::string_view(reinterpret_cast<const char*>(file->data), file->size);
}

std::string CheckKernelBudgets(const std::string& ptx, const std::vector<std::string>& entries,
                               const std::string& name, bool* ptxas_checked) {
  *ptxas_checked = false;
  std::string problems;
  auto table = ParseKernelBudgets(KernelBudgetTable());
  if (!table.ok()) return std::string(table.status().message()) + "\n";
  const std::map<std::string, PtxOrderingCounts> counts = CountPtxOrdering(ptx);
  std::map<std::string, PtxasEntryStats> stats;
  if (!TestPtxas().empty()) {
    auto verbose = PtxasVerbose(ptx, name);
    if (!verbose.ok()) return std::string(verbose.status().message()) + "\n";
    stats = *verbose;
    *ptxas_checked = true;
  }
  std::map<std::string, KernelBudget> measured;
  for (const std::string& entry : entries) {
    KernelBudget& m = measured[entry];
    auto c = counts.find(entry);
    if (c == counts.end()) {
      absl::StrAppend(&problems, entry, ": no such entry in the PTX\n");
      continue;
    }
    m.counts = c->second;
    auto b = table->find(entry);
    if (*ptxas_checked) {
      const PtxasEntryStats& s = stats[entry];
      m.registers = s.registers;
      m.stack_bytes = s.stack_bytes;
      m.spill_bytes = s.spill_bytes;
    } else if (b != table->end()) {  // without ptxas only the PTX is checked
      m.registers = b->second.registers;
      m.stack_bytes = b->second.stack_bytes;
      m.spill_bytes = b->second.spill_bytes;
    }
    if (b == table->end()) {
      absl::StrAppend(&problems, entry, ": no row in runtime/cuda/testdata/kernel_budgets.txt\n");
      continue;
    }
    const KernelBudget& want = b->second;
    if (!(m.counts == want.counts)) {
      absl::StrAppend(&problems, entry, ": PTX ordering instructions differ from the table\n");
    }
    if (*ptxas_checked && m.registers > want.registers) {
      absl::StrAppend(&problems, entry, ": ", m.registers, " registers, the table allows ",
                      want.registers, "\n");
    }
    if (*ptxas_checked &&
        (m.stack_bytes != want.stack_bytes || m.spill_bytes != want.spill_bytes)) {
      absl::StrAppend(&problems, entry, ": stack ", m.stack_bytes, " B and spills ", m.spill_bytes,
                      " B, the table says ", want.stack_bytes, " B and ", want.spill_bytes, " B\n");
    }
  }
  if (problems.empty()) return "";
  return absl::StrCat(problems,
                      "measured rows (paste into runtime/cuda/testdata/kernel_budgets.txt):\n",
                      FormatKernelBudgets(measured));
}

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem
