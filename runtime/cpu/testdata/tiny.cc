// A freestanding source compiled to bitcode by a genrule (no standard headers).
extern "C" int accelmem_tiny_add(int a, int b) { return a + b; }
