#include "policy/place_csv.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "policy/file_io.h"

namespace accelmem {
namespace policy {
namespace {

using policy::PlacementBuffer;

absl::Status LineError(absl::string_view filename, int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(filename, ":", line, ": error: ", what));
}

// Splits `text` into (line number, fields) for every non-blank line.
std::vector<std::pair<int, std::vector<absl::string_view>>> SplitRows(absl::string_view text) {
  std::vector<std::pair<int, std::vector<absl::string_view>>> rows;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    for (absl::string_view& f : fields) f = absl::StripAsciiWhitespace(f);
    rows.push_back({number, std::move(fields)});
  }
  return rows;
}

// Maps the header's column names to positions; every name in `required` must be present.
absl::StatusOr<std::vector<int>> ColumnsOf(const std::vector<absl::string_view>& header,
                                           const std::vector<absl::string_view>& required,
                                           absl::string_view filename, int line) {
  std::vector<int> positions;
  for (absl::string_view name : required) {
    int found = -1;
    for (size_t c = 0; c < header.size(); ++c) {
      if (header[c] == name) {
        if (found >= 0) {
          return LineError(filename, line, absl::StrCat("column '", name, "' appears twice"));
        }
        found = static_cast<int>(c);
      }
    }
    if (found < 0) {
      std::string expected;
      for (absl::string_view r : required)
        absl::StrAppend(&expected, expected.empty() ? "" : ",", r);
      return LineError(filename, line,
                       absl::StrCat("header has no column '", name, "' (expected a header line '",
                                    expected, "')"));
    }
    positions.push_back(found);
  }
  return positions;
}

absl::Status ParseInt(absl::string_view field, absl::string_view column, absl::string_view filename,
                      int line, int64_t* value) {
  if (field.empty() || !absl::SimpleAtoi(field, value)) {
    return LineError(filename, line,
                     absl::StrCat(column, " '", field, "' is not an integer in int64 range"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<PlacementBuffer>> ParseInstanceCsv(absl::string_view text,
                                                              absl::string_view filename) {
  const auto rows = SplitRows(text);
  if (rows.empty()) {
    return LineError(filename, 1, "empty file (expected a header line 'id,lower,upper,size')");
  }
  const auto& [header_line, header] = rows.front();
  absl::StatusOr<std::vector<int>> columns =
      ColumnsOf(header, {"id", "lower", "upper", "size"}, filename, header_line);
  if (!columns.ok()) return columns.status();
  const int id_col = (*columns)[0], lower_col = (*columns)[1], upper_col = (*columns)[2],
            size_col = (*columns)[3];
  std::vector<PlacementBuffer> buffers;
  buffers.reserve(rows.size() - 1);
  absl::flat_hash_map<std::string, int> first_line;
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto& [line, fields] = rows[r];
    if (fields.size() != header.size()) {
      return LineError(filename, line,
                       absl::StrCat("expected ", header.size(), " fields, got ", fields.size()));
    }
    PlacementBuffer b;
    b.id = std::string(fields[id_col]);
    if (b.id.empty()) return LineError(filename, line, "empty id");
    if (absl::Status s = ParseInt(fields[lower_col], "lower", filename, line, &b.start); !s.ok()) {
      return s;
    }
    if (absl::Status s = ParseInt(fields[upper_col], "upper", filename, line, &b.end); !s.ok()) {
      return s;
    }
    if (absl::Status s = ParseInt(fields[size_col], "size", filename, line, &b.size); !s.ok()) {
      return s;
    }
    if (b.start > b.end) {
      return LineError(
          filename, line,
          absl::StrCat("buffer '", b.id, "': lower ", b.start, " is greater than upper ", b.end));
    }
    if (b.size < 0) {
      return LineError(filename, line, absl::StrCat("buffer '", b.id, "': negative size ", b.size));
    }
    if (b.size > policy::kMaxPlacementBytes) {
      return LineError(filename, line,
                       absl::StrCat("buffer '", b.id, "': size ", b.size, " is above the limit ",
                                    policy::kMaxPlacementBytes));
    }
    auto [it, inserted] = first_line.emplace(b.id, line);
    if (!inserted) {
      return LineError(filename, line,
                       absl::StrCat("duplicate id '", b.id, "' (first on line ", it->second, ")"));
    }
    buffers.push_back(std::move(b));
  }
  return buffers;
}

absl::StatusOr<std::vector<int64_t>> ParsePlacementCsv(absl::string_view text,
                                                       absl::string_view filename,
                                                       absl::Span<const PlacementBuffer> instance) {
  const auto rows = SplitRows(text);
  if (rows.empty())
    return LineError(filename, 1, "empty file (expected a header line 'id,offset')");
  const auto& [header_line, header] = rows.front();
  absl::StatusOr<std::vector<int>> columns =
      ColumnsOf(header, {"id", "offset"}, filename, header_line);
  if (!columns.ok()) return columns.status();
  const int id_col = (*columns)[0], offset_col = (*columns)[1];
  absl::flat_hash_map<absl::string_view, size_t> index;
  for (size_t i = 0; i < instance.size(); ++i) index.emplace(instance[i].id, i);
  std::vector<int64_t> offsets(instance.size(), 0);
  std::vector<int> line_of(instance.size(), 0);
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto& [line, fields] = rows[r];
    if (fields.size() != header.size()) {
      return LineError(filename, line,
                       absl::StrCat("expected ", header.size(), " fields, got ", fields.size()));
    }
    auto it = index.find(fields[id_col]);
    if (it == index.end()) {
      return LineError(filename, line,
                       absl::StrCat("id '", fields[id_col], "' is not in the instance"));
    }
    if (line_of[it->second] != 0) {
      return LineError(filename, line,
                       absl::StrCat("duplicate id '", fields[id_col], "' (first on line ",
                                    line_of[it->second], ")"));
    }
    line_of[it->second] = line;
    if (absl::Status s =
            ParseInt(fields[offset_col], "offset", filename, line, &offsets[it->second]);
        !s.ok()) {
      return s;
    }
  }
  for (size_t i = 0; i < instance.size(); ++i) {
    if (line_of[i] == 0) {
      const int last = rows.back().first;
      return LineError(filename, last,
                       absl::StrCat("no offset for buffer '", instance[i].id, "' (",
                                    instance.size(), " buffers in the instance)"));
    }
  }
  return offsets;
}

std::string FormatPlacementCsv(absl::Span<const policy::PlacementBuffer> instance,
                               absl::Span<const int64_t> offsets) {
  std::string out = "id,offset\n";
  out.reserve(out.size() + instance.size() * 16);
  for (size_t i = 0; i < instance.size() && i < offsets.size(); ++i) {
    absl::StrAppend(&out, instance[i].id, ",", offsets[i], "\n");
  }
  return out;
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  // "PATH: error: cannot read file: WHY"; a directory is an error, not an empty file.
  return ReadFileOrStdin(path);
}

}  // namespace policy
}  // namespace accelmem
