// The NVML loader (include/tessera/nvml/nvml.h) on the fake NVML
// (libtessera-fake-nvml.so): every rule the fake enforces, seen through the
// real loader, and the loader's own errors.
#include "tessera/nvml/nvml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tessera/gpu/mig_layout.h"
#include "tessera/gpu_catalog.h"
#include "test_paths.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kEnv[] = {"TESSERA_FAKE_NVML_STATE", "TESSERA_FAKE_NVML_DEVICES",
                                "TESSERA_FAKE_NVML_FAIL", "TESSERA_FAKE_NVML_LATENCY_MS"};

class FakeNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir();
    state_ = (dir_ / "state.json").string();
    for (const char* name : kEnv) unsetenv(name);
    setenv("TESSERA_FAKE_NVML_STATE", state_.c_str(), 1);
  }
  void TearDown() override {
    for (const char* name : kEnv) unsetenv(name);
    fs::remove_all(dir_);
  }

  // Opens the fake on a machine of `devices` (a fresh state file).
  std::unique_ptr<Nvml> OpenWith(const std::string& devices) {
    fs::remove(state_);
    setenv("TESSERA_FAKE_NVML_DEVICES", devices.c_str(), 1);
    auto nvml = Nvml::Open(TESSERA_FAKE_NVML);
    EXPECT_TRUE(nvml.ok()) << nvml.status().ToString();
    return nvml.ok() ? std::move(nvml).value() : nullptr;
  }

  fs::path dir_;
  std::string state_;
};

const MigProfile& Profile(const GpuModel& gpu, const std::string& name) {
  const MigProfile* profile = gpu.FindProfile(name);
  EXPECT_NE(profile, nullptr) << name;
  return *profile;
}

TEST(NvmlOpenTest, NonexistentLibraryIsNotFoundNamingIt) {
  auto nvml = Nvml::Open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(nvml.status().message(), HasSubstr("/nonexistent/libnvidia-ml.so.1"));
  EXPECT_THAT(nvml.status().message(), HasSubstr("--nvml"));
}

TEST_F(FakeNvmlTest, MissingStateAndNoDevicesFailsOpen) {
  auto nvml = Nvml::Open(TESSERA_FAKE_NVML);
  ASSERT_FALSE(nvml.ok());
  EXPECT_THAT(nvml.status().message(),
              HasSubstr("nvmlInit_v2 (" + std::string(TESSERA_FAKE_NVML) +
                        "): Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED)"));
}

TEST_F(FakeNvmlTest, MalformedStateFailsOpenWithUnknown) {
  testing::WriteTextFile(state_, "{\"gpus\": [{\"model\": \"v100-16gb\"}]}");
  auto nvml = Nvml::Open(TESSERA_FAKE_NVML);
  ASSERT_FALSE(nvml.ok());
  EXPECT_THAT(nvml.status().message(), HasSubstr("(NVML_ERROR_UNKNOWN)"));
}

TEST_F(FakeNvmlTest, MalformedEnvironmentFailsOpen) {
  setenv("TESSERA_FAKE_NVML_DEVICES", "a100-80gb", 1);
  for (const char* bad :
       {"nvmlNoSuchCall:1", "nvmlInit_v2:0", "nvmlInit_v2:1:NOT_AN_ERROR", "nvmlInit_v2"}) {
    setenv("TESSERA_FAKE_NVML_FAIL", bad, 1);
    auto nvml = Nvml::Open(TESSERA_FAKE_NVML);
    ASSERT_FALSE(nvml.ok()) << bad;
    EXPECT_THAT(nvml.status().message(), HasSubstr("NVML_ERROR_UNKNOWN")) << bad;
  }
  unsetenv("TESSERA_FAKE_NVML_FAIL");
  setenv("TESSERA_FAKE_NVML_LATENCY_MS", "soon", 1);
  EXPECT_FALSE(Nvml::Open(TESSERA_FAKE_NVML).ok());
  setenv("TESSERA_FAKE_NVML_LATENCY_MS", "", 1);
  setenv("TESSERA_FAKE_NVML_DEVICES", "b300-288gb", 1);
  EXPECT_FALSE(Nvml::Open(TESSERA_FAKE_NVML).ok());
  setenv("TESSERA_FAKE_NVML_DEVICES", "a100-80gb", 1);
  EXPECT_TRUE(Nvml::Open(TESSERA_FAKE_NVML).ok());
}

