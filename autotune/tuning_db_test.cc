#include "autotune/tuning_db.h"

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "autotune/atomic_file.h"
#include "autotune/test_folder.h"
#include "autotune/tuning_db.pb.h"
#include "autotune/tuning_db_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

// Status messages as std::string, so that failing matchers print them as text.
std::string Msg(const absl::Status& status) { return std::string(status.message()); }

using ::google::protobuf::util::MessageDifferencer;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Binary(const TuningDatabase& database) {
  absl::StatusOr<std::string> bytes = SerializeTuningDatabase(database, DatabaseFormat::kBinary);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.value_or("");
}

std::string Text(const TuningDatabase& database) {
  absl::StatusOr<std::string> text = SerializeTuningDatabase(database, DatabaseFormat::kText);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.value_or("");
}

// Parses bytes the way a file of that name would be read.
absl::Status ParseStatus(const std::string& bytes, DatabaseFormat format,
                         const std::string& origin = "test.db") {
  return ParseTuningDatabase(bytes, format, origin).status();
}

TEST(FormatForPathTest, TextOnlyForTextprotoAndTxtpb) {
  EXPECT_EQ(FormatForPath("a/b.textproto"), DatabaseFormat::kText);
  EXPECT_EQ(FormatForPath("b.txtpb"), DatabaseFormat::kText);
  EXPECT_EQ(FormatForPath("b.pb"), DatabaseFormat::kBinary);
  EXPECT_EQ(FormatForPath("b.txtpb.bak"), DatabaseFormat::kBinary);
  EXPECT_EQ(FormatForPath("txtpb"), DatabaseFormat::kBinary);
}

TEST(TuningDbTest, TextFileRoundTrips) {
  const std::string path = MakeTestFolder() + "/h200.txtpb";
  const TuningDatabase database = TestDatabase(3);
  ASSERT_TRUE(WriteTuningDatabase(database, path).ok());
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_THAT(*bytes, HasSubstr("schema_version: 1\n"));
  EXPECT_THAT(*bytes, HasSubstr("median_us: 10"));
  EXPECT_THAT(*bytes, HasSubstr("status: COMPILE_ERROR"));
  EXPECT_TRUE(absl::EndsWith(*bytes, "record_count: 4\n")) << *bytes;
  absl::StatusOr<TuningDatabase> read = ReadTuningDatabase(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(MessageDifferencer::Equals(*read, database)) << read->DebugString();
}

TEST(TuningDbTest, BinaryFileRoundTrips) {
  const std::string folder = MakeTestFolder();
  const std::string path = folder + "/h200.pb";
  const TuningDatabase database = TestDatabase(5);
  ASSERT_TRUE(WriteTuningDatabase(database, path).ok());
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_THAT(*bytes, Not(HasSubstr("schema_version")));  // not text
  absl::StatusOr<TuningDatabase> read = ReadTuningDatabase(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(MessageDifferencer::Equals(*read, database));
  EXPECT_THAT(ListFolder(folder), ElementsAre("h200.pb"));
}

TEST(TuningDbTest, WriteLeavesNoTemporaryFilesAndReplacesOldContents) {
  const std::string folder = MakeTestFolder();
  ASSERT_TRUE(WriteTuningDatabase(TestDatabase(4), folder + "/db.txtpb").ok());
  ASSERT_TRUE(WriteTuningDatabase(TestDatabase(1), folder + "/db.txtpb").ok());
  ASSERT_TRUE(WriteTuningDatabase(TestDatabase(2), folder + "/db.pb").ok());
  EXPECT_THAT(ListFolder(folder), ElementsAre("db.pb", "db.txtpb"));
  EXPECT_EQ(ReadTuningDatabase(folder + "/db.txtpb")->records_size(), 2);
}

TEST(TuningDbTest, WriteRefusesAnInvalidDatabaseAndCreatesNothing) {
  const std::string folder = MakeTestFolder();
  TuningDatabase database = TestDatabase(1);
  database.mutable_records(0)->mutable_device()->clear_name();
  absl::Status status = WriteTuningDatabase(database, folder + "/bad.pb");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("bad.pb"), HasSubstr("device.name")));
  EXPECT_TRUE(ListFolder(folder).empty());
}

