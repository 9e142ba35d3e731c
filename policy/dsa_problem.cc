#include "policy/dsa_problem.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace accelmem {
namespace policy {
namespace {

using Json = nlohmann::json;

// A shape error at a JSON path; turned into an InvalidArgument status by the entry points.
struct ShapeError {
  std::string message;
};

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw ShapeError{absl::StrCat(path, ": ", what)};
}

void CheckObject(const Json& value, const std::string& path,
                 std::initializer_list<const char*> required,
                 std::initializer_list<const char*> optional) {
  if (!value.is_object()) Fail(path, "expected an object");
  for (const char* key : required) {
    if (!value.contains(key)) Fail(path, absl::StrCat("missing required field '", key, "'"));
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    bool known = false;
    for (const char* key : required) known = known || it.key() == key;
    for (const char* key : optional) known = known || it.key() == key;
    if (!known) Fail(path, absl::StrCat("unknown field '", it.key(), "'"));
  }
}

const Json& ArrayAt(const Json& object, const char* key, const std::string& path) {
  const Json& value = object.at(key);
  if (!value.is_array()) Fail(absl::StrCat(path, ".", key), "expected an array");
  return value;
}

uint64_t ReadU64(const Json& value, const std::string& path) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v < 0) Fail(path, absl::StrCat("expected an unsigned integer, got ", v));
    return static_cast<uint64_t>(v);
  }
  Fail(path, "expected an unsigned integer");
}

uint32_t ReadU32(const Json& value, const std::string& path) {
  const uint64_t v = ReadU64(value, path);
  if (v > std::numeric_limits<uint32_t>::max()) {
    Fail(path, absl::StrCat("value ", v, " does not fit in 32 bits"));
  }
  return static_cast<uint32_t>(v);
}

int64_t ReadI64(const Json& value, const std::string& path) {
  if (value.is_number_integer() && !value.is_number_unsigned()) return value.get<int64_t>();
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      Fail(path, absl::StrCat("value ", v, " does not fit in a signed 64-bit integer"));
    }
    return static_cast<int64_t>(v);
  }
  Fail(path, "expected an integer");
}

std::string ReadString(const Json& value, const std::string& path) {
  if (!value.is_string()) Fail(path, "expected a string");
  return value.get<std::string>();
}

std::map<std::string, std::string> ReadMetadata(const Json& value, const std::string& path) {
  if (!value.is_object()) Fail(path, "expected an object of strings");
  std::map<std::string, std::string> result;
  for (auto it = value.begin(); it != value.end(); ++it) {
    result[it.key()] = ReadString(it.value(), absl::StrCat(path, ".", it.key()));
  }
  return result;
}

template <typename Enum, size_t N>
Enum ReadEnum(const Json& value, const std::string& path, const char* const (&names)[N]) {
  const std::string name = ReadString(value, path);
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<Enum>(i);
  }
  std::string expected;
  for (size_t i = 0; i < N; ++i) absl::StrAppend(&expected, i ? ", " : "", names[i]);
  Fail(path, absl::StrCat("unknown value '", name, "' (expected one of ", expected, ")"));
}

constexpr const char* kSeparationReasons[] = {"generic", "pipeline_stage", "target_hazard",
                                              "semantic_no_alias", "cross_pipe"};
constexpr const char* kPenaltyReasons[] = {"generic",
                                           "pipeline_serialization",
                                           "load_motion_serialization",
                                           "cross_pipe",
                                           "cross_core",
                                           "event_budget"};
constexpr const char* kObjectiveTerms[] = {"capacity_overflow", "total_peak", "max_peak",
                                           "reuse_cost", "bank_cost"};
constexpr const char* kProfiles[] = {"standard_dsa",  "dsa_rp_v1",         "pypto_structured",
                                     "pypto_hard_v1", "pypto_research_v1", "pypto_core_relaxation"};

std::string At(const std::string& path, size_t index) {
  return absl::StrCat(path, "[", index, "]");
}

DsaPair ReadPair(const Json& value, const std::string& path) {
  CheckObject(value, path, {"first", "second"}, {});
  return DsaPair{ReadU32(value.at("first"), path + ".first"),
                 ReadU32(value.at("second"), path + ".second")};
}

DsaPool ReadPool(const Json& item, const std::string& p) {
  CheckObject(item, p, {"id", "name", "capacity", "reserved_ranges"}, {"bank_geometry"});
  DsaPool pool;
  pool.id = ReadU32(item.at("id"), p + ".id");
  pool.name = ReadString(item.at("name"), p + ".name");
  if (!item.at("capacity").is_null()) pool.capacity = ReadU64(item.at("capacity"), p + ".capacity");
  const Json& ranges = ArrayAt(item, "reserved_ranges", p);
  for (size_t r = 0; r < ranges.size(); ++r) {
    const std::string rp = At(p + ".reserved_ranges", r);
    CheckObject(ranges[r], rp, {"begin", "end"}, {});
    pool.reserved_ranges.push_back(
        {ReadU64(ranges[r].at("begin"), rp + ".begin"), ReadU64(ranges[r].at("end"), rp + ".end")});
  }
  if (item.contains("bank_geometry")) {
    const Json& bank = item.at("bank_geometry");
    const std::string bp = p + ".bank_geometry";
    CheckObject(bank, bp, {"bank_size", "num_banks"}, {});
    pool.bank_geometry = DsaBankGeometry{ReadU64(bank.at("bank_size"), bp + ".bank_size"),
                                         ReadU32(bank.at("num_banks"), bp + ".num_banks")};
  }
  return pool;
}

