#include "memplan/io/hub.hpp"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "http.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/atomic_file.hpp"
#include "memplan/io/checkpoint_model.hpp"
#include "memplan/io/safetensors.hpp"

namespace memplan {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kIndex = "model.safetensors.index.json";
constexpr std::string_view kSingle = "model.safetensors";

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

bool env_true(const char* name) {
  const std::string v = env(name);
  return v == "1" || v == "ON" || v == "on" || v == "true" || v == "TRUE" || v == "yes" || v == "YES";
}

// Letters, digits, '-', '_', '.'; not starting or ending with '-' or '.'; no "--" or "..".
bool hub_name_part(std::string_view part) {
  if (part.empty() || part.size() > 96) return false;
  for (const char c : part) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  }
  if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.') return false;
  return part.find("--") == std::string_view::npos && part.find("..") == std::string_view::npos;
}

bool commit_hash(std::string_view text) {
  if (text.size() != 40) return false;
  for (const char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string hf_home() {
  if (std::string home = env("HF_HOME"); !home.empty()) return home;
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return (fs::path(xdg) / "huggingface").string();
  if (std::string home = env("HOME"); !home.empty()) return (fs::path(home) / ".cache" / "huggingface").string();
  return {};
}

std::string token() {
  if (std::string t = env("HF_TOKEN"); !t.empty()) return t;
  const std::string home = hf_home();
  if (home.empty()) return {};
  std::ifstream in(fs::path(home) / "token");
  std::string t;
  std::getline(in, t);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  return t;
}

std::string repo_folder(const HubId& id) { return "models--" + id.org + "--" + id.name; }

std::string read_first_line(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec) || fs::file_size(file, ec) > 4096) return {};
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

// The snapshot directory of `id` in a cache laid out as the Hugging Face cache is
// (models--ORG--NAME/refs/REVISION holds the commit; snapshots/COMMIT the files), or
// empty when it has no config.json there.
fs::path cached_snapshot(const std::string& cache, const HubId& id) {
  if (cache.empty()) return {};
  const fs::path repo = fs::path(cache) / repo_folder(id);
  std::string commit = commit_hash(id.revision) ? id.revision : read_first_line(repo / "refs" / id.revision);
  if (commit.empty()) commit = id.revision;  // memplan keys a snapshot by its revision when no commit came with it
  if (commit.find('/') != std::string::npos || commit.find("..") != std::string::npos) return {};
  const fs::path snapshot = repo / "snapshots" / commit;
  std::error_code ec;
  return fs::is_regular_file(snapshot / "config.json", ec) ? snapshot : fs::path();
}

std::string url_escape(std::string_view text) {
  std::string out;
  constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (std::isalnum(b) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

[[noreturn]] void fail(const std::string& where, const std::string& message) {
  throw ConfigError(where, 0, 0, "", message);
}

// Turns a failed response into the error a user can act on.
void check(const detail::HttpResponse& r, const HubId& id, long timeout) {
  if (r.timed_out) {
    fail(r.url, "no answer within " + std::to_string(timeout) + " s (MEMPLAN_HUB_TIMEOUT sets the limit)");
  }
  if (r.unreachable) {
    fail(r.url, "cannot reach the Hub (" + r.error +
                    "): without a network only cached or local models work (HF_HUB_OFFLINE=1 says so up front)");
  }
  if (!r.error.empty()) fail(r.url, r.error);
  if (r.status == 401 || r.status == 403) {
    fail(r.url, id.repo() + " is gated or private (HTTP " + std::to_string(r.status) +
                    "): accept the license on the model page (https://huggingface.co/" + id.repo() +
                    ") and set HF_TOKEN to a token of an account that has access");
  }
  if (r.status == 404) {
    fail(r.url,
         "'" + id.repo() + (id.revision == "main" ? "" : "@" + id.revision) +
             "' is not on the Hub (HTTP 404), and no local file or directory has that name: check the spelling of "
             "the id and the revision");
  }
  if (r.status < 200 || r.status >= 300) fail(r.url, "HTTP " + std::to_string(r.status));
}

// Fetches config.json, the index (or model.safetensors) and each shard's header into
// `cache`/models--ORG--NAME/snapshots/COMMIT as header-only safetensors files: the 8-byte
// length and the header, then a hole up to the shard's real size, so that the snapshot
// reads like a downloaded one and no tensor data is stored or fetched.
fs::path fetch(const HubId& id, const std::string& cache, const std::function<void(const std::string&)>& progress) {
  std::string endpoint = env("HF_ENDPOINT");
  if (endpoint.empty()) endpoint = "https://huggingface.co";
  while (endpoint.ends_with('/')) endpoint.pop_back();
  const std::string base = endpoint + "/" + id.org + "/" + id.name + "/resolve/" + url_escape(id.revision) + "/";
  detail::HttpSettings settings;
  settings.bearer_token = token();
  const std::string timeout_text = env("MEMPLAN_HUB_TIMEOUT");
  if (!timeout_text.empty()) {
    char* end = nullptr;
    const long t = std::strtol(timeout_text.c_str(), &end, 10);
    if (end == nullptr || *end != '\0' || t < 1 || t > 3600) {
      throw Error(ErrorKind::invalid_input,
                  "MEMPLAN_HUB_TIMEOUT must be a whole number of seconds from 1 to 3600, got '" +
                      printable(timeout_text) + "'");
    }
    settings.timeout_seconds = t;
  }
  const auto get = [&](const std::vector<detail::HttpRequest>& requests) {
    return detail::http_get_all(requests, settings);
  };

  if (progress) progress("fetching " + base + "config.json");
  auto first = get({{base + "config.json", {}, 16ULL << 20}, {base + std::string(kIndex), {}, 64ULL << 20}});
  check(first[0], id, settings.timeout_seconds);
  const std::string commit = commit_hash(first[0].repo_commit) ? first[0].repo_commit : std::string();
  // Without the Hub's commit header the revision names the snapshot (and is looked up again
  // next time only through refs).
  const std::string key = commit.empty() ? id.revision : commit;
  if (key.find('/') != std::string::npos || key.find("..") != std::string::npos || key.empty()) {
    fail(first[0].url, "the revision '" + printable(id.revision) +
                           "' is not a branch, tag or commit memplan can keep in its cache without a commit header");
  }
  const fs::path repo = fs::path(cache) / repo_folder(id);
  fs::path snapshot = repo / "snapshots" / key;
  std::error_code ec;
  fs::create_directories(snapshot, ec);
  if (ec) fail(snapshot.string(), "cannot create memplan's Hub cache: " + ec.message());

  std::vector<std::string> shards;
  if (first[1].status == 404 && first[1].error.empty()) {
    shards.emplace_back(kSingle);
  } else {
    check(first[1], id, settings.timeout_seconds);
    write_file_atomically((snapshot / kIndex).string(), first[1].body);
    // The shard names, checked by the same reader that reads the index back.
    nlohmann::json index = nlohmann::json::parse(first[1].body, nullptr, false);
    std::set<std::string> names;
    if (index.is_object() && index.contains("weight_map") && index["weight_map"].is_object()) {
      for (const auto& [tensor, shard] : index["weight_map"].items()) {
        if (shard.is_string()) names.insert(shard.get<std::string>());
      }
    }
    if (names.empty()) fail(first[1].url, "the safetensors index has no weight_map naming its shards");
    for (const std::string& n : names) {
      if (n.find('/') != std::string::npos || n.find("..") != std::string::npos || !n.ends_with(".safetensors")) {
        fail(first[1].url, "the index names shard '" + printable(n) + "': not a .safetensors file beside it");
      }
      shards.push_back(n);
    }
  }

  // Each shard's 8-byte header length, then each header: two rounds of concurrent requests.
  if (progress) progress("reading " + std::to_string(shards.size()) + " safetensors header(s) from " + base);
  std::vector<detail::HttpRequest> lengths;
  lengths.reserve(shards.size());
  for (const std::string& s : shards) lengths.push_back({base + s, std::make_pair(0ULL, 7ULL), 8});
  const auto got_lengths = get(lengths);
  std::vector<detail::HttpRequest> headers;
  std::vector<std::uint64_t> sizes;
  bool weights = true;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const detail::HttpResponse& r = got_lengths[i];
    if (r.status == 404 && r.error.empty() && shards.size() == 1 && shards[0] == kSingle) {
      weights = false;  // no safetensors weights: the architecture alone
      break;
    }
    check(r, id, settings.timeout_seconds);
    if (r.status != 206 || r.body.size() != 8 || !r.total_size) {
      fail(r.url, "the server did not answer the Range request for the header length (HTTP " +
                      std::to_string(r.status) + ", " + std::to_string(r.body.size()) + " bytes)");
    }
    std::uint64_t length = 0;
    for (std::size_t b = 8; b-- > 0;) length = (length << 8) | static_cast<unsigned char>(r.body[b]);
    if (length > max_safetensors_header_bytes || length > *r.total_size - 8 || *r.total_size < 8) {
      fail(r.url, "header length " + group_digits(length) + " bytes does not fit a file of " +
                      group_digits(*r.total_size) + " bytes under the 100 MiB header limit: not a safetensors file");
    }
    headers.push_back({base + shards[i], std::make_pair(8ULL, 8 + length - 1), length});
    sizes.push_back(*r.total_size);
  }
  if (weights) {
    const auto got_headers = get(headers);
    for (std::size_t i = 0; i < shards.size(); ++i) {
      const detail::HttpResponse& r = got_headers[i];
      check(r, id, settings.timeout_seconds);
      const std::uint64_t length = headers[i].max_bytes;
      if (r.body.size() != length) {
        fail(r.url, "the header arrived with " + group_digits(r.body.size()) + " of its " + group_digits(length) +
                        " bytes: a truncated response");
      }
      std::string stub(8, '\0');
      for (std::size_t b = 0; b < 8; ++b) stub[b] = static_cast<char>((length >> (8 * b)) & 0xff);
      stub += r.body;
      const fs::path file = snapshot / shards[i];
      write_file_atomically(file.string(), stub);
      fs::resize_file(file, sizes[i], ec);  // a hole, not data
      if (ec) fail(file.string(), "cannot size the header-only copy: " + ec.message());
    }
  }
  // config.json last: its presence marks a complete snapshot.
  write_file_atomically((snapshot / "config.json").string(), first[0].body);
  fs::create_directories(repo / "refs", ec);
  if (id.revision != key && id.revision.find('/') == std::string::npos) {
    write_file_atomically((repo / "refs" / id.revision).string(), key + "\n");
  }
  return snapshot;
}

ModelEntry from_snapshot(const fs::path& snapshot, const HubId& id, const std::string& where,
                         const std::string& as_model_type) {
  ModelEntry entry = load_checkpoint_model(snapshot.string(), as_model_type);
  const std::string typed = id.repo() + (id.revision == "main" ? "" : "@" + id.revision);
  entry.origin = typed + " (" + where + ")";
  // Without a _name_or_path the config's directory would name it: the commit.
  if (entry.spec.name.empty() || entry.spec.name == snapshot.filename().string()) entry.spec.name = id.name;
  return entry;
}

}  // namespace

std::optional<HubId> parse_hub_id(std::string_view text) {
  HubId id;
  const std::size_t at = text.find('@');
  if (at != std::string_view::npos) {
    id.revision = std::string(text.substr(at + 1));
    text = text.substr(0, at);
    if (id.revision.empty() || id.revision.size() > 256 || id.revision.find("..") != std::string::npos) {
      return std::nullopt;
    }
    for (const char c : id.revision) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/')) {
        return std::nullopt;
      }
    }
  }
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos || text.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
  id.org = std::string(text.substr(0, slash));
  id.name = std::string(text.substr(slash + 1));
  if (!hub_name_part(id.org) || !hub_name_part(id.name)) return std::nullopt;
  return id;
}

