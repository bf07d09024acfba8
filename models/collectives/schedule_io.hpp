#pragma once
// Schedules to JSON and back (schema_version 1), so that a user can dump a schedule, inspect or edit
// it, check it (schedule_check.hpp) and replay it in the engine. Reading is strict: unknown keys, ids out
// of order, dependencies that do not point backwards, endpoints or chunks out of range and phases that
// do not exist are InputErrors naming the file and the JSON pointer. Writing is canonical (sorted keys,
// one task per line), so the same schedule always gives byte-identical text.
//
// {"schema_version": 1, "algorithm": "all_reduce/ring", "chunks": 8, "note": "...",
//  "phases": ["reduce-scatter", "all-gather"],
//  "request": {"op", "algorithm", "gpus": [...], "bytes", "dtype", "chunk_bytes", "root",
//              "inner_algorithm", "outer_algorithm"},
//  "tasks": [{"id": 0, "src": "rank:0", "dsts": ["rank:1"], "bytes": 128, "chunk": 7, "chunk_count": 1,
//             "reduce": true, "deps": [], "phase": 0}, ...]}
// and, where they apply, "exec" (the NCCL terms), "warnings", and "lowered_pipeline": {"pieces", "nccl_chunks"}
// (the pipeline runs in fewer pieces than NCCL's chunks: Schedule::nccl_chunks).
// An endpoint is "rank:<r>" (index into request.gpus) or "switch:<domain>" (an NVLink domain's switch plane).
#include <string>

#include "models/collectives/schedule.hpp"

namespace racksim {

inline constexpr int kScheduleSchemaVersion = 1;

std::string schedule_to_json_text(const Schedule& schedule);
// `where` names the origin (a file path) in errors.
Schedule schedule_from_json_text(const std::string& text, const std::string& where);
Schedule load_schedule_file(const std::string& path);

std::string endpoint_to_string(const Endpoint& e);

}  // namespace racksim