DsaBuffer ReadBuffer(const Json& item, const std::string& p) {
  CheckObject(item, p, {"id", "name", "size", "alignment", "live_intervals", "allowed_pools"}, {});
  DsaBuffer buffer;
  buffer.id = ReadU32(item.at("id"), p + ".id");
  buffer.name = ReadString(item.at("name"), p + ".name");
  buffer.size = ReadU64(item.at("size"), p + ".size");
  buffer.alignment = ReadU64(item.at("alignment"), p + ".alignment");
  const Json& intervals = ArrayAt(item, "live_intervals", p);
  for (size_t k = 0; k < intervals.size(); ++k) {
    const std::string ip = At(p + ".live_intervals", k);
    CheckObject(intervals[k], ip, {"lower", "upper"}, {});
    buffer.live_intervals.push_back({ReadI64(intervals[k].at("lower"), ip + ".lower"),
                                     ReadI64(intervals[k].at("upper"), ip + ".upper")});
  }
  const Json& allowed = ArrayAt(item, "allowed_pools", p);
  for (size_t k = 0; k < allowed.size(); ++k) {
    buffer.allowed_pools.push_back(ReadU32(allowed[k], At(p + ".allowed_pools", k)));
  }
  return buffer;
}

DsaConstraints ReadConstraints(const Json& constraints, const std::string& cp) {
  DsaConstraints out;
  CheckObject(constraints, cp,
              {"colocations", "separations", "temporal_exclusions", "pinned_allocations"}, {});
  const Json& colocations = ArrayAt(constraints, "colocations", cp);
  for (size_t i = 0; i < colocations.size(); ++i) {
    out.colocations.push_back(ReadPair(colocations[i], At(cp + ".colocations", i)));
  }
  const Json& separations = ArrayAt(constraints, "separations", cp);
  for (size_t i = 0; i < separations.size(); ++i) {
    const std::string p = At(cp + ".separations", i);
    CheckObject(separations[i], p, {"first", "second"}, {"reasons"});
    DsaSeparation separation;
    separation.first = ReadU32(separations[i].at("first"), p + ".first");
    separation.second = ReadU32(separations[i].at("second"), p + ".second");
    if (separations[i].contains("reasons")) {
      const Json& reasons = ArrayAt(separations[i], "reasons", p);
      if (reasons.empty()) Fail(p + ".reasons", "must not be empty when present");
      for (size_t k = 0; k < reasons.size(); ++k) {
        separation.reasons.push_back(
            ReadEnum<DsaSeparationReason>(reasons[k], At(p + ".reasons", k), kSeparationReasons));
      }
    }
    out.separations.push_back(std::move(separation));
  }
  const Json& exclusions = ArrayAt(constraints, "temporal_exclusions", cp);
  for (size_t i = 0; i < exclusions.size(); ++i) {
    out.temporal_exclusions.push_back(ReadPair(exclusions[i], At(cp + ".temporal_exclusions", i)));
  }
  const Json& pins = ArrayAt(constraints, "pinned_allocations", cp);
  for (size_t i = 0; i < pins.size(); ++i) {
    const std::string p = At(cp + ".pinned_allocations", i);
    CheckObject(pins[i], p, {"buffer", "pool", "offset", "exclusive_for_all_time"}, {});
    if (!pins[i].at("exclusive_for_all_time").is_boolean()) {
      Fail(p + ".exclusive_for_all_time", "expected true or false");
    }
    out.pinned_allocations.push_back({ReadU32(pins[i].at("buffer"), p + ".buffer"),
                                      ReadU32(pins[i].at("pool"), p + ".pool"),
                                      ReadU64(pins[i].at("offset"), p + ".offset"),
                                      pins[i].at("exclusive_for_all_time").get<bool>()});
  }
  return out;
}

DsaCostModel ReadCostModel(const Json& model, const std::string& mp) {
  CheckObject(model, mp, {"reuse_penalties"}, {});
  DsaCostModel cost_model;
  const Json& penalties = ArrayAt(model, "reuse_penalties", mp);
  for (size_t i = 0; i < penalties.size(); ++i) {
    const std::string p = At(mp + ".reuse_penalties", i);
    CheckObject(penalties[i], p, {"first", "second", "cost", "reason"}, {});
    cost_model.reuse_penalties.push_back(
        {ReadU32(penalties[i].at("first"), p + ".first"),
         ReadU32(penalties[i].at("second"), p + ".second"),
         ReadU64(penalties[i].at("cost"), p + ".cost"),
         ReadEnum<DsaPenaltyReason>(penalties[i].at("reason"), p + ".reason", kPenaltyReasons)});
  }
  return cost_model;
}

DsaPyptoStructure ReadPyptoStructure(const Json& structure, const std::string& sp) {
  CheckObject(structure, sp, {"alias_classes", "pipeline_groups"}, {});
  DsaPyptoStructure result;
  const Json& aliases = ArrayAt(structure, "alias_classes", sp);
  for (size_t i = 0; i < aliases.size(); ++i) {
    const std::string p = At(sp + ".alias_classes", i);
    CheckObject(aliases[i], p, {"buffer", "members"}, {});
    DsaAliasClass alias;
    alias.buffer = ReadU32(aliases[i].at("buffer"), p + ".buffer");
    const Json& members = ArrayAt(aliases[i], "members", p);
    for (size_t k = 0; k < members.size(); ++k) {
      alias.members.push_back(ReadString(members[k], At(p + ".members", k)));
    }
    result.alias_classes.push_back(std::move(alias));
  }
  const Json& groups = ArrayAt(structure, "pipeline_groups", sp);
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string p = At(sp + ".pipeline_groups", i);
    CheckObject(groups[i], p, {"group", "pool", "slot_size", "depth", "effective_depth", "members"},
                {});
    DsaPipelineGroup group;
    group.group = ReadU32(groups[i].at("group"), p + ".group");
    group.pool = ReadU32(groups[i].at("pool"), p + ".pool");
    group.slot_size = ReadU64(groups[i].at("slot_size"), p + ".slot_size");
    group.depth = ReadU32(groups[i].at("depth"), p + ".depth");
    group.effective_depth = ReadU32(groups[i].at("effective_depth"), p + ".effective_depth");
    const Json& members = ArrayAt(groups[i], "members", p);
    for (size_t k = 0; k < members.size(); ++k) {
      const std::string mp = At(p + ".members", k);
      CheckObject(members[k], mp, {"buffer", "stage", "residue"}, {});
      group.members.push_back({ReadU32(members[k].at("buffer"), mp + ".buffer"),
                               ReadU32(members[k].at("stage"), mp + ".stage"),
                               ReadU32(members[k].at("residue"), mp + ".residue")});
    }
    result.pipeline_groups.push_back(std::move(group));
  }
  return result;
}

DsaObjective ReadObjective(const Json& objective, const std::string& op) {
  DsaObjective out;
  CheckObject(objective, op, {"aggregation", "terms"}, {});
  if (ReadString(objective.at("aggregation"), op + ".aggregation") != "lexicographic") {
    Fail(op + ".aggregation", "only \"lexicographic\" is defined");
  }
  const Json& terms = ArrayAt(objective, "terms", op);
  for (size_t i = 0; i < terms.size(); ++i) {
    out.terms.push_back(
        ReadEnum<DsaObjectiveTerm>(terms[i], At(op + ".terms", i), kObjectiveTerms));
  }
  return out;
}

// problem.extensions: the keys this reader knows are parsed and checked like any field; any
// other key is kept as canonical JSON text and reported in `warnings`.
DsaExtensions ReadExtensions(const Json& value, const std::string& path,
                             std::vector<std::string>* warnings) {
  if (!value.is_object()) Fail(path, "expected an object");
  DsaExtensions extensions;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string p = absl::StrCat(path, ".", it.key());
    if (it.key() == "exact_or_disjoint") {
      if (!it.value().is_array()) Fail(p, "expected an array");
      for (size_t i = 0; i < it.value().size(); ++i) {
        extensions.exact_or_disjoint.push_back(ReadPair(it.value()[i], At(p, i)));
      }
    } else {
      extensions.unknown[it.key()] = it.value().dump();
      warnings->push_back(absl::StrCat(p, ": unknown extension, ignored (kept when written)"));
    }
  }
  return extensions;
}

DsaProblem ReadProblem(const Json& value, const std::string& path,
                       std::vector<std::string>* warnings) {
  CheckObject(value, path, {"pools", "buffers", "constraints", "objective"},
              {"cost_model", "pypto_structure", "extensions"});
  DsaProblem problem;
  const Json& pools = ArrayAt(value, "pools", path);
  for (size_t i = 0; i < pools.size(); ++i) {
    problem.pools.push_back(ReadPool(pools[i], At(path + ".pools", i)));
  }
  const Json& buffers = ArrayAt(value, "buffers", path);
  for (size_t i = 0; i < buffers.size(); ++i) {
    problem.buffers.push_back(ReadBuffer(buffers[i], At(path + ".buffers", i)));
  }
  problem.constraints = ReadConstraints(value.at("constraints"), path + ".constraints");
  if (value.contains("cost_model")) {
    problem.cost_model = ReadCostModel(value.at("cost_model"), path + ".cost_model");
  }
  if (value.contains("pypto_structure")) {
    problem.pypto_structure =
        ReadPyptoStructure(value.at("pypto_structure"), path + ".pypto_structure");
  }
  problem.objective = ReadObjective(value.at("objective"), path + ".objective");
  if (value.contains("extensions")) {
    problem.extensions = ReadExtensions(value.at("extensions"), path + ".extensions", warnings);
  }
  return problem;
}

void ReadEnvelope(const Json& root, int* schema_version, std::string* profile,
                  std::string* instance) {
  const uint64_t version = ReadU64(root.at("schema_version"), "schema_version");
  if (version != 1) Fail("schema_version", absl::StrCat("unsupported version ", version));
  *schema_version = 1;
  *profile = ReadString(root.at("profile"), "profile");
  if (!IsDsaProfileName(*profile)) {
    ReadEnum<int>(root.at("profile"), "profile", kProfiles);  // Throws with the list.
  }
  *instance = ReadString(root.at("instance"), "instance");
  if (instance->empty()) Fail("instance", "must not be empty");
}

template <typename T>
absl::StatusOr<T> Guard(const std::string& source, const std::string& text,
                        T (*parse)(const Json&)) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": byte ", error.byte, ": JSON syntax error: ", error.what()));
  } catch (const Json::exception& error) {  // A number too large for 64 bits, say.
    return absl::InvalidArgumentError(absl::StrCat(source, ": invalid JSON: ", error.what()));
  }
  try {
    return parse(root);
  } catch (const ShapeError& error) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", error.message));
  } catch (const Json::exception& error) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", error.what()));
  }
}

DsaProblemDocument ParseProblemRoot(const Json& root) {
  CheckObject(root, "document", {"schema_version", "profile", "instance", "problem"},
              {"relaxed_from", "relaxed_features", "metadata"});
  DsaProblemDocument document;
  ReadEnvelope(root, &document.schema_version, &document.profile, &document.instance);
  if (root.contains("relaxed_from")) {
    document.relaxed_from = ReadString(root.at("relaxed_from"), "relaxed_from");
  }
  if (root.contains("relaxed_features")) {
    const Json& features = ArrayAt(root, "relaxed_features", "document");
    for (size_t i = 0; i < features.size(); ++i) {
      document.relaxed_features.push_back(ReadString(features[i], At("relaxed_features", i)));
    }
  }
  if (root.contains("metadata")) document.metadata = ReadMetadata(root.at("metadata"), "metadata");
  document.problem = ReadProblem(root.at("problem"), "problem", &document.warnings);
  return document;
}

DsaSolutionDocument ParseSolutionRoot(const Json& root) {
  CheckObject(
      root, "document",
      {"schema_version", "profile", "instance", "problem_fingerprint", "metadata", "placements"},
      {});
  DsaSolutionDocument document;
  ReadEnvelope(root, &document.schema_version, &document.profile, &document.instance);
  document.problem_fingerprint = ReadString(root.at("problem_fingerprint"), "problem_fingerprint");
  bool hex = document.problem_fingerprint.size() == 16;
  for (char c : document.problem_fingerprint) {
    hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  }
  if (!hex) Fail("problem_fingerprint", "expected 16 lowercase hex digits");
  document.metadata = ReadMetadata(root.at("metadata"), "metadata");
  const Json& placements = ArrayAt(root, "placements", "document");
  for (size_t i = 0; i < placements.size(); ++i) {
    const std::string p = At("placements", i);
    CheckObject(placements[i], p, {"buffer", "pool", "offset"}, {});
    document.placements.push_back({ReadU32(placements[i].at("buffer"), p + ".buffer"),
                                   ReadU32(placements[i].at("pool"), p + ".pool"),
                                   ReadU64(placements[i].at("offset"), p + ".offset")});
  }
  return document;
}

Json PairJson(uint32_t first, uint32_t second) {
  return Json{{"first", first}, {"second", second}};
}

// Written only when non-empty (DsaExtensions says why); unknown extensions as they were read.
Json ExtensionsJson(const DsaExtensions& extensions) {
  Json result = Json::object();
  for (const auto& [key, text] : extensions.unknown) {
    Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    result[key] = value.is_discarded() ? Json(text) : std::move(value);  // Set by hand, not read.
  }
  if (!extensions.exact_or_disjoint.empty()) {
    Json pairs = Json::array();
    for (const DsaPair& pair : extensions.exact_or_disjoint) {
      pairs.push_back(PairJson(pair.first, pair.second));
    }
    result["exact_or_disjoint"] = std::move(pairs);
  }
  return result;
}

Json ProblemJson(const DsaProblem& problem) {
  Json result = Json::object();
  Json pools = Json::array();
  for (const DsaPool& pool : problem.pools) {
    Json value{{"id", pool.id},
               {"name", pool.name},
               {"capacity", pool.capacity ? Json(*pool.capacity) : Json(nullptr)},
               {"reserved_ranges", Json::array()}};
    for (const DsaAddressRange& range : pool.reserved_ranges) {
      value["reserved_ranges"].push_back({{"begin", range.begin}, {"end", range.end}});
    }
    if (pool.bank_geometry) {
      value["bank_geometry"] = {{"bank_size", pool.bank_geometry->bank_size},
                                {"num_banks", pool.bank_geometry->num_banks}};
    }
    pools.push_back(std::move(value));
  }
  result["pools"] = std::move(pools);
  Json buffers = Json::array();
  for (const DsaBuffer& buffer : problem.buffers) {
    Json intervals = Json::array();
    for (const DsaInterval& interval : buffer.live_intervals) {
      intervals.push_back({{"lower", interval.lower}, {"upper", interval.upper}});
    }
    buffers.push_back({{"id", buffer.id},
                       {"name", buffer.name},
                       {"size", buffer.size},
                       {"alignment", buffer.alignment},
                       {"live_intervals", std::move(intervals)},
                       {"allowed_pools", buffer.allowed_pools}});
  }
  result["buffers"] = std::move(buffers);
  Json colocations = Json::array();
  for (const DsaPair& pair : problem.constraints.colocations) {
    colocations.push_back(PairJson(pair.first, pair.second));
  }
  Json separations = Json::array();
  for (const DsaSeparation& separation : problem.constraints.separations) {
    Json value = PairJson(separation.first, separation.second);
    if (!separation.reasons.empty()) {
      value["reasons"] = Json::array();
      for (DsaSeparationReason reason : separation.reasons) {
        value["reasons"].push_back(DsaSeparationReasonName(reason));
      }
    }
    separations.push_back(std::move(value));
  }
  Json exclusions = Json::array();
  for (const DsaPair& pair : problem.constraints.temporal_exclusions) {
    exclusions.push_back(PairJson(pair.first, pair.second));
  }
  Json pins = Json::array();
  for (const DsaPinnedAllocation& pin : problem.constraints.pinned_allocations) {
    pins.push_back({{"buffer", pin.buffer},
                    {"pool", pin.pool},
                    {"offset", pin.offset},
                    {"exclusive_for_all_time", pin.exclusive_for_all_time}});
  }
  result["constraints"] = {{"colocations", std::move(colocations)},
                           {"separations", std::move(separations)},
                           {"temporal_exclusions", std::move(exclusions)},
                           {"pinned_allocations", std::move(pins)}};
  if (problem.pypto_structure) {
    Json aliases = Json::array();
    for (const DsaAliasClass& alias : problem.pypto_structure->alias_classes) {
      aliases.push_back({{"buffer", alias.buffer}, {"members", alias.members}});
    }
    Json groups = Json::array();
    for (const DsaPipelineGroup& group : problem.pypto_structure->pipeline_groups) {
      Json members = Json::array();
      for (const DsaPipelineMember& member : group.members) {
        members.push_back(
            {{"buffer", member.buffer}, {"stage", member.stage}, {"residue", member.residue}});
      }
      groups.push_back({{"group", group.group},
                        {"pool", group.pool},
                        {"slot_size", group.slot_size},
                        {"depth", group.depth},
                        {"effective_depth", group.effective_depth},
                        {"members", std::move(members)}});
    }
    result["pypto_structure"] = {{"alias_classes", std::move(aliases)},
                                 {"pipeline_groups", std::move(groups)}};
  }
  if (problem.cost_model) {
    Json penalties = Json::array();
    for (const DsaReusePenalty& penalty : problem.cost_model->reuse_penalties) {
      penalties.push_back({{"first", penalty.first},
                           {"second", penalty.second},
                           {"cost", penalty.cost},
                           {"reason", DsaPenaltyReasonName(penalty.reason)}});
    }
    result["cost_model"] = {{"reuse_penalties", std::move(penalties)}};
  }
  Json terms = Json::array();
  for (DsaObjectiveTerm term : problem.objective.terms) terms.push_back(DsaObjectiveTermName(term));
  result["objective"] = {{"aggregation", "lexicographic"}, {"terms", std::move(terms)}};
  if (!problem.extensions.empty()) result["extensions"] = ExtensionsJson(problem.extensions);
  return result;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

const char* DsaSeparationReasonName(DsaSeparationReason reason) {
  return kSeparationReasons[static_cast<int>(reason)];
}
const char* DsaPenaltyReasonName(DsaPenaltyReason reason) {
  return kPenaltyReasons[static_cast<int>(reason)];
}
const char* DsaObjectiveTermName(DsaObjectiveTerm term) {
  return kObjectiveTerms[static_cast<int>(term)];
}
bool IsDsaProfileName(const std::string& profile) {
  for (const char* name : kProfiles) {
    if (profile == name) return true;
  }
  return false;
}

absl::StatusOr<DsaProblemDocument> ParseDsaProblemJson(const std::string& text,
                                                       const std::string& source) {
  return Guard<DsaProblemDocument>(source, text, &ParseProblemRoot);
}

absl::StatusOr<DsaSolutionDocument> ParseDsaSolutionJson(const std::string& text,
                                                         const std::string& source) {
  return Guard<DsaSolutionDocument>(source, text, &ParseSolutionRoot);
}

absl::StatusOr<DsaProblemDocument> ReadDsaProblemFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return ParseDsaProblemJson(*text, path);
}

absl::StatusOr<DsaSolutionDocument> ReadDsaSolutionFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return ParseDsaSolutionJson(*text, path);
}

std::string WriteDsaProblemJson(const DsaProblemDocument& document) {
  Json root{{"schema_version", document.schema_version},
            {"profile", document.profile},
            {"instance", document.instance},
            {"metadata", document.metadata}};
  if (document.relaxed_from) root["relaxed_from"] = *document.relaxed_from;
  if (!document.relaxed_features.empty()) root["relaxed_features"] = document.relaxed_features;
  root["problem"] = ProblemJson(document.problem);
  return root.dump(2) + "\n";
}

std::string WriteDsaSolutionJson(const DsaSolutionDocument& document) {
  std::vector<DsaPlacement> placements = document.placements;
  std::sort(placements.begin(), placements.end(),
            [](const DsaPlacement& a, const DsaPlacement& b) { return a.buffer < b.buffer; });
  Json list = Json::array();
  for (const DsaPlacement& placement : placements) {
    list.push_back(
        {{"buffer", placement.buffer}, {"pool", placement.pool}, {"offset", placement.offset}});
  }
  Json root{{"schema_version", document.schema_version},
            {"profile", document.profile},
            {"instance", document.instance},
            {"problem_fingerprint", document.problem_fingerprint},
            {"metadata", document.metadata},
            {"placements", std::move(list)}};
  return root.dump(2) + "\n";
}

std::string DsaProblemFingerprint(const DsaProblemDocument& document) {
  const std::string text = WriteDsaProblemJson(document);
  uint64_t hash = 14695981039346656037ULL;  // FNV-1a, 64-bit.
  for (unsigned char byte : text) {
    hash ^= byte;
    hash *= 1099511628211ULL;
  }
  return absl::StrFormat("%016x", hash);
}

int FindDsaBuffer(const DsaProblem& problem, uint32_t id) {
  // Producers number buffers 0, 1, 2, ... in order (every corpus file does): then the id is the
  // index, and the checkers' per-pair lookups stay O(1). Ids are unique in a valid problem.
  if (id < problem.buffers.size() && problem.buffers[id].id == id) return static_cast<int>(id);
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    if (problem.buffers[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

int FindDsaPool(const DsaProblem& problem, uint32_t id) {
  for (size_t i = 0; i < problem.pools.size(); ++i) {
    if (problem.pools[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

namespace {

bool InPool(const DsaBuffer& b, uint32_t pool) {
  return !b.allowed_pools.empty() && b.allowed_pools[0] == pool;
}

// Buffer id -> index in problem.buffers.
std::map<uint32_t, size_t> BufferIndex(const DsaProblem& problem) {
  std::map<uint32_t, size_t> out;
  for (size_t i = 0; i < problem.buffers.size(); ++i) out.emplace(problem.buffers[i].id, i);
  return out;
}

}  // namespace

DsaProblem RestrictDsaProblemToPool(const DsaProblem& problem, uint32_t pool,
                                    std::vector<uint32_t>* ids) {
  DsaProblem out;
  out.objective = problem.objective;
  for (const DsaPool& pl : problem.pools) {
    if (pl.id == pool) out.pools.push_back(pl);
  }
  std::map<uint32_t, uint32_t> renumber;  // old id -> new id
  for (const DsaBuffer& b : problem.buffers) {
    if (!InPool(b, pool)) continue;
    const uint32_t id = static_cast<uint32_t>(out.buffers.size());
    renumber.emplace(b.id, id);
    ids->push_back(b.id);
    out.buffers.push_back(b);
    out.buffers.back().id = id;
    out.buffers.back().allowed_pools = {pool};
  }
  auto kept = [&](uint32_t a) { return renumber.count(a) != 0; };
  auto pair = [&](const DsaPair& p) { return DsaPair{renumber[p.first], renumber[p.second]}; };
  const DsaConstraints& c = problem.constraints;
  for (const DsaPair& p : c.colocations) {
    if (kept(p.first) && kept(p.second)) out.constraints.colocations.push_back(pair(p));
  }
  for (const DsaPair& p : c.temporal_exclusions) {
    if (kept(p.first) && kept(p.second)) out.constraints.temporal_exclusions.push_back(pair(p));
  }
  for (const DsaSeparation& sep : c.separations) {
    if (kept(sep.first) && kept(sep.second)) {
      out.constraints.separations.push_back(
          {renumber[sep.first], renumber[sep.second], sep.reasons});
    }
  }
  for (const DsaPinnedAllocation& pin : c.pinned_allocations) {
    if (!kept(pin.buffer) || pin.pool != pool) continue;
    out.constraints.pinned_allocations.push_back(pin);
    out.constraints.pinned_allocations.back().buffer = renumber[pin.buffer];
  }
  if (problem.cost_model) {
    out.cost_model.emplace();
    for (const DsaReusePenalty& e : problem.cost_model->reuse_penalties) {
      if (!kept(e.first) || !kept(e.second)) continue;
      out.cost_model->reuse_penalties.push_back(e);
      out.cost_model->reuse_penalties.back().first = renumber[e.first];
      out.cost_model->reuse_penalties.back().second = renumber[e.second];
    }
  }
  for (const DsaPair& p : problem.extensions.exact_or_disjoint) {
    if (kept(p.first) && kept(p.second)) out.extensions.exact_or_disjoint.push_back(pair(p));
  }
  if (problem.pypto_structure) {
    out.pypto_structure.emplace();
    for (const DsaAliasClass& a : problem.pypto_structure->alias_classes) {
      if (kept(a.buffer))
        out.pypto_structure->alias_classes.push_back({renumber[a.buffer], a.members});
    }
    for (const DsaPipelineGroup& g : problem.pypto_structure->pipeline_groups) {
      if (g.pool != pool) continue;
      DsaPipelineGroup group = g;
      group.members.clear();
      for (const DsaPipelineMember& m : g.members) {
        if (kept(m.buffer)) group.members.push_back({renumber[m.buffer], m.stage, m.residue});
      }
      if (!group.members.empty()) out.pypto_structure->pipeline_groups.push_back(std::move(group));
    }
  }
  return out;
}

uint64_t DsaPoolReuseCost(const DsaProblem& problem, uint32_t pool,
                          const std::vector<uint64_t>& offsets) {
  if (!problem.cost_model) return 0;
  const std::map<uint32_t, size_t> index = BufferIndex(problem);
  uint64_t cost = 0;
  for (const DsaReusePenalty& e : problem.cost_model->reuse_penalties) {
    auto a = index.find(e.first), b = index.find(e.second);
    if (a == index.end() || b == index.end()) continue;
    const DsaBuffer& x = problem.buffers[a->second];
    const DsaBuffer& y = problem.buffers[b->second];
    if (!InPool(x, pool) || !InPool(y, pool)) continue;
    const uint64_t ox = offsets[a->second], oy = offsets[b->second];
    if (ox < oy + y.size && oy < ox + x.size) {
      cost = cost > std::numeric_limits<uint64_t>::max() - e.cost
                 ? std::numeric_limits<uint64_t>::max()
                 : cost + e.cost;
    }
  }
  return cost;
}

uint64_t DsaPoolPeak(const DsaProblem& problem, uint32_t pool,
                     const std::vector<uint64_t>& offsets) {
  uint64_t peak = 0;
  for (const DsaPool& pl : problem.pools) {
    if (pl.id != pool) continue;
    for (const DsaAddressRange& r : pl.reserved_ranges) peak = std::max(peak, r.end);
  }
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    if (InPool(problem.buffers[i], pool)) {
      peak = std::max(peak, offsets[i] + problem.buffers[i].size);
    }
  }
  return peak;
}

namespace {

// ValidateDsaProblem's checks, one part of the problem each, collecting every message.
class ProblemChecker {
 public:
  explicit ProblemChecker(const DsaProblem& problem) : problem_(problem) {}

  std::vector<std::string> Run() {
    CheckPools();
    CheckBuffers();
    CheckPairs();
    CheckPins();
    CheckCostsAndStructure();
    CheckExtensions();
    CheckObjective();
    return std::move(errors_);
  }

 private:
  bool Known(uint32_t id) const { return buffer_index_.count(id) != 0; }

  // A pair constraint's buffers exist and differ.
  bool CheckPair(const std::string& what, size_t i, uint32_t a, uint32_t b) {
    if (!Known(a) || !Known(b)) {
      errors_.push_back(absl::StrCat("problem.constraints.", what, "[", i, "]: unknown buffer ",
                                     Known(a) ? b : a));
      return false;
    }
    if (a == b) {
      errors_.push_back(absl::StrCat("problem.constraints.", what, "[", i, "]: buffer ", a,
                                     " paired with itself"));
      return false;
    }
    return true;
  }

  void CheckPools() {
    if (problem_.pools.empty()) errors_.push_back("problem.pools: no pools");
    for (size_t i = 0; i < problem_.pools.size(); ++i) {
      const DsaPool& pool = problem_.pools[i];
      const std::string name = absl::StrCat("problem.pools[", i, "] (id ", pool.id, ")");
      if (!pool_index_.emplace(pool.id, i).second) errors_.push_back(name + ": duplicate pool id");
      for (const DsaAddressRange& range : pool.reserved_ranges) {
        if (range.begin >= range.end) {
          errors_.push_back(absl::StrCat(name, ": reserved range [", range.begin, ", ", range.end,
                                         ") is empty or inverted"));
        } else if (pool.capacity && range.end > *pool.capacity) {
          errors_.push_back(absl::StrCat(name, ": reserved range [", range.begin, ", ", range.end,
                                         ") exceeds capacity ", *pool.capacity));
        }
      }
      if (pool.bank_geometry &&
          (pool.bank_geometry->bank_size == 0 || pool.bank_geometry->num_banks == 0)) {
        errors_.push_back(name + ": bank geometry with a zero field");
      }
    }
  }

  void CheckBuffers() {
    if (problem_.buffers.empty()) errors_.push_back("problem.buffers: no buffers");
    for (size_t i = 0; i < problem_.buffers.size(); ++i) {
      const DsaBuffer& buffer = problem_.buffers[i];
      const std::string name = absl::StrCat("problem.buffers[", i, "] (id ", buffer.id, ")");
      if (!buffer_index_.emplace(buffer.id, i).second)
        errors_.push_back(name + ": duplicate buffer id");
      if (buffer.size == 0) errors_.push_back(name + ": size 0");
      if (buffer.size > (uint64_t{1} << 60)) errors_.push_back(name + ": size above 2^60");
      if (buffer.alignment == 0 || (buffer.alignment & (buffer.alignment - 1)) != 0) {
        errors_.push_back(
            absl::StrCat(name, ": alignment ", buffer.alignment, " is not a power of two"));
      }
      if (buffer.live_intervals.empty()) errors_.push_back(name + ": no live interval");
      for (const DsaInterval& interval : buffer.live_intervals) {
        if (interval.lower >= interval.upper) {
          errors_.push_back(absl::StrCat(name, ": live interval [", interval.lower, ", ",
                                         interval.upper, ") is empty or inverted"));
        }
      }
      if (buffer.allowed_pools.empty()) errors_.push_back(name + ": no allowed pool");
      std::set<uint32_t> seen;
      for (uint32_t pool : buffer.allowed_pools) {
        if (!seen.insert(pool).second)
          errors_.push_back(absl::StrCat(name, ": pool ", pool, " twice"));
        if (!pool_index_.count(pool)) {
          errors_.push_back(absl::StrCat(name, ": allowed pool ", pool, " does not exist"));
        }
      }
    }
  }

  void CheckPairs() {
    std::set<std::pair<uint32_t, uint32_t>> colocated;
    for (size_t i = 0; i < problem_.constraints.colocations.size(); ++i) {
      const DsaPair& pair = problem_.constraints.colocations[i];
      if (CheckPair("colocations", i, pair.first, pair.second)) {
        colocated.insert(std::minmax(pair.first, pair.second));
      }
    }
    for (size_t i = 0; i < problem_.constraints.separations.size(); ++i) {
      const DsaSeparation& separation = problem_.constraints.separations[i];
      if (!CheckPair("separations", i, separation.first, separation.second)) continue;
      if (colocated.count(std::minmax(separation.first, separation.second))) {
        errors_.push_back(absl::StrCat("problem.constraints.separations[", i, "]: buffers ",
                                       separation.first, " and ", separation.second,
                                       " are also colocated"));
      }
      std::set<DsaSeparationReason> reasons(separation.reasons.begin(), separation.reasons.end());
      if (reasons.size() != separation.reasons.size()) {
        errors_.push_back(
            absl::StrCat("problem.constraints.separations[", i, "]: repeated reason"));
      }
    }
    for (size_t i = 0; i < problem_.constraints.temporal_exclusions.size(); ++i) {
      const DsaPair& pair = problem_.constraints.temporal_exclusions[i];
      CheckPair("temporal_exclusions", i, pair.first, pair.second);
    }
  }

  void CheckPins() {
    std::set<uint32_t> pinned;
    for (size_t i = 0; i < problem_.constraints.pinned_allocations.size(); ++i) {
      const DsaPinnedAllocation& pin = problem_.constraints.pinned_allocations[i];
      const std::string name = absl::StrCat("problem.constraints.pinned_allocations[", i, "]");
      if (!Known(pin.buffer)) {
        errors_.push_back(absl::StrCat(name, ": unknown buffer ", pin.buffer));
        continue;
      }
      if (!pinned.insert(pin.buffer).second) {
        errors_.push_back(absl::StrCat(name, ": buffer ", pin.buffer, " pinned twice"));
      }
      const DsaBuffer& buffer = problem_.buffers[buffer_index_[pin.buffer]];
      auto pool_it = pool_index_.find(pin.pool);
      if (pool_it == pool_index_.end() ||
          std::find(buffer.allowed_pools.begin(), buffer.allowed_pools.end(), pin.pool) ==
              buffer.allowed_pools.end()) {
        errors_.push_back(
            absl::StrCat(name, ": pool ", pin.pool, " is not allowed for buffer ", pin.buffer));
        continue;
      }
      if (buffer.alignment != 0 && pin.offset % buffer.alignment != 0) {
        errors_.push_back(
            absl::StrCat(name, ": offset ", pin.offset, " is not aligned to ", buffer.alignment));
      }
      if (pin.offset > (uint64_t{1} << 62)) {
        errors_.push_back(absl::StrCat(name, ": offset ", pin.offset, " above 2^62"));
        continue;
      }
      const DsaPool& pool = problem_.pools[pool_it->second];
      const uint64_t end = pin.offset + buffer.size;
      if (pool.capacity && end > *pool.capacity) {
        errors_.push_back(absl::StrCat(name, ": [", pin.offset, ", ", end, ") exceeds capacity ",
                                       *pool.capacity));
      }
      for (const DsaAddressRange& range : pool.reserved_ranges) {
        if (pin.offset < range.end && range.begin < end) {
          errors_.push_back(absl::StrCat(name, ": [", pin.offset, ", ", end,
                                         ") overlaps reserved range [", range.begin, ", ",
                                         range.end, ")"));
        }
      }
    }
  }

  void CheckCostsAndStructure() {
    if (problem_.cost_model) {
      for (size_t i = 0; i < problem_.cost_model->reuse_penalties.size(); ++i) {
        const DsaReusePenalty& penalty = problem_.cost_model->reuse_penalties[i];
        if (!Known(penalty.first) || !Known(penalty.second) || penalty.first == penalty.second) {
          errors_.push_back(absl::StrCat("problem.cost_model.reuse_penalties[", i,
                                         "]: unknown or repeated buffer"));
        }
      }
    }
    if (problem_.pypto_structure) {
      for (size_t i = 0; i < problem_.pypto_structure->alias_classes.size(); ++i) {
        const DsaAliasClass& alias = problem_.pypto_structure->alias_classes[i];
        if (!Known(alias.buffer) || alias.members.empty()) {
          errors_.push_back(absl::StrCat("problem.pypto_structure.alias_classes[", i,
                                         "]: unknown buffer or no members"));
        }
      }
      for (size_t i = 0; i < problem_.pypto_structure->pipeline_groups.size(); ++i) {
        const DsaPipelineGroup& group = problem_.pypto_structure->pipeline_groups[i];
        const std::string name = absl::StrCat("problem.pypto_structure.pipeline_groups[", i, "]");
        if (!pool_index_.count(group.pool)) errors_.push_back(name + ": unknown pool");
        if (group.slot_size == 0 || group.depth == 0 || group.effective_depth == 0 ||
            group.effective_depth > group.depth) {
          errors_.push_back(name + ": slot size, depth or effective depth out of range");
        }
        for (const DsaPipelineMember& member : group.members) {
          if (!Known(member.buffer)) {
            errors_.push_back(absl::StrCat(name, ": unknown buffer ", member.buffer));
          } else if (member.residue >= group.effective_depth) {
            errors_.push_back(absl::StrCat(name, ": buffer ", member.buffer, " residue ",
                                           member.residue, " >= effective depth"));
          }
        }
      }
    }
  }

  // An exact_or_disjoint pair names two known, different buffers that may share a pool (else
  // it says nothing: a mistake of the producer), once.
  void CheckExtensions() {
    std::set<std::pair<uint32_t, uint32_t>> seen;
    const std::vector<DsaPair>& pairs = problem_.extensions.exact_or_disjoint;
    for (size_t i = 0; i < pairs.size(); ++i) {
      const std::string name = absl::StrCat("problem.extensions.exact_or_disjoint[", i, "]");
      const uint32_t a = pairs[i].first, b = pairs[i].second;
      if (!Known(a) || !Known(b)) {
        errors_.push_back(absl::StrCat(name, ": unknown buffer ", Known(a) ? b : a));
        continue;
      }
      if (a == b) {
        errors_.push_back(absl::StrCat(name, ": buffer ", a, " paired with itself"));
        continue;
      }
      if (!seen.insert(std::minmax(a, b)).second) {
        errors_.push_back(absl::StrCat(name, ": buffers ", a, " and ", b, " paired twice"));
      }
      const std::vector<uint32_t>& pools_a = problem_.buffers[buffer_index_[a]].allowed_pools;
      const std::vector<uint32_t>& pools_b = problem_.buffers[buffer_index_[b]].allowed_pools;
      bool common = false;
      for (uint32_t pool : pools_a) {
        common = common || std::find(pools_b.begin(), pools_b.end(), pool) != pools_b.end();
      }
      if (!common) {
        errors_.push_back(
            absl::StrCat(name, ": buffers ", a, " and ", b, " have no allowed pool in common"));
      }
    }
  }

  void CheckObjective() {
    if (problem_.objective.terms.empty()) errors_.push_back("problem.objective.terms: empty");
    std::set<DsaObjectiveTerm> terms(problem_.objective.terms.begin(),
                                     problem_.objective.terms.end());
    if (terms.size() != problem_.objective.terms.size()) {
      errors_.push_back("problem.objective.terms: repeated term");
    }
  }

  const DsaProblem& problem_;
  std::vector<std::string> errors_;
  std::map<uint32_t, size_t> pool_index_;
  std::map<uint32_t, size_t> buffer_index_;
};

}  // namespace

std::vector<std::string> ValidateDsaProblem(const DsaProblem& problem) {
  return ProblemChecker(problem).Run();
}

}  // namespace policy
}  // namespace accelmem
