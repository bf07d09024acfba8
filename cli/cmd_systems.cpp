#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim::cli {

static void add_systems_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand("systems", "list the shipped systems: id and description");
  auto format = std::make_shared<std::string>();
  add_format_option(*cmd, *format, "text", {"text", "json"});
  cmd->callback([&global, format] {
    const auto systems = SystemCatalog(global.topology_dir).list();
    if (*format == "json") {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& [id, description] : systems) out.push_back({{"id", id}, {"description", description}});
      std::cout << dump_json(out, 2) << "\n";
      return;
    }
    for (const auto& [id, description] : systems) std::cout << id << std::string(id.size() < 16 ? 16 - id.size() : 1, ' ') << description << "\n";
  });
}

RACKSIM_REGISTER_COMMAND("systems", add_systems_command);

}  // namespace racksim::cli
