#include "passes/testing/program_generator.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "ir/parser.h"

namespace accelmem {
namespace passes_testing {

uint64_t SplitMix64::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int64_t SplitMix64::Uniform(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(Next() % span);
}

bool SplitMix64::Percent(int percent) { return Uniform(0, 99) < percent; }

namespace {

enum class Sp { kVec, kMat, kLeft, kRight, kAcc, kBias };
constexpr int kNumSp = 6;

const char* SpName(Sp s) {
  switch (s) {
    case Sp::kVec:
      return "Vec";
    case Sp::kMat:
      return "Mat";
    case Sp::kLeft:
      return "Left";
    case Sp::kRight:
      return "Right";
    case Sp::kAcc:
      return "Acc";
    case Sp::kBias:
      return "Bias";
  }
  return "Vec";
}

// Bytes the generator lets each space use in one function when nothing is shared: below the
// smallest capacity of the Ascend backends (910B), leaving room for the copies the passes add.
constexpr int64_t kBudget[kNumSp] = {120 * 1024, 320 * 1024, 40 * 1024, 40 * 1024, 80 * 1024, 768};

struct Val {
  std::string name;
  int64_t r = 0, c = 0;
  std::string dt;  // "FP32" or "FP16"
  Sp sp = Sp::kVec;
  bool view = false;
  bool contiguous = true;
  std::string layout;  // "", "ND" or "NZ": the tile's stated storage layout
};

int64_t Bits(const std::string& dt) { return dt == "FP32" ? 32 : 16; }

std::string TileT(const Val& v) {
  return absl::StrCat("Tile[[", v.r, ", ", v.c, "], ", v.dt, ", ", SpName(v.sp),
                      v.layout.empty() ? "" : absl::StrCat(", layout=", v.layout), "]");
}

// Equal types: what a yield, a carry or an if result needs of its value.
bool SameType(const Val& a, const Val& b) {
  return a.sp == b.sp && a.r == b.r && a.c == b.c && a.dt == b.dt && a.layout == b.layout;
}

class Generator {
 public:
  // Layouts come from a stream of their own, so that the programs are those of the generator
  // before layouts existed, with layouts added.
  Generator(uint64_t seed, const GeneratorOptions& options)
      : rng_(seed),
        layout_rng_(seed ^ 0x6c61796f75747321ULL),
        pipeline_rng_(seed ^ 0x706970656c696e65ULL),
        declared_rng_(seed ^ 0x6465636c61726564ULL),
        options_(options) {}

  GeneratedProgram Run(uint64_t seed) {
    GeneratedProgram out;
    out.seed = seed;
    const int n = static_cast<int>(rng_.Uniform(options_.min_functions, options_.max_functions));
    std::vector<std::string> functions;
    for (int i = 0; i < n; ++i) functions.push_back(Function(i));
    out.text = absl::StrJoin(functions, "\n");
    out.may_exceed_capacity = over_capacity_;
    if (over_capacity_) {
      out.accepted_errors = {"exceeds platform limit"};
      if (huge_reserve_) {
        out.accepted_errors.push_back("reserve_buffer 'huge'");
        // The huge range from base 0 covers the small explicit reserves after it.
        out.accepted_errors.push_back("overlapping reserve_buffer ranges");
      }
    }
    return out;
  }

 private:
  int64_t U(int64_t lo, int64_t hi) { return rng_.Uniform(lo, hi); }
  bool P(int percent) { return rng_.Percent(percent); }
  template <typename T>
  const T& OneOf(const std::vector<T>& v) {
    return v[static_cast<size_t>(U(0, static_cast<int64_t>(v.size()) - 1))];
  }

  // A Vec tile's stated layout where one is chosen freshly (loads, creates, moves): none most of
  // the time, NZ and ND otherwise; views, write-into results, carries and yields keep their
  // source's (the verifier's layout rule).
  std::string FreshLayout(Sp sp) {
    if (sp != Sp::kVec || !options_.layouts) return "";
    const int64_t r = layout_rng_.Uniform(0, 99);
    return r < 30 ? "NZ" : r < 45 ? "ND" : "";
  }

  void Line(int depth, const std::string& s) { lines_.push_back(std::string(4 * depth, ' ') + s); }
  std::string Fresh() { return absl::StrCat("v", n_++); }

