// The planner's held-out error table (models/planner/training_heldout.hpp): figures worked out by hand from
// leave-one-model-out and leave-one-system-out rows, what a plan quotes (a system with published runs gets
// the new-model class only, one without gets the new-system class too, classes below min_rows never answer),
// the file's strict reading (one case per invalid value) and the shipped file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/planner/training_heldout.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

RowPrediction row(const std::string& model, const std::string& system, const std::string& generation, double error) {
  RowPrediction p;
  p.run.model = model;
  p.run.system = system;
  p.generation = generation;
  p.error = error;
  return p;
}

// Hopper dense: six Llama 3.1 8B rows on H100 off by +0.01 .. +0.06 (by model) and -0.02 x 6 (by system);
// Blackwell MoE: two DeepSeek-V3 rows on B200 (+0.30, +0.10).
std::pair<TrainingValidation, TrainingValidation> sample_validations() {
  TrainingValidation by_model, by_system;
  by_model.rows_file = by_system.rows_file = "rows.json";
  for (int i = 1; i <= 6; ++i) {
    by_model.rows.push_back(row("llama-3.1-8b", "hgx-h100", "hopper", 0.01 * i));
    by_system.rows.push_back(row("llama-3.1-8b", "hgx-h100", "hopper", -0.02));
  }
  by_model.rows.push_back(row("deepseek-v3", "hgx-b200", "blackwell", 0.30));
  by_model.rows.push_back(row("deepseek-v3", "hgx-b200", "blackwell", 0.10));
  return {by_model, by_system};
}

const TrainingHeldoutClass* find(const TrainingHeldoutTable& t, const std::string& g, const std::string& kind,
                                 const std::string& held) {
  for (const auto& c : t.classes)
    if (c.generation == g && c.kind == kind && c.held_out == held) return &c;
  return nullptr;
}

TEST(TrainingHeldout, FiguresWorkedOutByHand) {
  const auto [m, s] = sample_validations();
  const TrainingHeldoutTable t = training_heldout_table(m, s);
  EXPECT_EQ(t.systems_fitted, (std::vector<std::string>{"hgx-b200", "hgx-h100"}));
  const TrainingHeldoutClass* dense = find(t, "hopper", "dense", "model");
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(dense->rows, 6);
  EXPECT_DOUBLE_EQ(dense->median_abs, 0.035);  // (0.03 + 0.04) / 2
  EXPECT_DOUBLE_EQ(dense->p90_abs, 0.06);      // nearest rank: the 6th of six
  EXPECT_DOUBLE_EQ(dense->worst_abs, 0.06);
  EXPECT_DOUBLE_EQ(dense->median_signed, 0.035);
  EXPECT_EQ(dense->models, (std::vector<std::string>{"llama-3.1-8b"}));
  const TrainingHeldoutClass* by_system = find(t, "hopper", "dense", "system");
  ASSERT_NE(by_system, nullptr);
  EXPECT_DOUBLE_EQ(by_system->median_signed, -0.02);
  const TrainingHeldoutClass* moe = find(t, "blackwell", "moe", "model");  // DeepSeek-V3 is a MoE preset
  ASSERT_NE(moe, nullptr);
  EXPECT_EQ(moe->rows, 2);
  EXPECT_DOUBLE_EQ(moe->median_abs, 0.2);
  EXPECT_EQ(find(t, "blackwell", "dense", "model"), nullptr);
  EXPECT_EQ(training_heldout_from_json_text(training_heldout_to_json_text(t), "t.json"), t);
}

TEST(TrainingHeldout, WhatAPlanQuotes) {
  const auto [m, s] = sample_validations();
  const TrainingHeldoutTable t = training_heldout_table(m, s);
  // H100 has published runs: a new model's error only.
  const auto h100 = plan_heldout_error(t, "hopper", false, "hgx-h100");
  ASSERT_TRUE(h100);
  ASSERT_TRUE(h100->new_model);
  EXPECT_EQ(h100->new_model->rows, 6);
  EXPECT_FALSE(h100->new_system);
  // H200 has none: the new-system class too.
  const auto h200 = plan_heldout_error(t, "hopper", false, "hgx-h200");
  ASSERT_TRUE(h200 && h200->new_system);
  EXPECT_DOUBLE_EQ(h200->new_system->median_abs, 0.02);
  EXPECT_NE(h200->basis.find("calibrate/training/heldout_errors.json"), std::string::npos);
  // Blackwell MoE has two rows, below min_rows (5): nothing to quote.
  EXPECT_FALSE(plan_heldout_error(t, "blackwell", true, "gb200-nvl72"));
  EXPECT_FALSE(plan_heldout_error(t, "hopper", true, "hgx-h100"));
}