TEST(TuningDbTest, SerializationStampsVersionAndCountAndIsDeterministic) {
  TuningDatabase database = TestDatabase(2);
  database.clear_schema_version();
  database.clear_record_count();
  TuningDatabase reordered = database;
  auto* annotations =
      reordered.mutable_records(0)->mutable_winner()->mutable_hints()->mutable_annotations();
  auto* original =
      database.mutable_records(0)->mutable_winner()->mutable_hints()->mutable_annotations();
  // The same map filled in two orders.
  for (int i = 0; i < 20; ++i) (*original)[absl::StrCat("k", i)] = "v";
  for (int i = 19; i >= 0; --i) (*annotations)[absl::StrCat("k", i)] = "v";
  EXPECT_EQ(Binary(database), Binary(reordered));
  EXPECT_EQ(Text(database), Text(reordered));
  absl::StatusOr<TuningDatabase> read =
      ParseTuningDatabase(Binary(database), DatabaseFormat::kBinary, "x");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->schema_version(), kCurrentSchemaVersion);
  EXPECT_EQ(read->record_count(), 3u);
}

TEST(TuningDbTest, SerializeRejectsAnOtherSchemaVersion) {
  TuningDatabase database = TestDatabase(1);
  database.set_schema_version(7);
  absl::StatusOr<std::string> bytes = SerializeTuningDatabase(database, DatabaseFormat::kBinary);
  EXPECT_FALSE(bytes.ok());
  EXPECT_THAT(Msg(bytes.status()), HasSubstr("schema_version 7"));
}

TEST(TuningDbTest, MissingFileIsNotFoundNamingThePath) {
  const std::string path = MakeTestFolder() + "/absent.txtpb";
  absl::StatusOr<TuningDatabase> read = ReadTuningDatabase(path);
  EXPECT_TRUE(absl::IsNotFound(read.status())) << read.status();
  EXPECT_THAT(Msg(read.status()), HasSubstr(path));
}

TEST(TuningDbTest, EmptyFileIsRejected) {
  absl::Status status = ParseStatus("", DatabaseFormat::kBinary, "empty.pb");
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("empty.pb"), HasSubstr("empty file")));
}

TEST(TuningDbTest, EveryTruncationOfABinaryFileIsRejected) {
  const std::string bytes = Binary(TestDatabase(3));
  ASSERT_TRUE(ParseStatus(bytes, DatabaseFormat::kBinary).ok());
  for (size_t size = 0; size < bytes.size(); ++size) {
    absl::Status status = ParseStatus(bytes.substr(0, size), DatabaseFormat::kBinary, "cut.pb");
    ASSERT_FALSE(status.ok()) << "a prefix of " << size << " of " << bytes.size()
                              << " bytes was accepted";
    ASSERT_THAT(Msg(status), HasSubstr("cut.pb"));
  }
}

TEST(TuningDbTest, EveryTruncationOfATextFileThatLosesContentIsRejected) {
  const std::string text = Text(TestDatabase(2));
  ASSERT_EQ(text.back(), '\n');
  // Dropping only the final newline loses nothing; any shorter prefix loses content.
  for (size_t size = 0; size + 1 < text.size(); ++size) {
    absl::Status status = ParseStatus(text.substr(0, size), DatabaseFormat::kText, "cut.txtpb");
    ASSERT_FALSE(status.ok()) << "a prefix of " << size << " bytes was accepted:\n"
                              << text.substr(0, size);
    ASSERT_THAT(Msg(status), HasSubstr("cut.txtpb"));
  }
}

TEST(TuningDbTest, TruncationAtARecordBoundaryIsCaughtByRecordCount) {
  const std::string text = Text(TestDatabase(2));
  const size_t last_record = text.rfind("records {");
  ASSERT_NE(last_record, std::string::npos);
  absl::Status status = ParseStatus(text.substr(0, last_record), DatabaseFormat::kText);
  EXPECT_THAT(Msg(status), HasSubstr("record_count is missing"));
  // Two records removed, the trailer kept: the count disagrees.
  TuningDatabase database = TestDatabase(2);
  database.mutable_records()->RemoveLast();
  database.set_record_count(3);
  std::string tampered;
  ASSERT_TRUE(database.SerializeToString(&tampered));
  status = ParseStatus(tampered, DatabaseFormat::kBinary);
  EXPECT_THAT(Msg(status), HasSubstr("record_count says 3 records but the file holds 2"));
}

TEST(TuningDbTest, GarbageBinaryIsRejectedAsUnparsable) {
  absl::Status status =
      ParseStatus("\xff\xff\xff\xff\x0f garbage", DatabaseFormat::kBinary, "junk.pb");
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("junk.pb"), HasSubstr("wire format does not parse")));
}

TEST(TuningDbTest, TextFileWithBinaryNameGetsAHint) {
  absl::Status status = ParseStatus(Text(TestDatabase(1)), DatabaseFormat::kBinary, "db.pb");
  EXPECT_THAT(Msg(status), HasSubstr("*.textproto or *.txtpb"));
}

TEST(TuningDbTest, TextParseErrorNamesLineAndColumn) {
  const std::string text =
      "schema_version: 1\n"
      "records {\n"
      "  device { name: \"NVIDIA H200\" cc_major: nine }\n"
      "}\n";
  absl::Status status = ParseStatus(text, DatabaseFormat::kText, "bad.txtpb");
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("bad.txtpb"), HasSubstr("line 3, column 42"),
                                 HasSubstr("not a text-format TuningDatabase")));
}

TEST(TuningDbTest, UnknownTextFieldIsAParseError) {
  std::string text = Text(TestDatabase(1));
  text = absl::StrReplaceAll(text, {{"schema_version: 1\n", "schema_version: 1\nshard: 3\n"}});
  absl::Status status = ParseStatus(text, DatabaseFormat::kText);
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("shard"), HasSubstr("line 4")));
}

TEST(TuningDbTest, NewerBinaryVersionIsRejectedClearly) {
  TuningDatabase database = TestDatabase(1);
  database.set_schema_version(2);
  std::string bytes;
  ASSERT_TRUE(database.SerializeToString(&bytes));
  absl::Status status = ParseStatus(bytes, DatabaseFormat::kBinary, "future.pb");
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("future.pb"), HasSubstr("schema_version 2 is newer"),
                                 HasSubstr("(1)")));
}

TEST(TuningDbTest, NewerTextVersionWithNewFieldsIsRejectedAsNewer) {
  const std::string text =
      "schema_version: 3\n"
      "field_added_in_version_3: \"x\"\n"
      "record_count: 0\n";
  absl::Status status = ParseStatus(text, DatabaseFormat::kText, "future.txtpb");
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(Msg(status), HasSubstr("schema_version 3 is newer"));
}

TEST(TuningDbTest, ForeignMessageIsRejected) {
  // A different message in the same file: its fields do not match TuningDatabase's.
  DeviceIdentity device;
  device.set_name("NVIDIA H200");
  device.set_cc_major(9);
  std::string bytes;
  ASSERT_TRUE(device.SerializeToString(&bytes));
  absl::Status status = ParseStatus(bytes, DatabaseFormat::kBinary, "foreign.pb");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("foreign.pb"), HasSubstr("schema_version is 0"),
                                 HasSubstr("tiletune tuning database")));
}

TEST(TuningDbTest, UnknownBinaryFieldsAreRejected) {
  std::string bytes = Binary(TestDatabase(1));
  bytes += std::string("\xb8\x06\x01", 3);  // field 103, varint 1
  absl::Status status = ParseStatus(bytes, DatabaseFormat::kBinary, "odd.pb");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(Msg(status), HasSubstr("field number 103 in TuningDatabase"));
}

TEST(TuningDbTest, UnknownNestedFieldIsNamedWithItsPlace) {
  TuningDatabase database = TestDatabase(1);
  database.mutable_records(0)
      ->mutable_winner()
      ->mutable_lowering()
      ->GetReflection()
      ->MutableUnknownFields(database.mutable_records(0)->mutable_winner()->mutable_lowering())
      ->AddVarint(40, 1);
  std::string bytes;
  ASSERT_TRUE(database.SerializeToString(&bytes));
  absl::Status status = ParseStatus(bytes, DatabaseFormat::kBinary);
  EXPECT_THAT(Msg(status), HasSubstr("field number 40 in records[0].winner.lowering"));
}