std::string hf_hub_cache_dir() {
  if (std::string cache = env("HF_HUB_CACHE"); !cache.empty()) return cache;
  const std::string home = hf_home();
  return home.empty() ? std::string() : (fs::path(home) / "hub").string();
}

std::string memplan_hub_cache_dir() {
  if (std::string dir = env("MEMPLAN_CACHE_DIR"); !dir.empty()) return (fs::path(dir) / "hub").string();
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return (fs::path(xdg) / "memplan" / "hub").string();
  if (std::string home = env("HOME"); !home.empty()) return (fs::path(home) / ".cache" / "memplan" / "hub").string();
  return {};
}

HubSnapshot hub_snapshot(const HubId& id, const std::function<void(const std::string&)>& progress) {
  const std::string hf_cache = hf_hub_cache_dir();
  if (const fs::path s = cached_snapshot(hf_cache, id); !s.empty()) return {s.string(), "Hugging Face cache"};
  const std::string ours = memplan_hub_cache_dir();
  if (const fs::path s = cached_snapshot(ours, id); !s.empty()) return {s.string(), "memplan's Hub cache"};
  if (env_true("HF_HUB_OFFLINE")) {
    fail(id.repo(), "HF_HUB_OFFLINE is set and " + id.repo() + " is in neither the Hugging Face cache (" +
                        (hf_cache.empty() ? std::string("none") : hf_cache) + ") nor memplan's (" +
                        (ours.empty() ? std::string("none") : ours) +
                        "): unset it to fetch the config and headers, or name a local file");
  }
  if (ours.empty())
    fail(id.repo(), "no cache directory for what is fetched: set MEMPLAN_CACHE_DIR, XDG_CACHE_HOME or HOME");
  return {fetch(id, ours, progress).string(), "fetched from the Hub, cached in " + ours};
}

ModelEntry load_hub_model(const HubId& id, const std::function<void(const std::string&)>& progress,
                          const std::string& as_model_type) {
  const HubSnapshot snapshot = hub_snapshot(id, progress);
  return from_snapshot(snapshot.directory, id, snapshot.where, as_model_type);
}

}  // namespace memplan
