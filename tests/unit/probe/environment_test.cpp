#include "memplan/probe/environment.hpp"

#include <gtest/gtest.h>

namespace memplan {
namespace environment_test {

EnvironmentInfo with(std::map<std::string, std::string> variables, std::set<std::string> paths = {},
                     std::string cgroup = "") {
  return detect_environment({std::move(variables), std::move(paths), std::move(cgroup)});
}

TEST(Environment, EachPlatformFromItsSignal) {
  EXPECT_EQ(with({{"COLAB_RELEASE_TAG", "release-colab_20240626"}}).kind, Environment::colab);
  EXPECT_EQ(with({{"COLAB_GPU", "1"}}).kind, Environment::colab);
  EXPECT_EQ(with({{"MODAL_TASK_ID", "ta-01J"}}).kind, Environment::modal);
  EXPECT_EQ(with({{"RUNPOD_POD_ID", "abc123"}}).kind, Environment::runpod);
  EXPECT_EQ(with({{"VAST_CONTAINERLABEL", "C.42"}}).kind, Environment::vast);
  EXPECT_EQ(with({}, {"/etc/lambda"}).kind, Environment::lambda);
  EXPECT_EQ(with({{"SLURM_JOB_ID", "7"}}).kind, Environment::slurm);
  EXPECT_EQ(with({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}}).kind, Environment::kubernetes);
  EXPECT_EQ(with({{"SSH_CONNECTION", "10.0.0.2 5000 10.0.0.3 22"}}).kind, Environment::ssh_remote);
  EXPECT_EQ(with({}, {"/.dockerenv"}).kind, Environment::container);
  EXPECT_EQ(with({}, {"/run/.containerenv"}).kind, Environment::container);
  EXPECT_EQ(with({{"container", "podman"}}).kind, Environment::container);
  EXPECT_EQ(with({}, {}, "0::/kubepods/burstable/pod1234/abcd\n").kind, Environment::container);
}

TEST(Environment, NoSignalMeansLocal) {
  const EnvironmentInfo info = with({}, {}, "0::/init.scope\n");
  EXPECT_EQ(info.kind, Environment::local);
  EXPECT_FALSE(info.evidence.empty());
  // /content alone is not taken for Colab: any machine may have one.
  EXPECT_EQ(with({}, {"/content"}).kind, Environment::local);
}

TEST(Environment, TheMostSpecificWinsAndTheRestAreKept) {
  const EnvironmentInfo info = with({{"SLURM_JOB_ID", "123"}, {"SSH_CONNECTION", "a b c d"}}, {"/.dockerenv"});
  EXPECT_EQ(info.kind, Environment::slurm);
  EXPECT_EQ(info.evidence, "SLURM_JOB_ID is set");
  EXPECT_EQ(info.detail, "123");
  ASSERT_EQ(info.also.size(), 2U);
  EXPECT_EQ(info.also[0], "ssh_remote (SSH_CONNECTION is set)");
  EXPECT_EQ(info.also[1], "container (/.dockerenv exists)");
}

TEST(Environment, ModalKeepsItsTaskId) {
  const EnvironmentInfo info = with({{"MODAL_TASK_ID", "ta-01HXYZ"}});
  EXPECT_EQ(info.detail, "ta-01HXYZ");
  EXPECT_EQ(to_string(info.kind), "modal");
}

TEST(Environment, Names) {
  EXPECT_EQ(to_string(Environment::ssh_remote), "ssh_remote");
  EXPECT_EQ(to_string(Environment::vast), "vast");
  EXPECT_EQ(to_string(Environment::local), "local");
}

}  // namespace environment_test
}  // namespace memplan
