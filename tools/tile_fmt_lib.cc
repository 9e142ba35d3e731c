#include "tools/tile_fmt_lib.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "policy/file_io.h"

namespace accelmem {
namespace tools {
namespace {

constexpr char kUsage[] =
    "usage: tile_fmt [-i | --check] [--no-verify] FILE...\n"
    "  FILE        a .tile file, or - for standard input\n"
    "  -i          rewrite the files in place\n"
    "  --check     exit 1 if a file is not in canonical form\n"
    "  --no-verify parse only, do not run the IR verifier\n";

bool ReadAll(const std::string& path, std::istream& in, std::string* text) {
  if (path == "-") {  // the caller's stream (tests pass their own)
    std::stringstream ss;
    ss << in.rdbuf();
    *text = ss.str();
    return true;
  }
  // Not std::ifstream: a directory opens as a stream and then fails (or throws) on read.
  absl::StatusOr<std::string> data = policy::ReadFileOrStdin(path);
  if (!data.ok()) return false;
  *text = *std::move(data);
  return true;
}

bool WriteAll(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tile_fmt.tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return false;
    f << text;
    if (!f.flush()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int TileFmtMain(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                std::ostream& err) {
  bool in_place = false;
  bool check = false;
  bool verify = true;
  std::vector<std::string> files;
  for (const std::string& a : args) {
    if (a == "-i") {
      in_place = true;
    } else if (a == "--check") {
      check = true;
    } else if (a == "--no-verify") {
      verify = false;
    } else if (a == "-h" || a == "--help") {
      out << kUsage;
      return 0;
    } else if (a.size() > 1 && a[0] == '-') {
      err << "tile_fmt: unknown flag '" << a << "'\n" << kUsage;
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty() || (in_place && check)) {
    err << kUsage;
    return 2;
  }
  int status = 0;
  for (const std::string& path : files) {
    if (in_place && path == "-") {
      err << "tile_fmt: -i cannot rewrite standard input\n";
      return 2;
    }
    const std::string name = path == "-" ? "<stdin>" : path;
    std::string text;
    if (!ReadAll(path, in, &text)) {
      err << "tile_fmt: cannot read '" << path << "'\n";
      status = 1;
      continue;
    }
    ir::Comments comments;
    ir::ParseOptions options;
    options.comments = &comments;
    auto program = verify ? ir::ParseAndVerifyProgram(text, name, options)
                          : ir::ParseProgram(text, name, options);
    if (!program.ok()) {
      err << program.status().message() << "\n";
      status = 1;
      continue;
    }
    const std::string canonical = ir::PrintProgram(**program, &comments);
    if (check) {
      if (canonical != text) {
        err << name << ": not in canonical form\n";
        status = 1;
      }
    } else if (in_place) {
      if (canonical != text && !WriteAll(path, canonical)) {
        err << "tile_fmt: cannot write '" << path << "'\n";
        status = 1;
      }
    } else {
      out << canonical;
    }
  }
  return status;
}

}  // namespace tools
}  // namespace accelmem
