// Hugging Face Hub models by id (ORG/NAME, ORG/NAME@REVISION), found the way the Hub's own
// clients find them: the local Hugging Face cache first, then memplan's cache of what it
// fetched before, then the network (libcurl): config.json, the safetensors index, and each
// shard's header by HTTP Range requests — never the tensor data.
//
// Environment, as huggingface_hub reads it: HF_HUB_CACHE, else HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub or ~/.cache/huggingface/hub; HF_ENDPOINT (default
// https://huggingface.co); HF_TOKEN, else the token file HF_HOME/token; HF_HUB_OFFLINE=1 for
// caches only. memplan's cache: MEMPLAN_CACHE_DIR/hub, else $XDG_CACHE_HOME/memplan/hub or
// ~/.cache/memplan/hub. MEMPLAN_HUB_TIMEOUT: seconds per request (default 30).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "memplan/io/model_file.hpp"

namespace memplan {

struct HubId {
  std::string org;
  std::string name;
  std::string revision = "main";
  std::string repo() const { return org + "/" + name; }
};

// Returns the id `text` spells (ORG/NAME or ORG/NAME@REVISION: letters, digits, '-', '_',
// '.', no "--" or ".." and at most 96 characters per part, as the Hub allows), or nullopt
// when it is not shaped like one.
std::optional<HubId> parse_hub_id(std::string_view text);

// The Hugging Face cache directory the environment names (see above).
std::string hf_hub_cache_dir();

// memplan's own cache of fetched configs and headers (see above).
std::string memplan_hub_cache_dir();

// Where a Hub model's files are on this machine: a snapshot directory of the Hugging Face
// cache or of memplan's (config.json, the index, header-only shards).
struct HubSnapshot {
  std::string directory;
  std::string where;  // "Hugging Face cache", "memplan's Hub cache", "fetched from the Hub, cached in DIR"
};

// Returns the snapshot of `id`, fetching it when no cache holds it. Throws as load_hub_model.
HubSnapshot hub_snapshot(const HubId& id, const std::function<void(const std::string&)>& progress = {});

// Returns the model `id` names, with the weights as its safetensors headers store them
// when the repository has safetensors weights. `progress` (may be empty) is told what is
// being fetched. Throws ConfigError naming the id or the URL, with what to do: gated or
// private (401, 403), not found (404), offline with nothing cached, a timeout, no network,
// a truncated or hostile response. `as_model_type`: as load_hf_config.
ModelEntry load_hub_model(const HubId& id, const std::function<void(const std::string&)>& progress = {},
                          const std::string& as_model_type = {});

}  // namespace memplan
