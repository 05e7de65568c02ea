#include "http.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string_view>

#include "../probe/dynamic_library.hpp"
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

// libcurl, opened on the first Hub request rather than linked: it pulls in some thirty
// libraries (TLS, HTTP/2, LDAP, ...), which every memplan start-up would otherwise load.
struct Curl {
  DynamicLibrary lib;
  CURLcode (*global_init)(long) = nullptr;
  CURLM* (*multi_init)() = nullptr;
  CURLMcode (*multi_setopt)(CURLM*, CURLMoption, ...) = nullptr;
  CURLMcode (*multi_add_handle)(CURLM*, CURL*) = nullptr;
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*) = nullptr;
  CURLMcode (*multi_perform)(CURLM*, int*) = nullptr;
  CURLMcode (*multi_poll)(CURLM*, curl_waitfd[], unsigned int, int, int*) = nullptr;
  CURLMsg* (*multi_info_read)(CURLM*, int*) = nullptr;
  CURLMcode (*multi_cleanup)(CURLM*) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
};

// Returns libcurl's functions, loaded and initialised once. Throws Error(invalid_input)
// when this machine has no libcurl: Hub ids need it, nothing else does.
const Curl& curl() {
  static const Curl api = [] {
    Curl c;
    std::string error;
    for (const char* name : {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"}) {
      c.lib = DynamicLibrary::open(name, true, error);
      if (c.lib.loaded()) break;
    }
    if (!c.lib.loaded()) {
      throw Error(ErrorKind::invalid_input,
                  "Hub ids need libcurl, which this machine lacks (" + error +
                      "; Debian: apt-get install libcurl4); local files and built-in models work without it");
    }
    c.global_init = c.lib.function<decltype(c.global_init)>("curl_global_init");
    c.multi_init = c.lib.function<decltype(c.multi_init)>("curl_multi_init");
    c.multi_setopt = c.lib.function<decltype(c.multi_setopt)>("curl_multi_setopt");
    c.multi_add_handle = c.lib.function<decltype(c.multi_add_handle)>("curl_multi_add_handle");
    c.multi_remove_handle = c.lib.function<decltype(c.multi_remove_handle)>("curl_multi_remove_handle");
    c.multi_perform = c.lib.function<decltype(c.multi_perform)>("curl_multi_perform");
    c.multi_poll = c.lib.function<decltype(c.multi_poll)>("curl_multi_poll");
    c.multi_info_read = c.lib.function<decltype(c.multi_info_read)>("curl_multi_info_read");
    c.multi_cleanup = c.lib.function<decltype(c.multi_cleanup)>("curl_multi_cleanup");
    c.easy_init = c.lib.function<decltype(c.easy_init)>("curl_easy_init");
    c.easy_setopt = c.lib.function<decltype(c.easy_setopt)>("curl_easy_setopt");
    c.easy_getinfo = c.lib.function<decltype(c.easy_getinfo)>("curl_easy_getinfo");
    c.easy_strerror = c.lib.function<decltype(c.easy_strerror)>("curl_easy_strerror");
    c.easy_cleanup = c.lib.function<decltype(c.easy_cleanup)>("curl_easy_cleanup");
    c.slist_append = c.lib.function<decltype(c.slist_append)>("curl_slist_append");
    c.slist_free_all = c.lib.function<decltype(c.slist_free_all)>("curl_slist_free_all");
    // curl_multi_poll arrived in libcurl 7.66; everything here is older.
    if (!c.global_init || !c.multi_init || !c.multi_setopt || !c.multi_add_handle || !c.multi_remove_handle ||
        !c.multi_perform || !c.multi_poll || !c.multi_info_read || !c.multi_cleanup || !c.easy_init || !c.easy_setopt ||
        !c.easy_getinfo || !c.easy_strerror || !c.easy_cleanup || !c.slist_append || !c.slist_free_all) {
      throw Error(ErrorKind::invalid_input, "this machine's libcurl is older than 7.66: Hub ids need a newer one");
    }
    if (c.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw Error(ErrorKind::internal, "libcurl could not be initialised");
    }
    return c;
  }();
  return api;
}

}  // namespace

std::vector<HttpResponse> http_get_all(const std::vector<HttpRequest>& requests, const HttpSettings& settings) {
  const Curl& c = curl();
  const auto multi_cleanup = [&c](CURLM* m) { c.multi_cleanup(m); };
  std::unique_ptr<CURLM, decltype(multi_cleanup)> multi(c.multi_init(), multi_cleanup);
  if (!multi) throw Error(ErrorKind::internal, "libcurl could not be initialised");
  c.multi_setopt(multi.get(), CURLMOPT_MAX_TOTAL_CONNECTIONS, 8L);  // polite to one server, still concurrent

  std::vector<Transfer> transfers(requests.size());
  std::vector<CURL*> handles;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    Transfer& t = transfers[i];
    t.request = &requests[i];
    t.response.url = requests[i].url;
    CURL* h = c.easy_init();
    if (h == nullptr) throw Error(ErrorKind::internal, "libcurl could not be initialised");
    handles.push_back(h);
    c.easy_setopt(h, CURLOPT_URL, requests[i].url.c_str());
    c.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    c.easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
    c.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    c.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    c.easy_setopt(h, CURLOPT_CONNECTTIMEOUT, std::min(settings.timeout_seconds, 10L));
    c.easy_setopt(h, CURLOPT_TIMEOUT, settings.timeout_seconds);
    c.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    c.easy_setopt(h, CURLOPT_USERAGENT, "memplan");
    c.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    c.easy_setopt(h, CURLOPT_WRITEDATA, &t);
    c.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    c.easy_setopt(h, CURLOPT_HEADERDATA, &t);
    if (requests[i].range) {
      const std::string range = std::to_string(requests[i].range->first) + "-" +
                                std::to_string(requests[i].range->second);
      c.easy_setopt(h, CURLOPT_RANGE, range.c_str());  // libcurl copies the string
    }
    if (!settings.bearer_token.empty()) {
      t.headers = c.slist_append(nullptr, ("Authorization: Bearer " + settings.bearer_token).c_str());
      c.easy_setopt(h, CURLOPT_HTTPHEADER, t.headers);
    }
    c.easy_setopt(h, CURLOPT_PRIVATE, &t);
    c.multi_add_handle(multi.get(), h);
  }

  int running = 0;
  do {
    c.multi_perform(multi.get(), &running);
    if (running > 0) c.multi_poll(multi.get(), nullptr, 0, 1000, nullptr);
  } while (running > 0);

  int left = 0;
  while (CURLMsg* msg = c.multi_info_read(multi.get(), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    c.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
    c.easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &t->response.status);
    const CURLcode code = msg->data.result;
    if (t->too_long) {
      t->response.error = "the response is longer than " + std::to_string(t->request->max_bytes) + " bytes";
    } else if (code != CURLE_OK) {
      t->response.error = c.easy_strerror(code);
      t->response.timed_out = code == CURLE_OPERATION_TIMEDOUT;
      t->response.unreachable = code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY ||
                                code == CURLE_COULDNT_CONNECT;
    }
  }
  std::vector<HttpResponse> out;
  out.reserve(transfers.size());
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    c.multi_remove_handle(multi.get(), handles[i]);
    c.easy_cleanup(handles[i]);
    c.slist_free_all(transfers[i].headers);
    out.push_back(std::move(transfers[i].response));
  }
  return out;
}

}  // namespace memplan::detail
