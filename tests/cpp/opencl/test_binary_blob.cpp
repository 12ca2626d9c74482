// The program blob format, without a device.
#include <gtest/gtest.h>

#include "binary_blob.h"

namespace dcl {
namespace {

TEST(OpenCLBlob, RoundTripsEveryField) {
  BlobContents in;
  in.kind = BlobKind::kSource;
  in.options = "-cl-std=CL1.2 -DX=1";
  in.payload = {0, 1, 2, 255, 7};
  std::vector<unsigned char> bytes = pack_blob(in);
  BlobContents out;
  std::string why;
  ASSERT_TRUE(unpack_blob(bytes.data(), bytes.size(), &out, &why)) << why;
  EXPECT_EQ(out.kind, BlobKind::kSource);
  EXPECT_EQ(out.options, in.options);
  EXPECT_EQ(out.payload, in.payload);
}

TEST(OpenCLBlob, EveryTruncationIsDetected) {
  BlobContents in;
  in.options = "-O2";
  in.payload.assign(40, 9);
  std::vector<unsigned char> bytes = pack_blob(in);
  for (size_t n = 0; n < bytes.size(); ++n) {
    BlobContents out;
    std::string why;
    EXPECT_FALSE(unpack_blob(bytes.data(), n, &out, &why)) << n;
    EXPECT_FALSE(why.empty());
  }
  bytes.push_back(0);  // trailing garbage is corruption too
  BlobContents out;
  std::string why;
  EXPECT_FALSE(unpack_blob(bytes.data(), bytes.size(), &out, &why));
}

TEST(OpenCLBlob, UnknownKindIsRefused) {
  BlobContents in;
  std::vector<unsigned char> bytes = pack_blob(in);
  bytes[8] = 77;  // the kind field follows the 8-byte magic
  BlobContents out;
  std::string why;
  EXPECT_FALSE(unpack_blob(bytes.data(), bytes.size(), &out, &why));
  EXPECT_NE(why.find("77"), std::string::npos) << why;
}

}  // namespace
}  // namespace dcl