std::string training_table_error_of(const std::string& text) {
  try {
    training_heldout_from_json_text(text, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string with_field(const std::string& field, const std::string& value) {
  nlohmann::json c = {{"generation", "hopper"},  {"kind", "dense"},          {"held_out", "model"},  {"rows", 6},
                      {"models", {"llama-3.1-8b"}}, {"systems", {"hgx-h100"}}, {"median_abs", 0.03}, {"p90_abs", 0.06},
                      {"worst_abs", 0.06},       {"median_signed", 0.03}};
  if (value.empty()) c.erase(field);
  else c[field] = nlohmann::json::parse(value);
  return nlohmann::json{{"schema_version", 1}, {"basis", "b"}, {"systems_fitted", {"hgx-h100"}}, {"min_rows", 5}, {"classes", {c}}}.dump();
}

TEST(TrainingHeldout, ValidFileReads) { EXPECT_EQ(training_table_error_of(with_field("rows", "6")), ""); }
TEST(TrainingHeldout, RejectsUnknownKind) { EXPECT_NE(training_table_error_of(with_field("kind", "\"hybrid\"")).find("hybrid"), std::string::npos); }
TEST(TrainingHeldout, RejectsUnknownHeldOut) {
  EXPECT_NE(training_table_error_of(with_field("held_out", "\"precision\"")).find("precision"), std::string::npos);
}
TEST(TrainingHeldout, RejectsEmptyGeneration) { EXPECT_NE(training_table_error_of(with_field("generation", "\"\"")).find("generation"), std::string::npos); }
TEST(TrainingHeldout, RejectsZeroRows) { EXPECT_NE(training_table_error_of(with_field("rows", "0")).find("rows"), std::string::npos); }
TEST(TrainingHeldout, RejectsNegativeError) { EXPECT_NE(training_table_error_of(with_field("worst_abs", "-1")).find("worst_abs"), std::string::npos); }
TEST(TrainingHeldout, RejectsNonStringModel) { EXPECT_NE(training_table_error_of(with_field("models", "[1]")).find("models"), std::string::npos); }
TEST(TrainingHeldout, RejectsMissingField) { EXPECT_NE(training_table_error_of(with_field("median_abs", "")).find("median_abs"), std::string::npos); }
TEST(TrainingHeldout, RejectsUnknownKey) { EXPECT_NE(training_table_error_of(with_field("mean_abs", "0.1")).find("mean_abs"), std::string::npos); }
TEST(TrainingHeldout, RejectsDuplicateClass) {
  nlohmann::json doc = nlohmann::json::parse(with_field("rows", "6"));
  doc["classes"].push_back(doc["classes"][0]);
  EXPECT_NE(training_table_error_of(doc.dump()).find("again"), std::string::npos);
}
TEST(TrainingHeldout, RejectsOtherSchemaVersion) {
  nlohmann::json doc = nlohmann::json::parse(with_field("rows", "6"));
  doc["schema_version"] = 3;
  EXPECT_NE(training_table_error_of(doc.dump()).find("schema_version"), std::string::npos);
}

TEST(TrainingHeldout, ShippedTableQuotesBothForGb200) {
  const TrainingHeldoutTable* t = shipped_training_heldout();
  ASSERT_NE(t, nullptr) << "calibrate/training/heldout_errors.json is missing (calibrate/training/fit.sh writes it)";
  const auto gb200 = plan_heldout_error(*t, "blackwell", false, "gb200-nvl72");
  ASSERT_TRUE(gb200 && gb200->new_model && gb200->new_system);
  EXPECT_GE(gb200->new_model->rows, t->min_rows);
  const auto b200 = plan_heldout_error(*t, "blackwell", false, "hgx-b200");
  ASSERT_TRUE(b200 && b200->new_model);
  EXPECT_FALSE(b200->new_system);
}

}  // namespace
}  // namespace racksim
