#include "memplan/probe/environment.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace memplan {

namespace {

// Environment variables detection reads (docs/hardware.md gives each one's source).
const std::vector<std::string> kVariables = {
    "COLAB_RELEASE_TAG",   "COLAB_GPU",    "MODAL_TASK_ID", "RUNPOD_POD_ID",
    "VAST_CONTAINERLABEL", "SLURM_JOB_ID", "SLURM_JOBID",   "KUBERNETES_SERVICE_HOST",
    "SSH_CONNECTION",      "SSH_CLIENT",   "container"};

// Marker files detection checks.
const std::vector<std::string> kPaths = {"/etc/lambda", "/.dockerenv", "/run/.containerenv"};

// Words in /proc/1/cgroup that mean PID 1 runs in a container.
const std::vector<std::string> kContainerCgroups = {"docker", "kubepods", "containerd", "libpod", "lxc"};

struct Match {
  Environment kind;
  std::string evidence;
  std::string detail;
};

}  // namespace

std::string to_string(Environment environment) {
  switch (environment) {
    case Environment::colab: return "colab";
    case Environment::modal: return "modal";
    case Environment::runpod: return "runpod";
    case Environment::vast: return "vast";
    case Environment::lambda: return "lambda";
    case Environment::slurm: return "slurm";
    case Environment::kubernetes: return "kubernetes";
    case Environment::ssh_remote: return "ssh_remote";
    case Environment::container: return "container";
    case Environment::local: return "local";
  }
  return "local";
}

EnvironmentInfo detect_environment(const EnvironmentSignals& signals) {
  const auto var = [&](const std::string& name) -> const std::string* {
    const auto it = signals.variables.find(name);
    return it == signals.variables.end() ? nullptr : &it->second;
  };
  const auto has_path = [&](const std::string& path) { return signals.existing_paths.contains(path); };

  // Most specific first: a platform, a scheduler, an orchestrator, a login, a container.
  std::vector<Match> matches;
  for (const char* name : {"COLAB_RELEASE_TAG", "COLAB_GPU"}) {
    if (var(name)) {
      matches.push_back({Environment::colab, std::string(name) + " is set", ""});
      break;
    }
  }
  if (const std::string* id = var("MODAL_TASK_ID"))
    matches.push_back({Environment::modal, "MODAL_TASK_ID is set", *id});
  if (const std::string* id = var("RUNPOD_POD_ID"))
    matches.push_back({Environment::runpod, "RUNPOD_POD_ID is set", *id});
  if (const std::string* id = var("VAST_CONTAINERLABEL")) {
    matches.push_back({Environment::vast, "VAST_CONTAINERLABEL is set", *id});
  }
  if (has_path("/etc/lambda")) matches.push_back({Environment::lambda, "/etc/lambda exists", ""});
  for (const char* name : {"SLURM_JOB_ID", "SLURM_JOBID"}) {
    if (const std::string* id = var(name)) {
      matches.push_back({Environment::slurm, std::string(name) + " is set", *id});
      break;
    }
  }
  if (var("KUBERNETES_SERVICE_HOST")) {
    matches.push_back({Environment::kubernetes, "KUBERNETES_SERVICE_HOST is set", ""});
  }
  for (const char* name : {"SSH_CONNECTION", "SSH_CLIENT"}) {
    if (var(name)) {
      matches.push_back({Environment::ssh_remote, std::string(name) + " is set", ""});
      break;
    }
  }
  std::string container;
  if (has_path("/.dockerenv")) {
    container = "/.dockerenv exists";
  } else if (has_path("/run/.containerenv")) {
    container = "/run/.containerenv exists";
  } else if (const std::string* runtime = var("container"); runtime && !runtime->empty()) {
    container = "container=" + *runtime + " is set";
  } else {
    for (const std::string& word : kContainerCgroups) {
      if (signals.init_cgroup.find(word) != std::string::npos) {
        container = "/proc/1/cgroup names " + word;
        break;
      }
    }
  }
  if (!container.empty()) matches.push_back({Environment::container, container, ""});

  EnvironmentInfo info;
  if (matches.empty()) {
    info.evidence = "no cloud, cluster, remote-login or container signal";
    return info;
  }
  info.kind = matches.front().kind;
  info.evidence = matches.front().evidence;
  info.detail = matches.front().detail;
  for (std::size_t i = 1; i < matches.size(); ++i) {
    info.also.push_back(to_string(matches[i].kind) + " (" + matches[i].evidence + ")");
  }
  return info;
}

EnvironmentSignals read_environment_signals() {
  EnvironmentSignals signals;
  for (const std::string& name : kVariables) {
    if (const char* value = std::getenv(name.c_str())) signals.variables[name] = value;
  }
  for (const std::string& path : kPaths) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) signals.existing_paths.insert(path);
  }
  std::ifstream cgroup("/proc/1/cgroup");
  if (cgroup) {
    std::ostringstream text;
    text << cgroup.rdbuf();
    signals.init_cgroup = text.str();
  }
  return signals;
}

}  // namespace memplan
