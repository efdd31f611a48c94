#include "tessera/transition/transition_duration.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TransitionStep Step(StepAction action, int gpu, int procs = 1) {
  TransitionStep step;
  step.action = action;
  step.gpu = gpu;
  step.procs = procs;
  return step;
}

TEST(TransitionDuration, EachStepIsWhatItDoesOnTheNode) {
  const StepDurations d;  // 2 s create, 1 s destroy, 1 s MPS, 15 s load, 1 s drain
  EXPECT_DOUBLE_EQ(StepSeconds(Step(StepAction::kCreate, 0), d), 17);
  EXPECT_DOUBLE_EQ(StepSeconds(Step(StepAction::kCreate, 0, 3), d), 18);
  EXPECT_DOUBLE_EQ(StepSeconds(Step(StepAction::kDestroy, 0, 3), d), 2);
  EXPECT_DOUBLE_EQ(StepSeconds(Step(StepAction::kReconfigure, 0), d), 16);
  EXPECT_DOUBLE_EQ(StepSeconds(Step(StepAction::kReconfigure, 0, 2), d), 17);
}

TEST(TransitionDuration, OneGpusStepsAddUpAndAPhaseIsItsSlowestGpu) {
  StepDurations d;
  d.model_load_s = 10;
  Transition t;
  // Phase 1: GPU 0 destroys then creates (2 + 12 s); GPU 1 creates (12 s).
  t.phases.push_back({{Step(StepAction::kDestroy, 0), Step(StepAction::kCreate, 0),
                       Step(StepAction::kCreate, 1)}});
  // Phase 2: two destroys on different GPUs run at once.
  t.phases.push_back({{Step(StepAction::kDestroy, 2), Step(StepAction::kDestroy, 3)}});
  t.phases.push_back({});
  EXPECT_EQ(PhaseSeconds(t, d), (std::vector<double>{14, 2, 0}));
  EXPECT_DOUBLE_EQ(TransitionSeconds(t, d), 16);
  EXPECT_DOUBLE_EQ(TransitionSeconds(Transition{}, d), 0);
}

}  // namespace
}  // namespace tessera