TEST(TuningDbTest, MissingRequiredFieldsAreListedWithTheirRecord) {
  TuningDatabase database = TestDatabase(2);
  database.mutable_records(1)->mutable_device()->clear_name();
  database.mutable_records(1)->clear_winner_statistics();
  database.mutable_records(2)->mutable_problem()->clear_im2col();
  std::string bytes;
  ASSERT_TRUE(database.SerializeToString(&bytes));
  absl::Status status = ParseStatus(bytes, DatabaseFormat::kBinary, "partial.pb");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(Msg(status),
              AllOf(HasSubstr("partial.pb: invalid tuning database"),
                    HasSubstr("record 1 (\"\" sm_9.0"), HasSubstr("device.name is empty"),
                    HasSubstr("winner_statistics is missing"), HasSubstr("record 2 ("),
                    HasSubstr("problem.im2col is missing"), Not(HasSubstr("record 0"))));
}

TEST(TuningDbTest, BadValuesNameTheAcceptedValues) {
  TuningDatabase database = TestDatabase(1);
  database.mutable_records(0)->mutable_winner()->mutable_hints()->set_eviction_policy(
      "evict_sometimes");
  database.mutable_records(1)->mutable_winner()->mutable_lowering()->set_path("tma");
  database.mutable_records(0)->mutable_problem()->set_op("transpose");
  absl::Status status = ValidateTuningDatabase(database, "db");
  EXPECT_THAT(Msg(status),
              AllOf(HasSubstr("eviction_policy is \"evict_sometimes\"; accepted: \"\", "
                              "\"evict_normal\", \"evict_first\", \"evict_last\""),
                    HasSubstr("path is \"tma\"; accepted for op \"im2col\": \"tma_im2col\", "
                              "\"simt_im2col\""),
                    HasSubstr("op is \"transpose\"; accepted: \"copy\", \"im2col\"")));
}

TEST(TuningDbTest, CandidateStatusMustBeKnown) {
  TuningDatabase database = TestDatabase(1);
  database.mutable_records(0)->mutable_candidates(1)->set_status(
      CandidateResult::STATUS_UNSPECIFIED);
  EXPECT_THAT(Msg(ValidateTuningDatabase(database, "db")), HasSubstr("candidates[1].status is 0"));
  database.mutable_records(0)->mutable_candidates(1)->set_status(
      static_cast<CandidateResult::Status>(42));
  EXPECT_THAT(Msg(ValidateTuningDatabase(database, "db")), HasSubstr("candidates[1].status is 42"));
}

TEST(TuningDbTest, InvalidUtf8IsRejectedInEitherFormatAndOnWrite) {
  // Text format accepts any bytes in a string, binary proto3 does not: a database that
  // could not be read back in the other format is invalid.
  std::string text = Text(TestDatabase(1));
  text = absl::StrReplaceAll(text, {{"name: \"NVIDIA H200\"", "name: \"NVIDIA \\377\""}});
  absl::Status status = ParseStatus(text, DatabaseFormat::kText, "bytes.txtpb");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(Msg(status), HasSubstr("records[0].device.name is not valid UTF-8"));

  TuningDatabase database = TestDatabase(1);
  (*database.mutable_records(1)->mutable_winner()->mutable_hints()->mutable_annotations())["k"] =
      "\xc0\x80";                                                              // an overlong NUL
  database.mutable_records(0)->mutable_provenance()->set_host("caf\xc3\xa9");  // fine
  status = WriteTuningDatabase(database, MakeTestFolder() + "/x.pb");
  EXPECT_THAT(Msg(status),
              HasSubstr("records[1].winner.hints.annotations[\"k\"].value is not valid UTF-8"));
  EXPECT_THAT(Msg(status), Not(HasSubstr("provenance")));
}

TEST(TuningDbTest, ManyProblemsAreSummarised) {
  TuningDatabase database = TestDatabase(20);
  for (TuningRecord& record : *database.mutable_records()) record.clear_winner();
  absl::Status status = ValidateTuningDatabase(database, "db");
  EXPECT_THAT(Msg(status), HasSubstr("and 13 more problems"));
}

TEST(TuningDbTest, DuplicateKeysAreRejected) {
  TuningDatabase database = TestDatabase(1);
  TuningRecord copy = database.records(0);
  copy.mutable_device()->set_uuid("GPU-another-board");
  copy.mutable_device()->set_driver_version("575.1");
  copy.mutable_winner_statistics()->set_median_us(3);
  // Explicit dense strides and zero offsets name the same problem as the defaults.
  copy.mutable_problem()->add_src_strides(1024);
  copy.mutable_problem()->add_src_strides(1);
  copy.mutable_problem()->add_dst_offset(0);
  copy.mutable_problem()->add_dst_offset(0);
  *database.add_records() = copy;
  database.set_record_count(3);
  std::string bytes;
  ASSERT_TRUE(database.SerializeToString(&bytes));
  absl::Status status = ParseStatus(bytes, DatabaseFormat::kBinary, "dup.pb");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("dup.pb"), HasSubstr("record 2 ("),
                                 HasSubstr("duplicate of record 0")));
}