  std::string Function(int index) {
    lines_.clear();
    declared_.clear();
    scopes_ = {{}};
    dead_.clear();
    n_ = 0;
    used_.fill(0);
    const int kind = static_cast<int>(U(0, 99));
    type_ = kind < 40 ? "AIV" : kind < 75 ? "AIC" : "InCore";
    cube_ = type_ != "AIV";
    const std::string reserve_space = type_ == "AIC" ? "Mat" : "Vec";
    const int reserve_sp = type_ == "AIC" ? static_cast<int>(Sp::kMat) : static_cast<int>(Sp::kVec);

    if (options_.over_capacity_percent > 0 && P(options_.over_capacity_percent)) {
      over_capacity_ = true;
      if (P(50)) {
        huge_reserve_ = true;
        Line(1, absl::StrCat("system.reserve_buffer(name=\"huge\", size=",
                             OneOf<int64_t>({1LL << 20, 1LL << 40, 4611686018427387904LL}),
                             OneOf<std::string>(
                                 {", base=-1)", ")", ", base=0)", ", base=9223372036854775000)"})));
      } else {
        Val v{Fresh(), 1024, 1024, "FP32", Sp::kVec};
        Line(1, absl::StrCat(v.name, ": ", TileT(v), " = tile.create([1024, 1024], FP32, Vec)"));
        scopes_.back().push_back(v);
      }
    }
    // Reserve buffers: explicit bases increase and never overlap; AUTO ones go after them.
    std::vector<std::string> reserves;
    if (P(35)) {
      const int count = static_cast<int>(U(1, 3));
      int64_t next = 32 * U(0, 4);
      for (int i = 0; i < count; ++i) {
        const int64_t size = 32 * U(1, 48);
        std::string base;
        const int how = static_cast<int>(U(0, 2));
        if (how == 0) {
          base = absl::StrCat(", base=", next);
        } else if (how == 1) {
          base = ", base=-1";
        }
        // An explicit base is far above everything before it, so AUTO ranges never reach it.
        next += size + 32 * U(0, 4) + 8192;
        reserves.push_back(absl::StrCat("system.reserve_buffer(name=\"", type_ == "AIC" ? "c" : "v",
                                        index, "_rb", i, "\", size=", size, base, ")"));
        used_[reserve_sp] += size + 8192 + 256;
      }
    }
    (void)reserve_space;
    const int stmts = static_cast<int>(U(3, options_.max_top_statements));
    size_t next_reserve = 0;
    for (int i = 0; i < stmts; ++i) {
      if (next_reserve < reserves.size() && P(30)) Line(1, reserves[next_reserve++]);
      Statement(1, 0);
    }
    while (next_reserve < reserves.size()) Line(1, reserves[next_reserve++]);
    // Keep a few old values alive to the end (long lifetimes), then store one FP32 Vec tile.
    std::vector<Val> all = Visible([](const Val& v) {
      return v.sp == Sp::kVec && v.dt == "FP32" && v.r <= 128 && v.c <= 128;
    });
    Val last = all.empty() || P(20) ? Load(1, "FP32", Sp::kVec) : OneOf(all);
    if (!all.empty() && P(50)) {
      Val other = OneOf(all);
      if (other.r == last.r && other.c == last.c) {
        last = Define(1, last, absl::StrCat("tile.add(", last.name, ", ", other.name, ")"));
      }
    }
    const std::string o = Fresh();
    Line(1,
         absl::StrCat(o, ": Tensor[[128, 128], FP32] = tile.store(", last.name, ", [0, 0], x32)"));
    Line(1, absl::StrCat("return ", o));
    return absl::StrCat("@function(type=", type_, ")\n", "def f", index,
                        "(flag: Scalar[INT32], x32: Tensor[[128, 128], FP32], x16: "
                        "Tensor[[128, 128], FP16]) -> Tensor[[128, 128], FP32]:\n",
                        absl::StrJoin(declared_, ""), absl::StrJoin(lines_, "\n"), "\n");
  }

  template <typename Pred>
  std::vector<Val> Visible(Pred pred) const {
    std::vector<Val> out;
    for (const auto& scope : scopes_) {
      for (const Val& v : scope) {
        if (!dead_.count(v.name) && pred(v)) out.push_back(v);
      }
    }
    return out;
  }
  // Values of the innermost scope (loop iter-args and body values) first, half of the time.
  template <typename Pred>
  std::vector<Val> Prefer(Pred pred) {
    if (scopes_.size() > 1 && P(50)) {
      std::vector<Val> inner;
      for (const Val& v : scopes_.back()) {
        if (!dead_.count(v.name) && pred(v)) inner.push_back(v);
      }
      if (!inner.empty()) return inner;
    }
    return Visible(pred);
  }

  // Inside a pipelined loop a new tile takes one slot per stage.
  bool Fits(Sp sp, int64_t bytes) const {
    return used_[static_cast<int>(sp)] + bytes * stages_ <= kBudget[static_cast<int>(sp)];
  }

  Val Define(int depth, Val v, const std::string& rhs, const std::string& memref = "") {
    v.name = Fresh();
    if (!v.view) used_[static_cast<int>(v.sp)] += (v.r * v.c * Bits(v.dt) / 8 + 128) * stages_;
    std::string type = TileT(v);
    if (!memref.empty()) {
      const std::string space = SpName(v.sp);
      type.insert(type.find(space) + space.size(), memref);  // after the space, before a layout
    }
    Line(depth, absl::StrCat(v.name, ": ", type, " = ", rhs));
    scopes_.back().push_back(v);
    return v;
  }

  // `layout`: the stated layout the value must have (a yield's), else a fresh one.
  Val Load(int depth, const std::string& dt, Sp sp, int64_t r = 0, int64_t c = 0,
           const std::string* layout = nullptr) {
    if (r == 0) r = OneOf<int64_t>({8, 16, 16, 32});
    if (c == 0) c = OneOf<int64_t>({16, 32, 64});
    Val v{"", r, c, dt, sp};
    v.layout = layout != nullptr ? *layout : FreshLayout(sp);
    if (r > 128 || c > 128) {  // larger than the tensors: an over-capacity value's shape
      return Define(depth, v,
                    absl::StrCat("tile.create([", r, ", ", c, "], ", dt, ", ", SpName(sp), ")"));
    }
    const int64_t ro = P(50) ? 0 : U(0, 128 - r);
    const int64_t co = P(50) ? 0 : U(0, 128 - c);
    return Define(
        depth, v,
        absl::StrCat("tile.load(", dt == "FP32" ? "x32" : "x16", ", [", ro, ", ", co, "], [", r,
                     ", ", c, "]", sp == Sp::kVec ? "" : absl::StrCat(", space=", SpName(sp)), ")"),
        Declare(depth, v));
  }

  // Some top-level Vec loads go to an allocation the author declared (`declared=1`, closed to
  // every other buffer): `, memref=declN` for the load's type, its tile.alloc put first in the
  // body. Drawn from a stream of its own, so the programs are otherwise those without them.
  std::string Declare(int depth, const Val& v) {
    if (!options_.declared || depth != 1 || v.sp != Sp::kVec ||
        declared_rng_.Uniform(0, 99) >= 12) {
      return "";
    }
    const std::string name = absl::StrCat("decl", declared_.size());
    declared_.push_back(absl::StrCat("    ", name, ": MemRefType = tile.alloc(Vec, -1, ",
                                     v.r * v.c * Bits(v.dt) / 8, ", ", declared_.size(),
                                     ", declared=1)\n"));
    return absl::StrCat(", memref=", name);
  }

  // A Vec value of any dtype, loading one when there is none (or sometimes anyway).
  Val PickVec(int depth, bool allow_view = true) {
    std::vector<Val> vals =
        Prefer([&](const Val& v) { return v.sp == Sp::kVec && (allow_view || !v.view); });
    if (vals.empty() || P(10)) {
      if (!Fits(Sp::kVec, 8192)) {
        vals = Visible([&](const Val& v) { return v.sp == Sp::kVec && (allow_view || !v.view); });
        if (!vals.empty()) return OneOf(vals);
      }
      return Load(depth, P(60) ? "FP32" : "FP16", Sp::kVec);
    }
    return OneOf(vals);
  }