TEST_F(FakeNvmlTest, ReadGpuReportsProfilesPlacementsAndNames) {
  auto nvml = OpenWith("a100-80gb,a30-24gb");
  ASSERT_TRUE(nvml);
  ASSERT_EQ(*nvml->DeviceCount(), 2);
  auto gpu = nvml->ReadGpu(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_EQ(gpu->name, "NVIDIA A100 80GB (SXM4/PCIe)");
  EXPECT_EQ(gpu->uuid.rfind("GPU-", 0), 0u);
  EXPECT_TRUE(gpu->mig_supported && gpu->mig_enabled && gpu->mig_pending_enabled);
  const GpuModel& a100 = **FindGpu("a100-80gb");
  ASSERT_EQ(gpu->profiles.size(), a100.profiles.size());
  for (const NvmlProfile& p : gpu->profiles) {
    const MigProfile* want = nullptr;
    for (const MigProfile& c : a100.profiles) {
      if (c.id == p.id) want = &c;
    }
    ASSERT_NE(want, nullptr) << p.id;
    EXPECT_EQ(p.name, want->name);
    EXPECT_EQ(p.starts, want->starts) << p.name;
    EXPECT_EQ(p.memory_slices, want->memory_slices) << p.name;
    EXPECT_EQ(p.slice_count, want->compute_slices) << p.name;
    EXPECT_EQ(p.multiprocessor_count, want->sms) << p.name;
  }
  auto profile_enum = [&](const std::string& name) {
    for (const NvmlProfile& p : gpu->profiles) {
      if (p.name == name) return p.nvml_profile;
    }
    return -1;
  };
  EXPECT_EQ(profile_enum("1g.10gb"), 0);
  EXPECT_EQ(profile_enum("1g.10gb+me"), 7);
  EXPECT_EQ(profile_enum("1g.20gb"), 9);
  EXPECT_EQ(profile_enum("2g.20gb"), 1);
  EXPECT_EQ(profile_enum("3g.40gb"), 2);
  EXPECT_EQ(profile_enum("4g.40gb"), 3);
  EXPECT_EQ(profile_enum("7g.80gb"), 4);
  auto a30 = nvml->ReadGpu(1);
  ASSERT_TRUE(a30.ok());
  EXPECT_NE(a30->uuid, gpu->uuid);
  EXPECT_EQ(a30->profiles.size(), 5u);
}

// Every maximal layout of every MIG GPU of the catalog can be built, with a
// compute instance on each GPU instance, and read back.
TEST_F(FakeNvmlTest, EveryMaximalCatalogLayoutIsAccepted) {
  for (const GpuModel* model : AllMigGpus()) {
    auto nvml = OpenWith(model->name);
    ASSERT_TRUE(nvml);
    const std::vector<int> profiles = model->PrimaryProfiles();
    const std::vector<Layout> layouts = EnumerateMaximalLayouts(*model, profiles);
    ASSERT_FALSE(layouts.empty());
    if (model->name == "a100-80gb") {
      EXPECT_EQ(EnumerateMaximalLayouts(*model, model->PrimaryProfiles()).size(), 19u);
    }
    for (const Layout& layout : layouts) {
      const std::string what = model->name + " " + FormatLayout(*model, layout);
      std::vector<int> ids;
      for (const Placement& placement : layout) {
        const MigProfile& p = model->profiles[placement.profile];
        auto gi = nvml->CreateGpuInstance(0, p.id, placement.start);
        ASSERT_TRUE(gi.ok()) << what << ": " << gi.status().ToString();
        EXPECT_EQ(gi->start, placement.start);
        EXPECT_EQ(gi->size, p.memory_slices);
        auto ci = nvml->CreateComputeInstance(0, gi->id);
        ASSERT_TRUE(ci.ok()) << what << ": " << ci.status().ToString();
        EXPECT_EQ(ci->slice_count, p.compute_slices);
        EXPECT_EQ(ci->uuid.rfind("MIG-", 0), 0u);
        ids.push_back(gi->id);
      }
      auto gpu = nvml->ReadGpu(0);
      ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
      ASSERT_EQ(gpu->instances.size(), layout.size()) << what;
      for (size_t i = 0; i < layout.size(); ++i) {
        EXPECT_EQ(gpu->instances[i].start, layout[i].start) << what;
        ASSERT_EQ(gpu->instances[i].compute_instances.size(), 1u) << what;
        EXPECT_FALSE(gpu->instances[i].compute_instances[0].uuid.empty()) << what;
      }
      for (int id : ids) {
        ASSERT_TRUE(nvml->DestroyComputeInstance(0, id, 0).ok()) << what;
        ASSERT_TRUE(nvml->DestroyGpuInstance(0, id).ok()) << what;
      }
    }
    // Every other profile (media extensions, 1g with 2 memory slices) at each start.
    for (const MigProfile& p : model->profiles) {
      if (model->PrimaryProfileWithComputeSlices(p.compute_slices) == model->ProfileIndex(p.name))
        continue;
      for (int start : p.starts) {
        auto gi = nvml->CreateGpuInstance(0, p.id, start);
        ASSERT_TRUE(gi.ok()) << p.name << "@" << start << ": " << gi.status().ToString();
        ASSERT_TRUE(nvml->DestroyGpuInstance(0, gi->id).ok());
      }
    }
  }
}

TEST_F(FakeNvmlTest, EveryStartOutsideTheCatalogIsInvalidArgument) {
  for (const GpuModel* model : AllMigGpus()) {
    auto nvml = OpenWith(model->name);
    ASSERT_TRUE(nvml);
    for (const MigProfile& p : model->profiles) {
      for (int start = 0; start < model->memory_slices + 2; ++start) {
        if (std::find(p.starts.begin(), p.starts.end(), start) != p.starts.end()) continue;
        auto gi = nvml->CreateGpuInstance(0, p.id, start);
        ASSERT_FALSE(gi.ok()) << model->name << " " << p.name << "@" << start;
        EXPECT_EQ(nvml->last_error().name, "NVML_ERROR_INVALID_ARGUMENT");
        EXPECT_EQ(nvml->last_error().code, 2);
      }
    }
    auto gpu = nvml->ReadGpu(0);
    ASSERT_TRUE(gpu.ok());
    EXPECT_TRUE(gpu->instances.empty());
  }
}

TEST_F(FakeNvmlTest, OverlapIsInsufficientResourcesNamingGpuProfileAndStart) {
  auto nvml = OpenWith("a100-80gb");
  ASSERT_TRUE(nvml);
  const GpuModel& a100 = **FindGpu("a100-80gb");
  ASSERT_TRUE(nvml->CreateGpuInstance(0, Profile(a100, "3g.40gb").id, 4).ok());
  auto overlap = nvml->CreateGpuInstance(0, Profile(a100, "2g.20gb").id, 4);
  ASSERT_FALSE(overlap.ok());
  EXPECT_EQ(overlap.status().message(),
            "nvmlDeviceCreateGpuInstanceWithPlacement (GPU 0, profile 14, start 4): "
            "Insufficient Resources (NVML_ERROR_INSUFFICIENT_RESOURCES)");
  EXPECT_EQ(nvml->last_error().code, 23);
  // The free half still takes a 4g.
  EXPECT_TRUE(nvml->CreateGpuInstance(0, Profile(a100, "4g.40gb").id, 0).ok());
  EXPECT_EQ(nvml->last_error().code, 0);
}

TEST_F(FakeNvmlTest, OnlyOneMediaExtensionInstancePerGpu) {
  auto nvml = OpenWith("a30-24gb");
  ASSERT_TRUE(nvml);
  const GpuModel& a30 = **FindGpu("a30-24gb");
  ASSERT_TRUE(nvml->CreateGpuInstance(0, Profile(a30, "1g.6gb+me").id, 0).ok());
  EXPECT_FALSE(nvml->CreateGpuInstance(0, Profile(a30, "2g.12gb+me").id, 2).ok());
  EXPECT_EQ(nvml->last_error().name, "NVML_ERROR_INSUFFICIENT_RESOURCES");
  EXPECT_FALSE(nvml->CreateGpuInstance(0, Profile(a30, "1g.6gb+me").id, 1).ok());
  EXPECT_EQ(nvml->last_error().name, "NVML_ERROR_INSUFFICIENT_RESOURCES");
  EXPECT_TRUE(nvml->CreateGpuInstance(0, Profile(a30, "2g.12gb").id, 2).ok());
}

TEST_F(FakeNvmlTest, DestroyingAGpuInstanceWithComputeInstancesIsInUse) {
  auto nvml = OpenWith("h100-80gb");
  ASSERT_TRUE(nvml);
  auto gi = nvml->CreateGpuInstance(0, 9, 0);
  ASSERT_TRUE(gi.ok());
  auto ci = nvml->CreateComputeInstance(0, gi->id);
  ASSERT_TRUE(ci.ok());
  EXPECT_EQ(ci->id, 0);
  Status busy = nvml->DestroyGpuInstance(0, gi->id);
  ASSERT_FALSE(busy.ok());
  EXPECT_THAT(busy.message(), HasSubstr("nvmlGpuInstanceDestroy (GPU 0, GPU instance 1): "
                                        "In use by another client (NVML_ERROR_IN_USE)"));
  EXPECT_EQ(nvml->last_error().name, "NVML_ERROR_IN_USE");
  // A second CI on a GI whose full-size CI exists.
  EXPECT_FALSE(nvml->CreateComputeInstance(0, gi->id).ok());
  EXPECT_EQ(nvml->last_error().name, "NVML_ERROR_INSUFFICIENT_RESOURCES");
  EXPECT_TRUE(nvml->DestroyComputeInstance(0, gi->id, ci->id).ok());
  EXPECT_FALSE(nvml->DestroyComputeInstance(0, gi->id, ci->id).ok());
  EXPECT_TRUE(nvml->DestroyGpuInstance(0, gi->id).ok());
  Status gone = nvml->DestroyGpuInstance(0, gi->id);
  EXPECT_EQ(gone.code(), StatusCode::kNotFound);
  EXPECT_EQ(nvml->last_error().name, "NVML_ERROR_NOT_FOUND");
}

TEST_F(FakeNvmlTest, GpuInstanceIdsReuseTheSmallestFree) {
  auto nvml = OpenWith("a100-40gb");
  ASSERT_TRUE(nvml);
  EXPECT_EQ(nvml->CreateGpuInstance(0, 19, 0)->id, 1);
  EXPECT_EQ(nvml->CreateGpuInstance(0, 19, 1)->id, 2);
  EXPECT_EQ(nvml->CreateGpuInstance(0, 19, 2)->id, 3);
  ASSERT_TRUE(nvml->DestroyGpuInstance(0, 2).ok());
  EXPECT_EQ(nvml->CreateGpuInstance(0, 19, 3)->id, 2);
}

TEST_F(FakeNvmlTest, MigOffIsNotSupported) {
  auto nvml = OpenWith("a100-80gb:mig-off,h200-141gb");
  ASSERT_TRUE(nvml);
  auto gpu = nvml->ReadGpu(0);
  ASSERT_TRUE(gpu.ok());
  EXPECT_TRUE(gpu->mig_supported);
  EXPECT_FALSE(gpu->mig_enabled);
  EXPECT_FALSE(gpu->mig_pending_enabled);
  EXPECT_TRUE(gpu->profiles.empty());
  auto gi = nvml->CreateGpuInstance(0, 9, 0);
  ASSERT_FALSE(gi.ok());
  EXPECT_EQ(nvml->last_error().name, "NVML_ERROR_NOT_SUPPORTED");
  EXPECT_THAT(gi.status().message(), HasSubstr("(GPU 0, profile 9, start 0)"));
  EXPECT_TRUE(nvml->CreateGpuInstance(1, 9, 0).ok());
}

// A stale handle: a GI destroyed by another Nvml (as by another process)
// is NOT_FOUND to this one.
TEST_F(FakeNvmlTest, InstanceDestroyedElsewhereIsNotFound) {
  auto first = OpenWith("a100-80gb");
  ASSERT_TRUE(first);
  auto second = Nvml::Open(TESSERA_FAKE_NVML);
  ASSERT_TRUE(second.ok());
  auto gi = first->CreateGpuInstance(0, 0, 0);
  ASSERT_TRUE(gi.ok());
  ASSERT_TRUE((*second)->DestroyGpuInstance(0, gi->id).ok());
  EXPECT_FALSE(first->CreateComputeInstance(0, gi->id).ok());
  EXPECT_EQ(first->last_error().name, "NVML_ERROR_NOT_FOUND");
}

TEST_F(FakeNvmlTest, TwoProcessesSeeOneMachine) {
  auto nvml = OpenWith("h100-94gb*2");
  ASSERT_TRUE(nvml);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto own = Nvml::Open(TESSERA_FAKE_NVML);
    if (!own.ok()) _exit(2);
    auto gi = (*own)->CreateGpuInstance(1, 9, 4);
    if (!gi.ok() || !(*own)->CreateComputeInstance(1, gi->id).ok()) _exit(3);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto gpu = nvml->ReadGpu(1);
  ASSERT_TRUE(gpu.ok());
  ASSERT_EQ(gpu->instances.size(), 1u);
  EXPECT_EQ(gpu->instances[0].start, 4);
  EXPECT_EQ(gpu->instances[0].profile_id, 9);
  ASSERT_EQ(gpu->instances[0].compute_instances.size(), 1u);
  EXPECT_EQ(gpu->instances[0].compute_instances[0].uuid.rfind("MIG-", 0), 0u);
  EXPECT_TRUE(nvml->ReadGpu(0)->instances.empty());
}

TEST_F(FakeNvmlTest, InjectedFailureHitsTheNthCall) {
  setenv("TESSERA_FAKE_NVML_FAIL", "nvmlDeviceCreateGpuInstanceWithPlacement:2:GPU_IS_LOST", 1);
  auto nvml = OpenWith("a100-80gb");
  ASSERT_TRUE(nvml);
  EXPECT_TRUE(nvml->CreateGpuInstance(0, 19, 0).ok());
  auto lost = nvml->CreateGpuInstance(0, 19, 1);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().message(),
            "nvmlDeviceCreateGpuInstanceWithPlacement (GPU 0, profile 19, start 1): "
            "GPU is lost (NVML_ERROR_GPU_IS_LOST)");
  EXPECT_EQ(nvml->last_error().code, 15);
  EXPECT_TRUE(nvml->CreateGpuInstance(0, 19, 1).ok());
}

