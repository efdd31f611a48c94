// The builtin model cards: public figures for the 11 models of ParvaGPU's
// study. GFLOPs, weighted layers and activation MiB come from walking each
// architecture layer by layer (`python3 tools/fit_synth.py cards`, rounded to
// 3 significant digits); parameter counts are ParvaGPU's Table IV.
#include <string>
#include <vector>

#include "tessera/profile/profile_synth.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

constexpr char kWalker[] =
    "GFLOPs, layers, activations: tools/fit_synth.py architecture walker; "
    "params: ParvaGPU (SC24) Table IV";

std::vector<ModelCard> BuildCards() {
  const std::string walker = kWalker;
  return {
      // 24 encoder layers x 6 linears + pooler + head. Runs under torch.no_grad
      // (NVIDIA's inference script), so activations are the peak live set of
      // one layer: FFN intermediate before and after GELU, two hidden states,
      // two attention maps.
      {"bert-large", "BERT-large, NVIDIA PyTorch, sequence length 128", 78.9, 330, 146, 7.0,
       walker},
      // torchvision DenseNets concatenate every earlier feature map in each
      // layer, hence activations far above their GFLOPs would suggest.
      {"densenet121", "DenseNet-121, torchvision, 224x224", 5.67, 8.0, 121, 128, walker},
      {"densenet169", "DenseNet-169, torchvision, 224x224", 6.72, 14.1, 169, 154, walker},
      {"densenet201", "DenseNet-201, torchvision, 224x224", 8.58, 20.0, 201, 198, walker},
      // Profiled at 224x224, not the native 299x299 (11.4 GFLOPs, 92 MiB):
      // ParvaGPU's throughputs and memory limits both match 224x224 (see
      // docs/profile-synthesizer.md). Table IV's 27.2M includes the auxiliary
      // head, which eval mode does not run.
      {"inceptionv3", "Inception-v3, torchvision, 224x224 input as profiled", 5.68, 27.2, 95, 47.8,
       walker},
      {"mobilenetv2", "MobileNetV2, torchvision, 224x224", 0.602, 3.5, 53, 52.4, walker},
      {"resnet50", "ResNet-50 v1.5, torchvision, 224x224", 8.18, 25.6, 54, 86.1, walker},
      {"resnet101", "ResNet-101 v1.5, torchvision, 224x224", 15.6, 44.5, 105, 125, walker},
      {"resnet152", "ResNet-152 v1.5, torchvision, 224x224", 23.0, 60.2, 156, 173, walker},
      {"vgg16", "VGG-16, torchvision, 224x224", 30.9, 138.4, 16, 58.2, walker},
      {"vgg19", "VGG-19, torchvision, 224x224", 39.3, 143.7, 19, 63.2, walker},
  };
}

}  // namespace

std::span<const ModelCard> BuiltinModelCards() {
  static const std::vector<ModelCard> cards = BuildCards();
  return cards;
}

Result<const ModelCard*> FindModelCard(std::string_view name) {
  const std::string canonical = CanonicalModelName(name);
  std::string known;
  for (const ModelCard& card : BuiltinModelCards()) {
    if (card.name == canonical) return &card;
    known += (known.empty() ? "" : ", ") + card.name;
  }
  return Status::NotFound("no model card " + QuoteForMessage(name) + " (known: " + known + ")");
}

}  // namespace tessera
