#include "memplan/frontend/command_line.hpp"

#include <algorithm>
#include <optional>

#include "memplan/core/error.hpp"

namespace memplan {

namespace {

std::string dashed(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

}  // namespace

PlanSettings settings_from(const std::vector<GivenOption>& given) {
  PlanSettings s;
  for (const GivenOption& g : given) set_option(s, *g.def, g.values);
  return s;
}

std::string flag_of(const OptionDef& option) { return "--" + dashed(option.flag); }

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_for_cli(std::string_view text) {
  return render_option_refs(terminal_safe(text), [](std::string_view key) -> std::optional<std::string> {
    if (key == "kind") return std::string("-w");
    if (const OptionDef* o = find_option(key)) return flag_of(*o);
    // The command-line options outside the table.
    for (const char* cli_only : {"gpu", "vary", "budget", "format", "units", "explain", "probe", "cpu", "as"}) {
      if (key == cli_only) return "--" + std::string(key);
    }
    return std::nullopt;
  });
}

std::vector<std::string> estimate_command(const std::string& model, const DeviceArgs& device,
                                          const std::vector<GivenOption>& given,
                                          const std::vector<OptionSetting>& change) {
  std::vector<std::string> out = {"memplan", "estimate", model};
  if (!device.gpu.empty()) out.insert(out.end(), {"--gpu", device.gpu});
  const auto changed = [&](const OptionDef& o) {
    return std::any_of(change.begin(), change.end(), [&](const OptionSetting& c) { return c.key == o.key; });
  };
  for (const GivenOption& g : given) {
    if (changed(*g.def)) continue;
    out.push_back(flag_of(*g.def));
    if (g.def->kind == OptionKind::flag) continue;
    std::string joined;
    for (const std::string& v : g.values) joined += (joined.empty() ? "" : ",") + v;
    out.push_back(joined);
  }
  for (const OptionSetting& c : change) {
    const OptionDef* def = find_option(c.key);
    if (def == nullptr) throw Error(ErrorKind::internal, "a recommendation sets '" + c.key + "', which is no option");
    if (def->kind != OptionKind::flag && c.value.empty()) continue;  // the change drops the option given
    out.push_back(flag_of(*def));
    if (!c.value.empty()) out.push_back(c.value);
  }
  return out;
}

}  // namespace memplan
