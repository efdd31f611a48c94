#include "util/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera {
namespace {

TEST(Base64Test, EncodesRfc4648Vectors) {
  EXPECT_EQ(EncodeBase64(""), "");
  EXPECT_EQ(EncodeBase64("f"), "Zg==");
  EXPECT_EQ(EncodeBase64("fo"), "Zm8=");
  EXPECT_EQ(EncodeBase64("foo"), "Zm9v");
  EXPECT_EQ(EncodeBase64("foobar"), "Zm9vYmFy");
}

TEST(Base64Test, EveryByteRoundTrips) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  for (size_t n = 0; n <= all.size(); n += 37) {
    std::string why;
    const std::optional<std::string> back = DecodeBase64(EncodeBase64(all.substr(0, n)), &why);
    ASSERT_TRUE(back.has_value()) << why;
    EXPECT_EQ(*back, all.substr(0, n));
  }
}

TEST(Base64Test, MalformedTextSaysWhy) {
  std::string why;
  EXPECT_FALSE(DecodeBase64("Zm9v!", &why).has_value());
  EXPECT_NE(why.find("offset 4"), std::string::npos) << why;
  EXPECT_FALSE(DecodeBase64("Zm9vY", &why).has_value());
  EXPECT_NE(why.find("truncated"), std::string::npos) << why;
  EXPECT_FALSE(DecodeBase64("Zg==Zg", &why).has_value());
  EXPECT_NE(why.find("after '=' padding"), std::string::npos) << why;
}

}  // namespace
}  // namespace tessera
