#include "k8s/watch_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera {
namespace {

struct Seen {
  std::vector<std::string> types;
  std::vector<std::string> names;
};

WatchStream StreamInto(Seen& seen, int stop_after = -1) {
  return WatchStream("watch /api/v1/pods", "7", [&seen, stop_after](const WatchEvent& e) {
    seen.types.push_back(e.type);
    seen.names.push_back(
        e.object.value(nlohmann::json::json_pointer("/metadata/name"), std::string()));
    return stop_after < 0 || static_cast<int>(seen.types.size()) < stop_after;
  });
}

std::string Event(const std::string& type, const std::string& name, const std::string& version) {
  return R"({"type":")" + type + R"(","object":{"metadata":{"name":")" + name +
         R"(","resourceVersion":")" + version + R"("}}})";
}

TEST(WatchStream, EventsSplitAnywhereArriveWholeAndInOrder) {
  const std::string body = Event("ADDED", "a", "8") + "\n" + Event("MODIFIED", "b", "9") +
                           "\r\n\n" + Event("DELETED", "c", "10") + "\n";
  // Every way of cutting the body in two, and one byte at a time.
  for (size_t cut = 0; cut <= body.size(); ++cut) {
    Seen seen;
    WatchStream stream = StreamInto(seen);
    EXPECT_TRUE(stream.Feed(std::string_view(body).substr(0, cut)));
    EXPECT_TRUE(stream.Feed(std::string_view(body).substr(cut)));
    stream.Finish();
    ASSERT_FALSE(stream.error().has_value()) << cut;
    EXPECT_EQ(seen.types, (std::vector<std::string>{"ADDED", "MODIFIED", "DELETED"})) << cut;
    EXPECT_EQ(seen.names, (std::vector<std::string>{"a", "b", "c"})) << cut;
    EXPECT_EQ(stream.last_version(), "10");
  }
  Seen seen;
  WatchStream stream = StreamInto(seen);
  for (char c : body) ASSERT_TRUE(stream.Feed(std::string_view(&c, 1)));
  EXPECT_EQ(seen.types.size(), 3u);
}

TEST(WatchStream, ALastEventWithoutItsNewlineIsHandledAtTheEnd) {
  Seen seen;
  WatchStream stream = StreamInto(seen);
  EXPECT_TRUE(stream.Feed(Event("ADDED", "a", "8")));
  EXPECT_TRUE(seen.types.empty());
  stream.Finish();
  EXPECT_EQ(seen.names, std::vector<std::string>{"a"});
  EXPECT_EQ(stream.last_version(), "8");
}

TEST(WatchStream, NoEventKeepsTheVersionItStartedFrom) {
  Seen seen;
  WatchStream stream = StreamInto(seen);
  EXPECT_TRUE(stream.Feed("\n \n"));
  stream.Finish();
  EXPECT_FALSE(stream.error().has_value());
  EXPECT_EQ(stream.last_version(), "7");
}

TEST(WatchStream, TheCallerEndsItAndLaterChunksAreIgnored) {
  Seen seen;
  WatchStream stream = StreamInto(seen, 1);
  EXPECT_FALSE(stream.Feed(Event("ADDED", "a", "8") + "\n" + Event("ADDED", "b", "9") + "\n"));
  EXPECT_TRUE(stream.ended_by_caller());
  EXPECT_FALSE(stream.Feed(Event("ADDED", "c", "10") + "\n"));
  stream.Finish();
  EXPECT_EQ(seen.names, std::vector<std::string>{"a"});
  EXPECT_EQ(stream.last_version(), "8");
}

TEST(WatchStream, AnErrorEventIsTheStatusItCarries) {
  Seen seen;
  WatchStream stream = StreamInto(seen);
  EXPECT_FALSE(stream.Feed(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old resource version"}})"
      "\n"));
  ASSERT_TRUE(stream.error().has_value());
  EXPECT_EQ(stream.error()->code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(stream.error()->message(),
            "watch /api/v1/pods: HTTP 410: too old resource version (an ERROR event)");
  EXPECT_TRUE(seen.types.empty());

  WatchStream uncoded = StreamInto(seen);
  EXPECT_FALSE(uncoded.Feed(R"({"type":"ERROR","object":{"message":"gone"}})"
                            "\n"));
  EXPECT_EQ(uncoded.error()->message(), "watch /api/v1/pods: an ERROR event without a code: gone");
}

TEST(WatchStream, ALineThatIsNotAnEventIsQuoted) {
  for (const std::string line : {"not json", "[1,2]", R"({"object":{}})", R"({"type":3})"}) {
    Seen seen;
    WatchStream stream = StreamInto(seen);
    EXPECT_FALSE(stream.Feed(line + "\n")) << line;
    ASSERT_TRUE(stream.error().has_value()) << line;
    EXPECT_EQ(stream.error()->code(), StatusCode::kIoError);
    EXPECT_NE(stream.error()->message().find("is not a JSON object with a 'type'"),
              std::string::npos)
        << stream.error()->message();
  }
}

TEST(WatchStream, ALineLongerThanTheLimitIsRefused) {
  Seen seen;
  WatchStream stream = StreamInto(seen);
  const std::string chunk(1 << 20, 'x');
  bool more = true;
  size_t fed = 0;
  while (more && fed <= kMaxWatchLineBytes) {
    more = stream.Feed(chunk);
    fed += chunk.size();
  }
  EXPECT_FALSE(more);
  ASSERT_TRUE(stream.error().has_value());
  EXPECT_EQ(stream.error()->message(),
            "watch /api/v1/pods: a watch event is longer than 67108864 bytes");
}

}  // namespace
}  // namespace tessera
