#include "passes/pipeline_corpus.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace passes {

std::string BlockProgram(int tiles) {
  static const char* kShapes[] = {"[8, 16]", "[16, 16]", "[32, 16]"};
  static const char* kTensors[] = {"xa", "xb", "xc"};
  std::string body;
  int n = 0;
  auto tile = [&](int s) { return absl::StrCat("Tile[", kShapes[s], ", FP32, Vec]"); };
  auto def = [&](int s, const std::string& rhs) {
    std::string name = absl::StrCat("t", n++);
    absl::StrAppend(&body, "    ", name, ": ", tile(s), " = ", rhs, "\n");
    return name;
  };
  std::string keep = def(1, "tile.load(xb, [0, 0], [16, 16])");
  for (int b = 0; n < tiles; ++b) {
    const int s = b % 3;
    std::string x = def(s, absl::StrCat("tile.load(", kTensors[s], ", [0, 0], ", kShapes[s], ")"));
    std::string y = def(s, absl::StrCat("tile.exp(", x, ")"));
    std::string z = def(s, absl::StrCat("tile.add(", y, ", ", x, ")"));
    std::string w = def(s, absl::StrCat("tile.recip(", z, ")"));
    if (s == 2) {
      std::string v = def(0, absl::StrCat("tile.slice(", w, ", [8, 16], [8, 0])"));
      def(0, absl::StrCat("tile.muls(", v, ", 2.0)"));
    }
    std::string k = def(1, absl::StrCat("tile.load(xb, [0, 0], [16, 16])"));
    keep = def(1, absl::StrCat("tile.add(", keep, ", ", k, ")"));
    if (b % 8 == 7) {
      std::string acc = absl::StrCat("a", n), out = absl::StrCat("t", n++);
      absl::StrAppend(&body, "    for i", n, ", (", acc, ",) in range(0, 4, 1, init=(", keep,
                      ",)) -> (", out, ": ", tile(1), ",):\n");
      const std::string u = absl::StrCat("t", n++), q = absl::StrCat("t", n++);
      absl::StrAppend(&body, "        ", u, ": ", tile(1), " = tile.load(xb, [0, 0], [16, 16])\n");
      absl::StrAppend(&body, "        ", q, ": ", tile(1), " = tile.add(", acc, ", ", u, ")\n");
      absl::StrAppend(&body, "        yield (", q, ",)\n");
      keep = out;
    }
    def(s, absl::StrCat("tile.add(", w, ", ", w, ")"));
    absl::StrAppend(&body, "    s", n++, ": Tensor[", kShapes[s], ", FP32] = tile.store(", w,
                    ", [0, 0], ", kTensors[s], ")\n");
  }
  absl::StrAppend(&body, "    r: Tensor[[16, 16], FP32] = tile.store(", keep, ", [0, 0], xb)\n",
                  "    return r\n");
  return absl::StrCat(
      "@function(type=AIV)\n"
      "def f(xa: Tensor[[8, 16], FP32], xb: Tensor[[16, 16], FP32], xc: Tensor[[32, 16], FP32]) "
      "-> Tensor[[16, 16], FP32]:\n",
      body);
}

std::string ChainedLoopsProgram(int loops) {
  std::string body = "    a: Tile[[16, 16], FP32, Vec] = tile.load(x, [0, 0], [16, 16])\n";
  std::string prev = "a";
  for (int k = 0; k < loops; ++k) {
    absl::StrAppend(&body, "    for i", k, ", (c", k, ",) in range(0, 2, 1, init=(", prev,
                    ",)) -> (o", k, ": Tile[[16, 16], FP32, Vec],):\n", "        n", k,
                    ": Tile[[16, 16], FP32, Vec] = tile.exp(c", k, ")\n", "        yield (n", k,
                    ",)\n");
    prev = absl::StrCat("o", k);
  }
  return absl::StrCat(
      "@function(type=AIV)\ndef f(x: Tensor[[16, 16], FP32]) -> Tensor[[16, 16], FP32]:\n", body,
      "    r: Tensor[[16, 16], FP32] = tile.store(", prev, ", [0, 0], x)\n    return r\n");
}

std::string AllLiveProgram(int tiles) {
  std::string body;
  for (int k = 0; k < tiles; ++k) {
    absl::StrAppend(&body, "    v", k, ": Tile[[8], FP32, Vec] = tile.load(x, [0], [8])\n");
  }
  for (int k = 0; k < tiles; ++k) {
    absl::StrAppend(&body, "    s", k, ": Tensor[[8], FP32] = tile.store(v", k, ", [0], x)\n");
  }
  return absl::StrCat("@function(type=AIV)\ndef g(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:\n",
                      body, "    return s", tiles - 1, "\n");
}

std::string ManyFunctionsProgram(int functions) {
  std::string text;
  for (int k = 0; k < functions; ++k) {
    absl::StrAppend(&text, "@function(type=AIV)\ndef k", k,
                    "(x: Tensor[[8, 8], FP32]) -> Tensor[[8, 8], FP32]:\n",
                    "    a: Tile[[8, 8], FP32, Vec] = tile.load(x, [0, 0], [8, 8])\n",
                    "    b: Tile[[8, 8], FP32, Vec] = tile.add(a, a)\n",
                    "    c: Tile[[8, 8], FP32, Vec] = tile.exp(b)\n",
                    "    o: Tensor[[8, 8], FP32] = tile.store(c, [0, 0], x)\n", "    return o\n");
  }
  return text;
}

std::string ManyReservesProgram(int reserves) {
  std::string body;
  // Explicit bases descend through [64 * (autos + 1), 64 * (autos + n)); AUTO ones go after the
  // highest range so far (the first at 0), so no two ranges overlap.
  const int64_t autos = (reserves + 1) / 2;
  for (int k = 0; k < reserves; ++k) {
    if (k % 2 == 0) {
      absl::StrAppend(&body, "    system.reserve_buffer(name=\"r", k, "\", size=64)\n");
    } else {
      const int64_t base = 64 * (autos + (reserves - k));
      absl::StrAppend(&body, "    system.reserve_buffer(name=\"r", k, "\", size=64, base=", base,
                      ")\n");
    }
  }
  return absl::StrCat(
      "@function(type=AIV)\ndef r(x: Tensor[[8, 8], FP32]) -> Tensor[[8, 8], FP32]:\n", body,
      "    a: Tile[[8, 8], FP32, Vec] = tile.load(x, [0, 0], [8, 8])\n",
      "    b: Tile[[8, 8], FP32, Vec] = tile.exp(a)\n",
      "    o: Tensor[[8, 8], FP32] = tile.store(b, [0, 0], x)\n", "    return o\n");
}

}  // namespace passes
}  // namespace accelmem