TEST_F(FakeNvmlTest, InjectedFailureWithPlusHitsEveryLaterCall) {
  setenv("TESSERA_FAKE_NVML_FAIL", "nvmlGpuInstanceDestroy:2+", 1);
  auto nvml = OpenWith("a100-80gb");
  ASSERT_TRUE(nvml);
  for (int start : {0, 1, 2, 3}) ASSERT_TRUE(nvml->CreateGpuInstance(0, 19, start).ok());
  EXPECT_TRUE(nvml->DestroyGpuInstance(0, 1).ok());
  for (int id : {2, 3, 4}) {
    EXPECT_FALSE(nvml->DestroyGpuInstance(0, id).ok());
    EXPECT_EQ(nvml->last_error().name, "NVML_ERROR_UNKNOWN");
  }
}

TEST_F(FakeNvmlTest, InjectedLatencyStillSucceeds) {
  setenv("TESSERA_FAKE_NVML_LATENCY_MS", "nvmlDeviceCreateGpuInstanceWithPlacement:5", 1);
  auto nvml = OpenWith("a100-80gb");
  ASSERT_TRUE(nvml);
  EXPECT_TRUE(nvml->CreateGpuInstance(0, 0, 0).ok());
  setenv("TESSERA_FAKE_NVML_LATENCY_MS", "1", 1);
  auto again = Nvml::Open(TESSERA_FAKE_NVML);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->ReadGpu(0)->instances.size(), 1u);
}