TEST(RecordKeyTest, IsTheDocumentedString) {
  TuningRecord record = TestRecord("NVIDIA H200", {1024, 2048}, 5);
  EXPECT_EQ(RecordKey(record),
            "\"NVIDIA H200\" sm_9.0 | \"copy\" \"f16\" shape=[1024,2048] "
            "src_strides=[2048,1] src_offset=[0,0] dst_strides=[2048,1] dst_offset=[0,0]");
  EXPECT_THAT(RecordKey(TestIm2colRecord(1)),
              HasSubstr("im2col=[n=8,h=56,w=56,c=64,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1,ph=1,"
                        "pw=1,block_m=128,block_k=64]"));
  // An im2col's destination is its [block_m, block_k] column matrix.
  EXPECT_THAT(RecordKey(TestIm2colRecord(1)),
              HasSubstr("dst_strides=[64,1] dst_offset=[0,0] im2col="));
}

TEST(RecordKeyTest, DependsOnModelAndProblemOnly) {
  const TuningRecord base = TestRecord("NVIDIA H200", {64, 64}, 5);
  const std::string key = RecordKey(base);
  TuningRecord other = base;
  other.mutable_device()->set_uuid("GPU-ffff");
  other.mutable_device()->set_driver_version("1.0");
  other.mutable_device()->set_sm_count(1);
  other.mutable_winner_statistics()->set_median_us(1);
  other.clear_candidates();
  EXPECT_EQ(RecordKey(other), key);

  auto changed = [&](auto mutate) {
    TuningRecord copy = base;
    mutate(&copy);
    return RecordKey(copy);
  };
  EXPECT_NE(changed([](TuningRecord* r) { r->mutable_device()->set_name("NVIDIA H100"); }), key);
  EXPECT_NE(changed([](TuningRecord* r) { r->mutable_device()->set_cc_minor(1); }), key);
  EXPECT_NE(changed([](TuningRecord* r) { r->mutable_problem()->set_dtype("f32"); }), key);
  EXPECT_NE(changed([](TuningRecord* r) { r->mutable_problem()->set_shape(1, 65); }), key);
  EXPECT_NE(changed([](TuningRecord* r) {
              r->mutable_problem()->add_src_strides(128);
              r->mutable_problem()->add_src_strides(1);
            }),
            key);
  EXPECT_NE(changed([](TuningRecord* r) {
              r->mutable_problem()->add_dst_offset(0);
              r->mutable_problem()->add_dst_offset(64);
            }),
            key);
}

TEST(RecordKeyTest, QuotingKeepsKeysUnambiguous) {
  TuningRecord a = TestRecord("gpu\" sm_9.0 | x", {1}, 1);
  TuningRecord b = TestRecord("gpu", {1}, 1);
  EXPECT_NE(RecordKey(a), RecordKey(b));
  EXPECT_THAT(RecordKey(a), HasSubstr("\"gpu\\\" sm_9.0 | x\""));
}

TEST(CompareVariantsTest, IsATotalOrderOverAllFields) {
  const Variant base = TestVariant("tma");
  EXPECT_EQ(CompareVariants(base, base), 0);
  for (int field = 0; field < 8; ++field) {
    Variant v = base;
    switch (field) {
      case 0:
        v.mutable_lowering()->set_threads(256);
        break;
      case 1:
        v.mutable_lowering()->set_stages(4);
        break;
      case 2:
        v.mutable_lowering()->set_tile(0, 65);
        break;
      case 3:
        v.mutable_hints()->set_disable_tma(true);
        break;
      case 4:
        v.mutable_hints()->set_loop_layout("row");
        break;
      case 5:
        (*v.mutable_hints()->mutable_annotations())["k"] = "v";
        break;
      case 6:
        v.set_source_sha256("f");
        break;
      case 7:
        v.mutable_lowering()->set_ctas_per_sm(2);
        break;
    }
    EXPECT_NE(CompareVariants(base, v), 0) << field;
    EXPECT_EQ(CompareVariants(base, v), -CompareVariants(v, base)) << field;
  }
  // Numeric fields compare as numbers, not as text.
  Variant small = base, large = base;
  small.mutable_lowering()->set_threads(64);
  large.mutable_lowering()->set_threads(128);
  EXPECT_LT(CompareVariants(small, large), 0);
}

