#include "http.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string_view>

#include "memplan/core/error.hpp"

namespace memplan::detail {
namespace {

struct Transfer {
  const HttpRequest* request = nullptr;
  HttpResponse response;
  bool too_long = false;
  curl_slist* headers = nullptr;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  if (t->response.body.size() + n > t->request->max_bytes) {
    t->too_long = true;
    return 0;  // aborts the transfer
  }
  t->response.body.append(data, n);
  return n;
}

// Header lines arrive one at a time, for every response of a redirect chain; the last
// response's values win.
std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  std::string_view line(data, n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  std::string name(line.substr(0, colon));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (name == "x-repo-commit") t->response.repo_commit = std::string(value);
  if (name == "content-range") {  // "bytes 0-7/123456"
    const std::size_t slash = value.rfind('/');
    std::uint64_t total = 0;
    bool digits = slash != std::string_view::npos && slash + 1 < value.size();
    for (std::size_t i = slash + 1; digits && i < value.size(); ++i) {
      const char c = value[i];
      if (c < '0' || c > '9' || total > (UINT64_MAX - 9) / 10) {
        digits = false;
      } else {
        total = total * 10 + static_cast<std::uint64_t>(c - '0');
      }
    }
    if (digits) t->response.total_size = total;
  }
  return n;
}

struct MultiDeleter {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};

}  // namespace

std::vector<HttpResponse> http_get_all(const std::vector<HttpRequest>& requests, const HttpSettings& settings) {
  static const CURLcode global = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (global != CURLE_OK) throw Error(ErrorKind::internal, "libcurl could not be initialised");
  std::unique_ptr<CURLM, MultiDeleter> multi(curl_multi_init());
  if (!multi) throw Error(ErrorKind::internal, "libcurl could not be initialised");
  curl_multi_setopt(multi.get(), CURLMOPT_MAX_TOTAL_CONNECTIONS, 8L);  // polite to one server, still concurrent

  std::vector<Transfer> transfers(requests.size());
  std::vector<CURL*> handles;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    Transfer& t = transfers[i];
    t.request = &requests[i];
    t.response.url = requests[i].url;
    CURL* h = curl_easy_init();
    if (h == nullptr) throw Error(ErrorKind::internal, "libcurl could not be initialised");
    handles.push_back(h);
    curl_easy_setopt(h, CURLOPT_URL, requests[i].url.c_str());
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, std::min(settings.timeout_seconds, 10L));
    curl_easy_setopt(h, CURLOPT_TIMEOUT, settings.timeout_seconds);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "memplan");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
    if (requests[i].range) {
      const std::string range = std::to_string(requests[i].range->first) + "-" +
                                std::to_string(requests[i].range->second);
      curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());  // libcurl copies the string
    }
    if (!settings.bearer_token.empty()) {
      t.headers = curl_slist_append(nullptr, ("Authorization: Bearer " + settings.bearer_token).c_str());
      curl_easy_setopt(h, CURLOPT_HTTPHEADER, t.headers);
    }
    curl_easy_setopt(h, CURLOPT_PRIVATE, &t);
    curl_multi_add_handle(multi.get(), h);
  }

  int running = 0;
  do {
    curl_multi_perform(multi.get(), &running);
    if (running > 0) curl_multi_poll(multi.get(), nullptr, 0, 1000, nullptr);
  } while (running > 0);

  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi.get(), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
    curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &t->response.status);
    const CURLcode code = msg->data.result;
    if (t->too_long) {
      t->response.error = "the response is longer than " + std::to_string(t->request->max_bytes) + " bytes";
    } else if (code != CURLE_OK) {
      t->response.error = curl_easy_strerror(code);
      t->response.timed_out = code == CURLE_OPERATION_TIMEDOUT;
      t->response.unreachable = code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY ||
                                code == CURLE_COULDNT_CONNECT;
    }
  }
  std::vector<HttpResponse> out;
  out.reserve(transfers.size());
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    curl_multi_remove_handle(multi.get(), handles[i]);
    curl_easy_cleanup(handles[i]);
    curl_slist_free_all(transfers[i].headers);
    out.push_back(std::move(transfers[i].response));
  }
  return out;
}

}  // namespace memplan::detail