  void Statement(int depth, int loops) {
    const int r = static_cast<int>(U(0, 99));
    if (!Fits(Sp::kVec, 8192) && r < 60) {
      // Out of Vec budget: only statements that allocate nothing new in Vec.
      if (depth < options_.max_depth && P(50)) return If(depth, loops);
      Slice(depth, PickVec(depth, options_.slices_of_views));
      return;
    }
    if (r < 8) {
      Load(depth, P(60) ? "FP32" : "FP16", Sp::kVec);
    } else if (r < 11) {
      Val v{"", OneOf<int64_t>({8, 16, 32}), OneOf<int64_t>({16, 32, 64}), P(50) ? "FP32" : "FP16",
            Sp::kVec};
      v.layout = FreshLayout(Sp::kVec);
      Define(depth, v, absl::StrCat("tile.create([", v.r, ", ", v.c, "], ", v.dt, ", Vec)"));
    } else if (r < 25) {
      Val a = PickVec(depth);
      std::vector<Val> same = Prefer(
          [&](const Val& v) { return v.sp == a.sp && v.r == a.r && v.c == a.c && v.dt == a.dt; });
      Val b = same.empty() ? a : OneOf(same);
      static const std::vector<std::string> kOps = {"tile.add", "tile.sub", "tile.mul"};
      a.view = false;
      a.contiguous = true;
      Define(depth, a, absl::StrCat(OneOf(kOps), "(", a.name, ", ", b.name, ")"));
    } else if (r < 30) {
      Val a = PickVec(depth);
      const std::string arg = a.name;
      a.view = false;
      a.contiguous = true;
      Define(depth, a,
             absl::StrCat("tile.muls(", arg, ", ", OneOf<std::string>({"0.5", "2", "-1.25"}), ")"));
    } else if (r < 40) {
      Val a = PickVec(depth);
      const std::string arg = a.name;
      a.view = false;
      a.contiguous = true;
      static const std::vector<std::string> kOps = {"tile.exp", "tile.recip", "tile.rsqrt"};
      Define(depth, a, absl::StrCat(OneOf(kOps), "(", arg, ")"));
    } else if (r < 46) {
      Val a = PickVec(depth);
      const std::string arg = a.name;
      a.dt = a.dt == "FP32" ? "FP16" : "FP32";  // narrowing or widening
      a.view = false;
      a.contiguous = true;
      Define(depth, a, absl::StrCat("tile.cast(", arg, ", ", a.dt, ")"));
    } else if (r < 50) {
      Val a = PickVec(depth);
      const std::string arg = a.name;
      std::swap(a.r, a.c);
      a.view = false;
      a.contiguous = true;
      Define(depth, a, absl::StrCat("tile.transpose(", arg, ")"));
    } else if (r < 60) {
      Slice(depth, PickVec(depth, options_.slices_of_views));
    } else if (r < 64) {
      Reshape(depth);
    } else if (r < 68) {
      Val a = PickVec(depth);
      const std::string arg = a.name;
      a.view = false;
      a.contiguous = true;
      if (type_ == "AIC" && P(40) && Fits(Sp::kMat, 8192)) a.sp = Sp::kMat;
      a.layout = FreshLayout(a.sp);  // a move converts the layout
      Define(depth, a, absl::StrCat("tile.move(", arg, ", ", SpName(a.sp), ")"));
    } else if (r < 71) {
      Val a = PickVec(depth);
      if (a.r <= 128 && a.c <= 128) {
        Line(depth, absl::StrCat(Fresh(), ": Tensor[[128, 128], ", a.dt, "] = tile.store(", a.name,
                                 ", [0, 0], ", a.dt == "FP32" ? "x32" : "x16", ")"));
      }
    } else if (r < 80 && cube_) {
      Cube(depth, loops);
    } else if (r < 82) {
      BiasBlock(depth);
    } else if (r < 92 && depth < options_.max_depth && loops < 2) {
      Loop(depth, loops);
    } else if (depth < options_.max_depth) {
      If(depth, loops);
    } else {
      Load(depth, "FP32", Sp::kVec);
    }
  }

  void Body(int depth, int loops) {
    const int n = static_cast<int>(U(1, 4));
    for (int i = 0; i < n; ++i) Statement(depth, loops);
  }

  Val Slice(int depth, const Val& a) {
    Val v = a;
    v.r = U(1, a.r);
    v.c = U(1, a.c);
    if (P(50)) v.r = std::max<int64_t>(1, a.r / 2);
    if (P(30)) v.c = a.c;
    const int64_t ro = U(0, a.r - v.r), co = U(0, a.c - v.c);
    v.view = true;
    v.contiguous = a.contiguous && v.c == a.c;
    return Define(
        depth, v,
        absl::StrCat("tile.slice(", a.name, ", [", v.r, ", ", v.c, "], [", ro, ", ", co, "])"));
  }

  void Reshape(int depth) {
    const bool views = options_.slices_of_views;
    std::vector<Val> vals = Prefer(
        [&](const Val& v) { return v.sp == Sp::kVec && v.contiguous && (views || !v.view); });
    if (vals.empty()) return;
    Val a = OneOf(vals);
    const int64_t n = a.r * a.c;
    std::vector<int64_t> cols;
    for (int64_t c : {8, 16, 32, 64, 128}) {
      if (n % c == 0 && n / c <= 128) cols.push_back(c);
    }
    if (cols.empty()) return;
    Val v = a;
    v.c = OneOf(cols);
    v.r = n / v.c;
    v.view = true;
    Define(depth, v, absl::StrCat("tile.reshape(", a.name, ", [", v.r, ", ", v.c, "])"));
  }

  // Left/Right operands, a matmul into Acc, matmul_acc steps (maybe as a loop's carried
  // accumulator), an Acc slice now and then, and the result moved to Vec.
  void Cube(int depth, int loops) {
    const int64_t m = OneOf<int64_t>({16, 32}), k = OneOf<int64_t>({16, 32}),
                  n = OneOf<int64_t>({16, 32});
    if (!Fits(Sp::kLeft, 4096) || !Fits(Sp::kRight, 4096) || !Fits(Sp::kAcc, 8192) ||
        !Fits(Sp::kVec, 8192) || !Fits(Sp::kMat, 8192)) {
      return;
    }
    auto operand = [&](Sp sp, int64_t r, int64_t c) {
      std::vector<Val> have = Visible(
          [&](const Val& v) { return v.sp == sp && v.r == r && v.c == c && v.dt == "FP16"; });
      if (!have.empty() && P(50)) return OneOf(have);
      if (P(40)) {
        Val mat = Load(depth, "FP16", Sp::kMat, r, c);
        Val v = mat;
        v.sp = sp;
        return Define(depth, v, absl::StrCat("tile.move(", mat.name, ", ", SpName(sp), ")"));
      }
      return Load(depth, "FP16", sp, r, c);
    };
    Val l = operand(Sp::kLeft, m, k);
    Val rr = operand(Sp::kRight, k, n);
    Val acc{"", m, n, "FP32", Sp::kAcc};
    acc = Define(depth, acc, absl::StrCat("tile.matmul(", l.name, ", ", rr.name, ")"));
    const int steps = static_cast<int>(U(0, 2));
    for (int i = 0; i < steps; ++i) {
      dead_.insert(acc.name);
      acc = Define(depth, acc,
                   absl::StrCat("tile.matmul_acc(", acc.name, ", ", l.name, ", ", rr.name, ")"));
    }
    if (P(35) && depth < options_.max_depth && loops < 2) {
      // The accumulator carried through a loop, updated in place each iteration.
      Val it = acc, out = acc;
      it.name = Fresh();
      out.name = Fresh();
      const std::string i = absl::StrCat("i", n_++);
      Line(depth, absl::StrCat("for ", i, ", ", TupleText({it.name}), " in range(0, ", U(1, 4),
                               ", 1, init=", TupleText({acc.name}), ") -> ",
                               TupleText({absl::StrCat(out.name, ": ", TileT(out))}), ":"));
      scopes_.push_back({it});
      if (P(50)) Statement(depth + 1, loops + 1);
      dead_.insert(it.name);
      Val next =
          Define(depth + 1, it,
                 absl::StrCat("tile.matmul_acc(", it.name, ", ", l.name, ", ", rr.name, ")"));
      Line(depth + 1, absl::StrCat("yield ", TupleText({next.name})));
      scopes_.pop_back();
      // The init is still readable after the loop only if nothing consumed it.
      scopes_.back().push_back(out);
      acc = out;
    }
    if (options_.acc_slices && P(25)) {
      Val s = Slice(depth, acc);
      Val v = s;
      v.sp = Sp::kVec;
      v.view = false;
      v.contiguous = true;
      Define(depth, v, absl::StrCat("tile.move(", s.name, ", Vec)"));
    }
    Val v = acc;
    v.sp = Sp::kVec;
    Define(depth, v, absl::StrCat("tile.move(", acc.name, ", Vec)"));
  }

  void BiasBlock(int depth) {
    if (!Fits(Sp::kBias, 256) || !Fits(Sp::kVec, 256)) return;
    Val b = P(50) ? Load(depth, "FP32", Sp::kBias, 1, 64)
                  : Define(depth, Val{"", 1, 64, "FP32", Sp::kBias},
                           "tile.create([1, 64], FP32, Bias)");
    if (P(50) && Fits(Sp::kBias, 256)) {
      b = Define(depth, b, absl::StrCat("tile.add(", b.name, ", ", b.name, ")"));
    }
    Val v = b;
    v.sp = Sp::kVec;
    Define(depth, v, absl::StrCat("tile.move(", b.name, ", Vec)"));
  }

  void Loop(int depth, int loops) {
    const int carries = static_cast<int>(U(0, 3));
    std::vector<Val> inits, iters, rets;
    for (int k = 0; k < carries; ++k) {
      // Carries of the same type are likely, so yields can rotate and swap them.
      if (k > 0 && P(60)) {
        std::vector<Val> same = Visible([&](const Val& v) { return SameType(v, inits[0]); });
        inits.push_back(OneOf(same));
      } else {
        inits.push_back(PickVec(depth));
      }
    }
    std::vector<std::string> iter_names, init_names, ret_decls;
    for (int k = 0; k < carries; ++k) {
      Val it = inits[k], ret = inits[k];
      it.name = Fresh();
      ret.name = Fresh();
      iters.push_back(it);
      rets.push_back(ret);
      iter_names.push_back(it.name);
      init_names.push_back(inits[k].name);
      ret_decls.push_back(absl::StrCat(ret.name, ": ", TileT(ret)));
    }
    const std::string i = absl::StrCat("i", n_++);
    const std::string range =
        P(80) ? absl::StrCat("range(0, ", U(1, 4), ", 1") : std::string("range(0, 8, 2");
    const int64_t stages = PipelineDepth();
    const std::string pipeline = stages > 0 ? absl::StrCat(", pipeline=", stages) : "";
    if (carries == 0) {
      Line(depth, absl::StrCat("for ", i, " in ", range, pipeline, "):"));
    } else {
      Line(depth, absl::StrCat("for ", i, ", ", TupleText(iter_names), " in ", range,
                               ", init=", TupleText(init_names), pipeline, ") -> ",
                               TupleText(ret_decls), ":"));
    }
    scopes_.push_back(iters);
    const size_t before = lines_.size();
    if (stages > 0) stages_ = stages;
    Body(depth + 1, loops + 1);
    if (carries > 0) {
      std::vector<std::string> ys;
      for (int k = 0; k < carries; ++k) {
        auto same = [&](const Val& v) { return SameType(v, iters[k]); };
        const int how = static_cast<int>(U(0, 99));
        std::vector<Val> cands;
        if (how < 35) {
          // Another carry (crossing / rotation / swap).
          for (const Val& v : iters) {
            if (same(v) && !dead_.count(v.name) && v.name != iters[k].name) cands.push_back(v);
          }
        } else if (how < 75) {
          // A value computed in the body from the carries.
          std::vector<Val> src;
          for (const Val& v : iters) {
            if (!dead_.count(v.name)) src.push_back(v);
          }
          if (!src.empty() && src[0].sp == Sp::kVec && iters[k].sp == Sp::kVec) {
            const Val& a = OneOf(src);
            Val v = iters[k];
            v.view = false;
            v.contiguous = true;
            std::string rhs;
            if (same(a)) {
              rhs = absl::StrCat(OneOf<std::string>({"tile.add", "tile.mul", "tile.sub"}), "(",
                                 a.name, ", ", iters[k].name, ")");
            } else if (a.dt != v.dt && a.r == v.r && a.c == v.c) {
              rhs = absl::StrCat("tile.cast(", a.name, ", ", v.dt, ")");
            } else {
              rhs = absl::StrCat(OneOf<std::string>({"tile.exp", "tile.recip"}), "(", iters[k].name,
                                 ")");
            }
            cands.push_back(Define(depth + 1, v, rhs));
          }
        } else if (how < 90) {
          cands = Visible(same);  // anything in scope, maybe defined outside the loop
        }
        if (cands.empty()) cands = {iters[k]};
        ys.push_back(OneOf(cands).name);
      }
      Line(depth + 1, absl::StrCat("yield ", TupleText(ys)));
    } else if (lines_.size() == before) {
      Line(depth + 1, "pass");
    }
    if (stages > 0) stages_ = 1;
    scopes_.pop_back();
    for (const Val& r : rets) scopes_.back().push_back(r);
  }

  // The depth of a loop about to be generated: 0 (not pipelined) most of the time, never inside a
  // pipelined loop (its carries' inits could then live in a slot, which a pipelined loop's carries
  // may not).
  int64_t PipelineDepth() {
    if (!options_.pipelines || stages_ > 1) return 0;
    const int64_t r = pipeline_rng_.Uniform(0, 99);
    return r < 20 ? 2 : r < 28 ? 3 : 0;
  }

  void If(int depth, int loops) {
    const int results = P(70) ? static_cast<int>(U(1, 2)) : 0;
    std::vector<Val> rets;
    std::vector<std::string> decls;
    for (int k = 0; k < results; ++k) {
      Val t = PickVec(depth);
      t.name = Fresh();
      t.view = false;
      t.contiguous = true;
      rets.push_back(t);
      decls.push_back(absl::StrCat(t.name, ": ", TileT(t)));
    }
    if (results > 0) {
      Line(depth, absl::StrCat("if flag -> ", TupleText(decls), ":"));
    } else {
      Line(depth, "if flag:");
    }
    for (int branch = 0; branch < (results > 0 || P(40) ? 2 : 1); ++branch) {
      if (branch == 1) Line(depth, "else:");
      scopes_.push_back({});
      const size_t before = lines_.size();
      Body(depth + 1, loops);
      if (results > 0) {
        std::vector<std::string> ys;
        for (const Val& t : rets) {
          std::vector<Val> same = Prefer([&](const Val& v) { return SameType(v, t); });
          if (same.empty() || P(20)) {
            same = {Load(depth + 1, t.dt, t.sp, t.r, t.c, &t.layout)};
          }
          ys.push_back(OneOf(same).name);
        }
        Line(depth + 1, absl::StrCat("yield ", TupleText(ys)));
      } else if (lines_.size() == before) {
        Line(depth + 1, "pass");
      }
      scopes_.pop_back();
    }
    for (const Val& r : rets) scopes_.back().push_back(r);
  }

  SplitMix64 rng_;
  SplitMix64 layout_rng_;
  SplitMix64 pipeline_rng_;
  SplitMix64 declared_rng_;
  std::vector<std::string> declared_;  // the function's declared allocs, placed first
  int64_t stages_ = 1;                 // the depth of the pipelined loop being generated, else 1
  GeneratorOptions options_;
  std::string type_;
  bool cube_ = false;
  bool over_capacity_ = false;
  bool huge_reserve_ = false;
  std::vector<std::string> lines_;
  std::vector<std::vector<Val>> scopes_;
  std::set<std::string> dead_;  // consumed by tile.matmul_acc (its buffer is overwritten)
  std::array<int64_t, kNumSp> used_{};
  int n_ = 0;
};

}  // namespace

std::string TupleText(const std::vector<std::string>& items) {
  return absl::StrCat("(", absl::StrJoin(items, ", "), items.size() == 1 ? ",)" : ")");
}

GeneratedProgram GenerateProgram(uint64_t seed, const GeneratorOptions& options) {
  Generator g(seed, options);
  return g.Run(seed);
}

absl::StatusOr<ir::ProgramPtr> GenerateIr(uint64_t seed, const GeneratorOptions& options) {
  return ir::ParseAndVerifyProgram(GenerateProgram(seed, options).text, "<generated>");
}
}  // namespace passes_testing
}  // namespace accelmem