TEST(CompareVariantsTest, AnnotationInsertionOrderDoesNotMatter) {
  Variant a = TestVariant("tma"), b = TestVariant("tma");
  (*a.mutable_hints()->mutable_annotations())["x"] = "1";
  (*a.mutable_hints()->mutable_annotations())["y"] = "2";
  (*b.mutable_hints()->mutable_annotations())["y"] = "2";
  (*b.mutable_hints()->mutable_annotations())["x"] = "1";
  EXPECT_EQ(CompareVariants(a, b), 0);
  EXPECT_EQ(DescribeVariant(a), DescribeVariant(b));
}

TEST(DescribeVariantTest, NamesTheDefiningChoices) {
  EXPECT_EQ(DescribeVariant(TestVariant("tma", 128, 2)),
            "tma tile=[64,128] threads=128 stages=2 vec=16B smem evict_first swizzle=128B "
            "src=tttttttttttt");
  EXPECT_EQ(DescribeVariant(Variant()), "(no lowering)");
}

TEST(CandidateStatusNameTest, NamesKnownAndUnknownValues) {
  EXPECT_EQ(CandidateStatusName(CandidateResult::REJECTED_CACHE_ARTEFACT),
            "REJECTED_CACHE_ARTEFACT");
  EXPECT_EQ(CandidateStatusName(static_cast<CandidateResult::Status>(99)), "STATUS_99");
}

// --- Schema upgrades -------------------------------------------------------------------

absl::Status StepOneToTwo(TuningDatabase* database) {
  database->mutable_records(0)->mutable_provenance()->set_tool_version("upgraded to 2");
  return absl::OkStatus();
}
absl::Status StepTwoToThree(TuningDatabase* database) {
  // Runs after StepOneToTwo: sees its change.
  TuningRecord* record = database->mutable_records(0);
  record->mutable_provenance()->set_tool_version(
      absl::StrCat(record->provenance().tool_version(), ", then 3"));
  return absl::OkStatus();
}
absl::Status FailingStep(TuningDatabase*) { return absl::DataLossError("field gone"); }

TEST(UpgradeTest, CurrentVersionIsLeftAsItIs) {
  TuningDatabase database = TestDatabase(1);
  const TuningDatabase before = database;
  ASSERT_TRUE(UpgradeTuningDatabase(&database).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(database, before));
}

TEST(UpgradeTest, AppliesStepsInOrderAndSetsVersions) {
  TuningDatabase database = TestDatabase(1);
  const SchemaUpgrade steps[] = {{2, &StepTwoToThree}, {1, &StepOneToTwo}};
  ASSERT_TRUE(UpgradeTuningDatabaseWith(&database, steps, 3).ok());
  EXPECT_EQ(database.schema_version(), 3);
  EXPECT_EQ(database.records(0).provenance().tool_version(), "upgraded to 2, then 3");
}

TEST(UpgradeTest, MissingOrFailingStepIsAnError) {
  TuningDatabase database = TestDatabase(1);
  const SchemaUpgrade only_first[] = {{1, &StepOneToTwo}};
  absl::Status status = UpgradeTuningDatabaseWith(&database, only_first, 3);
  EXPECT_THAT(Msg(status), HasSubstr("no upgrade step from schema_version 2 to 3"));

  database = TestDatabase(1);
  const SchemaUpgrade failing[] = {{1, &FailingStep}};
  status = UpgradeTuningDatabaseWith(&database, failing, 2);
  EXPECT_TRUE(absl::IsDataLoss(status));
  EXPECT_THAT(Msg(status), HasSubstr("upgrading schema_version 1 to 2: field gone"));
  EXPECT_EQ(database.schema_version(), 1);
}

TEST(UpgradeTest, NewerAndMissingVersionsAreRejected) {
  TuningDatabase database = TestDatabase(1);
  database.set_schema_version(kCurrentSchemaVersion + 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(UpgradeTuningDatabase(&database)));
  database.set_schema_version(0);
  absl::Status status = UpgradeTuningDatabase(&database);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(Msg(status), HasSubstr("accepted versions are 1 to 1"));
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune
