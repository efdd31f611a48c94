#include <gtest/gtest.h>

#include "tessera/planner.h"

namespace tessera {
namespace {

class NullPlanner : public Planner {
 public:
  std::string_view Name() const override { return "null"; }
  Result<PlanResult> Plan(const Problem&, const PlanContext&) const override {
    return PlanResult{};
  }
};

TEST(PlannerRegistry, RegistersCreatesAndRejectsDuplicates) {
  PlannerRegistry r("planner");
  EXPECT_TRUE(
      r.Register("null", "does nothing", [] { return std::make_unique<NullPlanner>(); }).ok());
  EXPECT_FALSE(r.Register("null", "again", [] { return std::make_unique<NullPlanner>(); }).ok());
  EXPECT_FALSE(r.Register("", "nameless", [] { return std::make_unique<NullPlanner>(); }).ok());
  EXPECT_FALSE(r.Register("nofactory", "", nullptr).ok());
  Result<std::unique_ptr<Planner>> p = r.Create("null");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->Name(), "null");
  Result<std::unique_ptr<Planner>> missing = r.Create("greedy");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("known: null"), std::string::npos);
  EXPECT_EQ(r.Description("null"), "does nothing");
}

TEST(PlannerRegistry, BuiltinsIncludeTheParvaFamily) {
  const std::vector<std::string> names = BuiltinPlanners().Names();
  for (const char* name : {"parva", "parva-single", "parva-unopt"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    auto p = BuiltinPlanners().Create(name);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ((*p)->Name(), name);
  }
}

}  // namespace
}  // namespace tessera
