// HTTP GETs with libcurl, several at once: what the Hub client needs and nothing more.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memplan::detail {

struct HttpRequest {
  std::string url;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> range;  // bytes first..last, inclusive
  std::uint64_t max_bytes = 16ULL << 20;                         // a longer body fails the request
};

struct HttpResponse {
  std::string url;  // as requested
  long status = 0;  // the final status after redirects; 0 when none came
  std::string body;
  std::string repo_commit;                  // the Hub's X-Repo-Commit header, when sent
  std::optional<std::uint64_t> total_size;  // from Content-Range: bytes a-b/TOTAL
  std::string error;                        // empty, or why no complete response came
  bool timed_out = false;
  bool unreachable = false;  // no route, DNS failure, connection refused
};

struct HttpSettings {
  std::string bearer_token;  // sent as Authorization: Bearer (libcurl drops it on a redirect to another host)
  long timeout_seconds = 30;
};

// Performs every request concurrently, following redirects, and returns one response per
// request, in order. Never throws for what the network or the server does: that is in
// each response. Throws Error(internal) only when libcurl cannot be set up.
std::vector<HttpResponse> http_get_all(const std::vector<HttpRequest>& requests, const HttpSettings& settings);

}  // namespace memplan::detail