TEST_F(FakeNvmlTest, ReadInventoryListsPlacementsAndMigUuids) {
  auto nvml = OpenWith("a100-80gb*2");
  ASSERT_TRUE(nvml);
  auto gi = nvml->CreateGpuInstance(1, 14, 2);
  ASSERT_TRUE(gi.ok());
  auto ci = nvml->CreateComputeInstance(1, gi->id);
  ASSERT_TRUE(ci.ok());
  auto inventory = ReadInventory(*nvml);
  ASSERT_TRUE(inventory.ok()) << inventory.status().ToString();
  ASSERT_EQ(inventory->size(), 2u);
  EXPECT_EQ((*inventory)[1].index, 1);
  ASSERT_EQ((*inventory)[1].instances.size(), 1u);
  const NvmlGpuInstance& instance = (*inventory)[1].instances[0];
  EXPECT_EQ(instance.profile_id, 14);
  EXPECT_EQ(instance.start, 2);
  EXPECT_EQ(instance.size, 2);
  ASSERT_EQ(instance.compute_instances.size(), 1u);
  EXPECT_EQ(instance.compute_instances[0].uuid, ci->uuid);
  EXPECT_EQ(instance.compute_instances[0].slice_count, 2);
  EXPECT_FALSE((*inventory)[1].profiles.empty());
  EXPECT_TRUE((*inventory)[0].instances.empty());
}

}  // namespace
}  // namespace tessera
