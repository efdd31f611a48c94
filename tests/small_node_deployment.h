// SmallNodeDeployment: the deployment the node plan and deploy-artifact
// tests share. Two A100-80GB GPUs on one node: resnet50 (900 rps, SLO
// 300 ms) on a 4g.40gb@0 (batch 32, 2 procs, 1000 rps, 60 ms) and a
// 1g.10gb@0 of GPU 1 (batch 8, 1 proc, 130 rps, 50 ms); BERT_large (model
// bert, 300 rps, SLO 180 ms) on a 3g.40gb@4 (batch 16, 3 procs, 400 rps,
// 70 ms).
#ifndef TESSERA_TESTS_SMALL_NODE_DEPLOYMENT_H_
#define TESSERA_TESTS_SMALL_NODE_DEPLOYMENT_H_

#include "deployment_builder.h"

namespace tessera {

inline Deployment SmallNodeDeployment() {
  return DeploymentBuilder("a100-80gb", "parva")
      .Gpu()
      .Instance("3g.40gb", 4, "BERT_large", 16, 3, 400, 70)
      .Instance("4g.40gb", 0, "resnet50", 32, 2, 1000, 60)
      .Gpu()
      .Instance("1g.10gb", 0, "resnet50", 8, 1, 130, 50)
      .Service("resnet50", 900, 300)
      .Service("BERT_large", 300, 180, "bert")
      .LowerBound(2, "fractional")
      .Build();
}

}  // namespace tessera

#endif  // TESSERA_TESTS_SMALL_NODE_DEPLOYMENT_H_
