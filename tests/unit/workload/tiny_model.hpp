#pragma once
// A two-layer model of 8 hidden units shared by the workload tests (one definition: the tests are compiled several
// files to a source, a unity build, tests/CMakeLists.txt).
namespace racksim {

inline constexpr const char* kTiny = R"({"schema_version": 1, "id": "tiny", "name": "tiny", "source": "test",
  "layers": 2, "hidden_size": 8, "intermediate_size": 16, "vocab_size": 10,
  "attention": {"kind": "gqa", "heads": 2, "kv_heads": 1, "head_dim": 4}})";

}  // namespace racksim
