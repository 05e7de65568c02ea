// A shared library opened with dlopen; private to memplan (the probe's CUDA driver and NVML, io's libcurl).
#pragma once

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstring>
#include <string>
#include <utility>

namespace memplan::detail {

class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  DynamicLibrary(DynamicLibrary&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept {
    if (this != &other) {
      close();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~DynamicLibrary() { close(); }

  // Opens `file` (a path or a soname the loader searches for). On failure the library is
  // not loaded and `error` holds dlerror()'s text. `keep_loaded` adds RTLD_NODELETE: the
  // CUDA driver must not be unloaded once initialised.
  static DynamicLibrary open(const std::string& file, bool keep_loaded, std::string& error) {
    DynamicLibrary lib;
    // A path (an override such as MEMPLAN_CUDA_LIBRARY) must name a regular file: dlopen of
    // a FIFO would block, of a device would read it.
    struct stat st {};
    if (file.find('/') != std::string::npos && ::stat(file.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      error = file + " is not a regular file";
      return lib;
    }
    int flags = RTLD_NOW | RTLD_LOCAL;
    if (keep_loaded) flags |= RTLD_NODELETE;
    lib.handle_ = dlopen(file.c_str(), flags);
    if (!lib.handle_) {
      const char* message = dlerror();
      error = message ? message : "dlopen failed";
    }
    return lib;
  }

  bool loaded() const { return handle_ != nullptr; }

  // Returns the function `name` as a pointer of type F, or nullptr when it is not exported.
  template <class F>
  F function(const char* name) const {
    static_assert(sizeof(F) == sizeof(void*));
    void* address = handle_ ? dlsym(handle_, name) : nullptr;
    F f = nullptr;
    std::memcpy(&f, &address, sizeof f);  // object-to-function pointer without a cast ISO C++ frowns on
    return f;
  }

 private:
  void close() {
    if (handle_) dlclose(handle_);
    handle_ = nullptr;
  }
  void* handle_ = nullptr;
};

}  // namespace memplan::detail
