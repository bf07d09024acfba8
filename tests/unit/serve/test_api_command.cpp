// The HTTP API's request -> CLI argument list mapping, and the interactive limits (serve/).
#include <gtest/gtest.h>

#include "serve/api_command.hpp"
#include "serve/interactive_policy.hpp"

namespace racksim::serve {
namespace {

CommandTable table() {
  CommandInfo show{"show", {"system"}, {{"racks", {}}}, true};
  CommandInfo place{"place", {}, {{"system", {}}, {"alloc", {false, true}}, {"no-checklist", {true, false}}}, true};
  CommandInfo route{"route", {"system", "src", "dst"}, {{"racks", {}}}, true};
  return {{"show", show}, {"place", place}, {"route", route}};
}

std::string message(const CommandTable& t, const std::string& cmd, const Params& p) {
  try {
    build_command(t, cmd, p);
  } catch (const RequestError& e) {
    return std::to_string(e.http_status()) + " " + e.what();
  }
  return "accepted";
}

TEST(ServeApiCommand, PositionalsAfterDoubleDashAndJsonForced) {
  const BuiltCommand b = build_command(table(), "show", {{"racks", "2"}, {"system", "gb200-nvl72"}});
  EXPECT_EQ(b.args, (std::vector<std::string>{"show", "--racks=2", "--format=json", "--", "gb200-nvl72"}));
  EXPECT_EQ(b.display, "racksim show gb200-nvl72 --racks 2 --format json");
}

TEST(ServeApiCommand, ValuesStayOneTokenEvenWhenTheyLookLikeOptions) {
  // "--racks=-1 --trace=x" must reach the CLI as the value of --racks, which then rejects it.
  const BuiltCommand b = build_command(table(), "show", {{"system", "gb200-nvl72"}, {"racks", "-1 --trace=x"}});
  EXPECT_EQ(b.args[1], "--racks=-1 --trace=x");
  EXPECT_EQ(b.display, "racksim show gb200-nvl72 --racks '-1 --trace=x' --format json");
}

TEST(ServeApiCommand, RepeatableKeepsOrderAndFlagsTakeBooleans) {
  const BuiltCommand b = build_command(
      table(), "place", {{"system", "gb200-nvl72"}, {"alloc", "b:cpu:1GB"}, {"alloc", "a:cuda:2GB:gpu0"}, {"no-checklist", "1"}});
  EXPECT_EQ(b.args, (std::vector<std::string>{"place", "--system=gb200-nvl72", "--alloc=b:cpu:1GB", "--alloc=a:cuda:2GB:gpu0",
                                              "--no-checklist", "--format=json"}));
  EXPECT_EQ(build_command(table(), "place", {{"no-checklist", "false"}}).args,
            (std::vector<std::string>{"place", "--format=json"}));
  EXPECT_EQ(message(table(), "place", {{"no-checklist", "yes"}}),
            "400 racksim serve: place parameter 'no-checklist' is a flag: 'yes'; allowed 1, true, 0 or false");
}

TEST(ServeApiCommand, RefusesWhatACommandLineCouldNotSayOrTheServerMustNotDo) {
  const CommandTable t = table();
  EXPECT_EQ(message(t, "calibrate", {}), "404 racksim serve: no command 'calibrate'; the API offers place, route, show");
  EXPECT_EQ(message(t, "show", {{"trace", "x"}}), "400 racksim serve: show has no parameter 'trace'; allowed: system, racks");
  EXPECT_EQ(message(t, "show", {{"racks", "1"}, {"racks", "2"}}),
            "400 racksim serve: show parameter 'racks' given twice; it takes one value");
  EXPECT_EQ(message(t, "show", {{"system", "../topologies/gb200-nvl72.json"}}).substr(0, 60),
            "400 racksim serve: show parameter 'system': '../topologies/g");
  EXPECT_NE(message(t, "show", {{"system", "my.JSON"}}).find("is a file path"), std::string::npos);
  EXPECT_NE(message(t, "show", {{"system", "gb200\n"}}).find("control or non-ASCII"), std::string::npos);
  EXPECT_NE(message(t, "show", {{"system", std::string(513, 'a')}}).find("513 characters; at most 512"), std::string::npos);
  EXPECT_EQ(message(t, "route", {{"system", "hgx-h100"}, {"dst", "gpu1"}}),
            "400 racksim serve: route parameter 'dst' needs 'src' too");
  EXPECT_EQ(message(t, "route", {{"system", "hgx-h100"}, {"src", "gpu0"}, {"dst", "gpu1"}}), "accepted");
  // The CLI's sweep and goodput take --dask ADDRESS; a request must not make the server connect elsewhere.
  EXPECT_TRUE(is_denied_option("dask"));
  EXPECT_TRUE(is_denied_option("dask-timeout"));
  // plan's file work (fits and tables written on the server) is not served, as `validate` is not.
  for (const char* option : {"fit", "fit-out", "fit-report", "validate", "heldout-table"})
    EXPECT_TRUE(is_denied_option(option)) << option;
  EXPECT_FALSE(is_denied_option("model"));
}

TEST(ServeApiCommand, ShellQuoting) {
  EXPECT_EQ(shell_quote("gb200-nvl72"), "gb200-nvl72");
  EXPECT_EQ(shell_quote("x:cpu:100GB:interleave=all"), "x:cpu:100GB:interleave=all");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

std::optional<SystemFacts> nvl72(const std::string&, const std::string& racks) {
  const int r = racks.empty() ? 1 : std::stoi(racks);
  return SystemFacts{72 * r, 72};
}

TEST(ServeInteractivePolicy, RefusesOnlyWhatTheEngineCannotAnswerInteractively) {
  auto reason = [](const std::string& cmd, const Params& p) { return refusal_reason(cmd, p, nvl72).value_or("run"); };
  const Params base{{"system", "gb200-nvl72"}, {"op", "all_reduce"}};
  auto with = [&](Params extra) {
    Params p = base;
    p.insert(p.end(), extra.begin(), extra.end());
    return p;
  };
  EXPECT_EQ(reason("collective", with({{"gpus", "72"}, {"algo", "ring"}})), "run");
  EXPECT_EQ(reason("collective", with({{"gpus", "576"}, {"racks", "8"}, {"algo", "hierarchical"}})), "run");
  EXPECT_EQ(reason("collective", with({{"gpus", "576"}, {"racks", "8"}})), "run");  // auto: hierarchical across racks
  EXPECT_EQ(reason("collective", with({{"gpus", "144"}, {"racks", "2"}, {"algo", "ring"}})), "run");
  EXPECT_EQ(reason("collective", with({{"gpus", "288"}, {"racks", "4"}, {"algo", "tree"}})), "run");
  // Flat rings: over 2 domains, or whole domains in an even count up to 16 (their quotient), else refused.
  EXPECT_EQ(reason("collective", with({{"gpus", "288"}, {"racks", "4"}, {"algo", "ring"}})), "run");
  EXPECT_EQ(reason("collective", with({{"gpus", "1152"}, {"racks", "16"}, {"algo", "ring"}})), "run");
  EXPECT_EQ(reason("collective", with({{"gpus", "216"}, {"racks", "3"}, {"algo", "ring"}})), "run");
  EXPECT_NE(reason("collective", with({{"gpus", "360"}, {"racks", "5"}, {"algo", "ring"}})).find("crosses 5 NVLink domains"),
            std::string::npos);
  EXPECT_NE(reason("collective", with({{"gpus", "284"}, {"racks", "4"}, {"algo", "ring"}})).find("crosses 4 NVLink domains"),
            std::string::npos);
  EXPECT_NE(reason("collective", with({{"gpus", "1224"}, {"racks", "17"}})).find("1224 GPUs"), std::string::npos);
  EXPECT_EQ(reason("collective", {{"system", "gb200-nvl72"}, {"op", "all_to_all"}, {"gpus", "576"}, {"racks", "8"}}), "run");
  EXPECT_NE(reason("collective", {{"system", "gb200-nvl72"}, {"op", "all_to_all"}, {"gpus", "720"}, {"racks", "10"}})
                .find("517680 flows"),
            std::string::npos);
  EXPECT_EQ(reason("sweep", with({{"gpus", "72"}, {"min-bytes", "1K"}, {"max-bytes", "4G"}, {"step-factor", "4"}})), "run");
  EXPECT_NE(reason("sweep", with({{"gpus", "72"}, {"min-bytes", "1"}, {"max-bytes", "1T"}})).find("41 sizes"),
            std::string::npos);
  EXPECT_NE(reason("sweep", with({{"gpus", "1152"}, {"racks", "16"}})).find("sweeps up to 576 GPUs"), std::string::npos);
  // Unparsable or other commands: the CLI itself answers (with its own message).
  EXPECT_EQ(reason("collective", with({{"gpus", "lots"}})), "run");
  EXPECT_EQ(reason("plan", {{"system", "gb200-nvl72"}, {"gpus", "100000"}}), "run");
}

}  // namespace
}  // namespace racksim::serve
