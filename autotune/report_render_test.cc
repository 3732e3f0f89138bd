// The report's SVG rendered for real (rsvg-convert, Debian's librsvg2-bin, installed by
// third_party/setup.sh): the PNG has the size the SVG declares, and no text or mark leaves
// the canvas. The check renders the chart inside a wider frame and finds no ink outside
// the chart's own box.
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autotune/report.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db_test_util.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;  // width * height * 4
};

uint32_t BigEndian(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
         (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}

// An 8-bit RGB or RGBA, non-interlaced PNG (what rsvg-convert writes).
bool DecodePng(const std::string& png, Image& image, std::string& why) {
  if (png.size() < 8 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return why = "not a PNG", false;
  std::string idat;
  int channels = 0;
  for (size_t at = 8; at + 8 <= png.size();) {
    const uint32_t length = BigEndian(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (at + 12 + length > png.size()) return why = "truncated chunk", false;
    if (type == "IHDR") {
      image.width = static_cast<int>(BigEndian(png, at + 8));
      image.height = static_cast<int>(BigEndian(png, at + 12));
      const int depth = uint8_t(png[at + 16]), color = uint8_t(png[at + 17]);
      if (depth != 8 || (color != 2 && color != 6) || png[at + 20] != 0) {
        return why = absl::StrCat("unsupported PNG: depth ", depth, " color ", color), false;
      }
      channels = color == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, length);
    }
    at += 12 + length;
  }
  const size_t stride = static_cast<size_t>(image.width) * channels;
  std::vector<uint8_t> raw((stride + 1) * image.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_size != raw.size()) {
    return why = "bad image data", false;
  }
  std::vector<uint8_t> previous(stride, 0), row(stride);
  image.rgba.assign(static_cast<size_t>(image.width) * image.height * 4, 255);
  for (int y = 0; y < image.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= size_t(channels) ? row[i - channels] : 0, b = previous[i],
                c = i >= size_t(channels) ? previous[i - channels] : 0;
      int predicted = 0;
      switch (filter) {
        case 0: predicted = 0; break;
        case 1: predicted = a; break;
        case 2: predicted = b; break;
        case 3: predicted = (a + b) / 2; break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: return why = "bad filter", false;
      }
      row[i] = static_cast<uint8_t>(in[i] + predicted);
    }
    for (int x = 0; x < image.width; ++x) {
      for (int ch = 0; ch < channels; ++ch) {
        image.rgba[(size_t(y) * image.width + x) * 4 + ch] = row[size_t(x) * channels + ch];
      }
    }
    previous = row;
  }
  return true;
}

// Renders `svg` with rsvg-convert into `image`.
void Render(const std::string& svg, const std::string& name, Image& image) {
  const std::string folder = ::testing::TempDir();
  const std::string in = absl::StrCat(folder, "/", name, ".svg"), out = absl::StrCat(folder, "/", name, ".png");
  ASSERT_TRUE(tuning::WriteFileAtomically(in, svg).ok());
  const std::string command = absl::StrCat("rsvg-convert -o ", out, " ", in, " 2>&1");
  ASSERT_EQ(std::system(command.c_str()), 0)
      << "rsvg-convert failed or is missing: install librsvg2-bin (bash third_party/setup.sh)";
  absl::StatusOr<std::string> png = tuning::ReadFileToString(out);
  ASSERT_TRUE(png.ok()) << png.status();
  std::string why;
  ASSERT_TRUE(DecodePng(*png, image, why)) << why;
}

// The default suite's kinds of problems, 50 of them, with long names (5-D slices).
tuning::TuningDatabase FiftyProblems() {
  tuning::TuningDatabase database;
  database.set_schema_version(tuning::kCurrentSchemaVersion);
  const TileOpDefinition& copy = **BuiltinTileOps().Find("copy");
  for (int i = 0; i < 50; ++i) {
    tuning::TuningRecord record = tuning::TestRecord("NVIDIA H200", {8192, 8192}, 70.5);
    Buffer src = Buffer::RowMajor("src", DataType::kBF16, Scope::kGlobal, {8, 12, 1024, 66 + i, 3});
    Buffer dst = Buffer::RowMajor("dst", DataType::kBF16, Scope::kGlobal, {8, 12, 1024, 64, 3});
    CopyOp op{Region::Box(src, {0, 0, 0, 1, 0}, {8, 12, 1024, 64, 3}), Region::Whole(dst)};
    *record.mutable_problem() = *copy.ToProblem(op);
    record.mutable_winner_statistics()->set_gbps(1500 + 60 * i);
    record.mutable_winner_statistics()->set_ceiling_gbps(4000);
    tuning::CandidateResult* loser = record.add_candidates();
    *loser->mutable_variant() = tuning::TestVariant("sync_simt", 256);
    loser->mutable_statistics()->set_median_us(90);
    loser->mutable_statistics()->set_sample_count(5);
    loser->mutable_statistics()->set_gbps(1000 + 50 * i);
    loser->set_status(tuning::CandidateResult::OK);
    *database.add_records() = record;
  }
  return database;
}

TEST(ReportRenderTest, FiftyProblemsRenderAtTheirSizeWithNothingOffTheCanvas) {
  const std::string svg = RenderSvgChart(FiftyProblems(), BuiltinTileOps());
  const size_t w_at = svg.find("width=\"") + 7, h_at = svg.find("height=\"") + 8;
  const int width = std::stoi(svg.substr(w_at, svg.find('"', w_at) - w_at));
  const int height = std::stoi(svg.substr(h_at, svg.find('"', h_at) - h_at));
  Image image;
  Render(svg, "chart", image);
  EXPECT_EQ(image.width, width);
  EXPECT_EQ(image.height, height);
  EXPECT_LT(height, 1400);
  EXPECT_LT(width, 1700);
  std::printf("50 problems: %d x %d px\n", image.width, image.height);

  // The chart's contents drawn in a frame 200 units wider on every side, on a transparent
  // canvas (its white background is dropped): every inked pixel must fall inside the
  // chart's own box.
  constexpr int kFrame = 200;
  std::string inner = svg.substr(svg.find('\n') + 1);
  inner = inner.substr(0, inner.rfind("</svg>"));
  const std::string background = "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  ASSERT_NE(inner.find(background), std::string::npos);
  inner.erase(inner.find(background), background.size());
  const std::string framed = absl::StrCat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", width + 2 * kFrame, "\" height=\"",
      height + 2 * kFrame, "\" font-family=\"sans-serif\" font-size=\"11\">\n<g transform=\"translate(",
      kFrame, ",", kFrame, ")\">\n", inner, "</g>\n</svg>\n");
  Image wide;
  Render(framed, "framed", wide);
  ASSERT_EQ(wide.width, width + 2 * kFrame);
  int outside = 0, inside = 0;
  for (int y = 0; y < wide.height; ++y) {
    for (int x = 0; x < wide.width; ++x) {
      const bool ink = wide.rgba[(size_t(y) * wide.width + x) * 4 + 3] > 0;
      const bool in_box = x >= kFrame && x < kFrame + width && y >= kFrame && y < kFrame + height;
      (in_box ? inside : outside) += ink;
    }
  }
  EXPECT_GT(inside, 10000) << "the chart drew almost nothing";
  EXPECT_EQ(outside, 0) << "pixels drawn outside the canvas (text or marks cut off)";
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune
