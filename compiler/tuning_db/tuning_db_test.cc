#include "compiler/tuning_db/tuning_db.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/base/test_folder.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "compiler/tuning_db/tuning_db_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace tuning {
namespace {

// Status messages as std::string, so that failing matchers print them as text.
std::string Msg(const absl::Status& status) { return std::string(status.message()); }

using ::google::protobuf::util::MessageDifferencer;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Restamps the trailer of a database edited in a test, so that only the edit is wrong.
TuningDatabase Sealed(TuningDatabase database) {
  database.set_record_count(database.records_size());
  database.set_records_sha256(RecordsSha256(database));
  return database;
}

std::string Raw(const TuningDatabase& database) {
  std::string bytes;
  EXPECT_TRUE(database.SerializeToString(&bytes));
  return bytes;
}

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
  EXPECT_THAT(*bytes, HasSubstr(absl::StrCat("schema_version: ", kCurrentSchemaVersion, "\n")));
  EXPECT_THAT(*bytes, HasSubstr("median_us: 10"));
  EXPECT_THAT(*bytes, HasSubstr("status: COMPILE_ERROR"));
  EXPECT_THAT(*bytes, HasSubstr("problem {\n    dtype: \"f16\"\n    copy {\n"));
  EXPECT_TRUE(absl::EndsWith(
      *bytes, absl::StrCat("record_count: 4\nrecords_sha256: \"", RecordsSha256(database), "\"\n")))
      << *bytes;
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
  status = ParseStatus(Raw(database), DatabaseFormat::kBinary);
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

// Issue 34: a binary database named .txtpb got "schema_version is 0" and no hint.
TEST(TuningDbTest, BinaryFileWithTextNameGetsAHint) {
  std::string bytes;
  ASSERT_TRUE(TestDatabase(2).SerializeToString(&bytes));
  absl::Status status = ParseTuningDatabase(bytes, DatabaseFormat::kText, "db.txtpb").status();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("db.txtpb: not a text-format TuningDatabase: it holds binary data"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("e.g. *.pb"));
}

TEST(TuningDbTest, TextParseErrorNamesLineAndColumn) {
  const std::string text =
      "schema_version: 2\n"
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
  const std::string version = absl::StrCat("schema_version: ", kCurrentSchemaVersion, "\n");
  text = absl::StrReplaceAll(text, {{version, version + "shard: 3\n"}});
  absl::Status status = ParseStatus(text, DatabaseFormat::kText);
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("shard"), HasSubstr("line 4")));
}

TEST(TuningDbTest, NewerBinaryVersionIsRejectedClearly) {
  TuningDatabase database = TestDatabase(1);
  database.set_schema_version(kCurrentSchemaVersion + 1);
  absl::Status status = ParseStatus(Raw(database), DatabaseFormat::kBinary, "future.pb");
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(Msg(status),
              AllOf(HasSubstr("future.pb"),
                    HasSubstr(absl::StrCat("schema_version ", kCurrentSchemaVersion + 1,
                                           " is newer")),
                    HasSubstr(absl::StrCat("(", kCurrentSchemaVersion, ")"))));
}

TEST(TuningDbTest, NewerTextVersionWithNewFieldsIsRejectedAsNewer) {
  const std::string text = absl::StrCat("schema_version: ", kCurrentSchemaVersion + 1,
                                        "\nfield_added_later: \"x\"\nrecord_count: 0\n");
  absl::Status status = ParseStatus(text, DatabaseFormat::kText, "future.txtpb");
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(Msg(status),
              HasSubstr(absl::StrCat("schema_version ", kCurrentSchemaVersion + 1, " is newer")));
}

TEST(TuningDbTest, TextVersionIsReadInEveryIntegerNotation) {
  // The text format writes integers in decimal, hex or octal; the version scanner too.
  for (const char* version : {"0x7", "07", "7"}) {
    const std::string text = absl::StrCat("schema_version: ", version, "\nrecord_count: 0\n");
    absl::Status status = ParseStatus(text, DatabaseFormat::kText, "future.txtpb");
    EXPECT_TRUE(absl::IsFailedPrecondition(status)) << version << ": " << status;
  }
  for (const char* version : {"0x", "09", "3a", "99999999999999999999"}) {
    const std::string text = absl::StrCat("schema_version: ", version, "\n");
    EXPECT_THAT(Msg(ParseStatus(text, DatabaseFormat::kText, "bad.txtpb")),
                HasSubstr("schema_version is not an integer"))
        << version;
  }
}

TEST(TuningDbTest, SchemaTwoFilesReadAsCurrent) {
  // Version 3 only added an operator (col2im): a version-2 file reads unchanged.
  TuningDatabase database = TestDatabase(2);
  database.set_schema_version(2);
  database.set_record_count(database.records_size());
  database.set_records_sha256(RecordsSha256(database));
  std::string bytes;
  ASSERT_TRUE(database.SerializeToString(&bytes));
  absl::StatusOr<TuningDatabase> read =
      ParseTuningDatabase(bytes, DatabaseFormat::kBinary, "v2.pb");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->schema_version(), kCurrentSchemaVersion);
  EXPECT_EQ(read->records_size(), database.records_size());
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
  absl::Status status = ParseStatus(Raw(Sealed(database)), DatabaseFormat::kBinary, "partial.pb");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(Msg(status),
              AllOf(HasSubstr("partial.pb: invalid tuning database"),
                    HasSubstr("record 1 (\"\" sm_9.0"), HasSubstr("device.name is empty"),
                    HasSubstr("winner_statistics is missing"), HasSubstr("record 2 ("),
                    HasSubstr("problem has no operator; give one of copy { ... }, im2col { ... }"),
                    Not(HasSubstr("record 0"))));
}

TEST(TuningDbTest, BadValuesNameTheAcceptedValues) {
  TuningDatabase database = TestDatabase(1);
  database.mutable_records(0)->mutable_winner()->mutable_hints()->set_eviction_policy(
      "evict_sometimes");
  database.mutable_records(1)->mutable_problem()->mutable_im2col()->set_kh(-3);
  database.mutable_records(0)->mutable_problem()->mutable_copy()->add_shape(1);
  for (int i = 0; i < 7; ++i) {
    database.mutable_records(0)->mutable_winner()->mutable_lowering()->add_tile(1);
  }
  absl::Status status = ValidateTuningDatabase(database, "db");
  EXPECT_THAT(Msg(status),
              AllOf(HasSubstr("eviction_policy is \"evict_sometimes\"; accepted: \"\", "
                              "\"evict_normal\", \"evict_first\", \"evict_last\""),
                    HasSubstr("problem.im2col.kh is -3; it must be >= 0"),
                    HasSubstr("winner.lowering.tile has 9 entries; at most 8 are accepted")));
}

TEST(TuningDbTest, SemanticsAreCheckedOnRecordsTheSchemaAccepts) {
  TuningDatabase database = TestDatabase(2);
  int calls = 0;
  RecordValidator semantics = [&calls](const TuningRecord& record) {
    ++calls;
    if (OperatorName(record.problem()) == "im2col" && record.winner().lowering().path() == "tma") {
      return absl::InvalidArgumentError("im2col has no path \"tma\"");
    }
    return absl::OkStatus();
  };
  EXPECT_TRUE(ValidateTuningDatabase(database, "db", semantics).ok());
  EXPECT_EQ(calls, 3);
  database.mutable_records(2)->mutable_winner()->mutable_lowering()->set_path("tma");
  database.mutable_records(0)->clear_winner();  // a schema fault: semantics not asked
  calls = 0;
  absl::Status status = ValidateTuningDatabase(database, "db", semantics);
  EXPECT_EQ(calls, 2);
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("record 2 (\"NVIDIA H200\" sm_9.0 | \"im2col\""),
                                 HasSubstr("im2col has no path \"tma\""),
                                 HasSubstr("record 0"), HasSubstr("winner is missing")));
  // Reads and writes ask the same question.
  EXPECT_THAT(Msg(ParseTuningDatabase(Raw(Sealed(database)), DatabaseFormat::kBinary, "x.pb",
                                      {semantics})
                      .status()),
              HasSubstr("im2col has no path"));
  EXPECT_THAT(Msg(SerializeTuningDatabase(database, DatabaseFormat::kText, semantics).status()),
              HasSubstr("im2col has no path"));
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
  // Another board of the same model, measured at another time: the same key.
  copy.mutable_device()->set_uuid("GPU-another-board");
  copy.mutable_device()->set_driver_version("575.1");
  copy.mutable_winner_statistics()->set_median_us(3);
  *database.add_records() = copy;
  absl::Status status = ParseStatus(Raw(Sealed(database)), DatabaseFormat::kBinary, "dup.pb");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("dup.pb"), HasSubstr("record 2 ("),
                                 HasSubstr("duplicate of record 0")));
}

TEST(RecordKeyTest, IsTheDocumentedString) {
  TuningRecord record = TestRecord("NVIDIA H200", {1024, 2048}, 5);
  EXPECT_EQ(RecordKey(record),
            "\"NVIDIA H200\" sm_9.0 | \"copy\" \"f16\" shape=[1024,2048] "
            "src_strides=[2048,1] src_offset=[0,0] dst_strides=[2048,1] dst_offset=[0,0]");
  EXPECT_EQ(RecordKey(TestIm2colRecord(1)),
            "\"NVIDIA H200\" sm_9.0 | \"im2col\" \"bf16\" n=8 h=56 w=56 c=64 kh=3 kw=3 sh=1 "
            "sw=1 dh=1 dw=1 ph=1 pw=1 img_strides=[200704,3584,64,1]");
  // An enum choice appears when it is not its default (the behaviour before it existed).
  TuningRecord unfold = TestIm2colRecord(1);
  unfold.mutable_problem()->mutable_im2col()->set_col_order(tuning::COLUMN_ORDER_CHANNEL_ROWS);
  EXPECT_THAT(RecordKey(unfold), testing::EndsWith("img_strides=[200704,3584,64,1] col_order=1"));
  // Fields left at their default are written too: keys do not depend on what a writer
  // chose to leave out.
  TuningRecord zero_pad = TestIm2colRecord(1);
  zero_pad.mutable_problem()->mutable_im2col()->set_ph(0);
  EXPECT_THAT(RecordKey(zero_pad), HasSubstr(" ph=0 pw=1 "));
  TuningRecord none = TestIm2colRecord(1);
  none.mutable_problem()->clear_im2col();
  EXPECT_THAT(RecordKey(none), HasSubstr("(no operator) \"bf16\""));
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
  EXPECT_NE(
      changed([](TuningRecord* r) { r->mutable_problem()->mutable_copy()->set_shape(1, 65); }),
      key);
  EXPECT_NE(changed([](TuningRecord* r) {
              r->mutable_problem()->mutable_copy()->set_src_strides(0, 128);
            }),
            key);
  EXPECT_NE(changed([](TuningRecord* r) {
              r->mutable_problem()->mutable_copy()->set_dst_offset(1, 64);
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
  for (int field = 0; field < 9; ++field) {
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
      case 8:
        v.mutable_lowering()->set_form("staged");
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
  Variant annotated = TestVariant("tma", 128, 2);
  (*annotated.mutable_hints()->mutable_annotations())["swizzle"] = "128B";
  EXPECT_EQ(DescribeVariant(annotated),
            "tma tile=[64,128] threads=128 stages=2 vec=16B smem evict_first swizzle=128B "
            "src=tttttttttttt");
  EXPECT_EQ(DescribeVariant(Variant()), "(no lowering)");
  Variant staged = TestVariant("simt_im2col", 256);
  staged.mutable_lowering()->set_form("staged");
  EXPECT_THAT(DescribeVariant(staged), ::testing::StartsWith("simt_im2col staged tile=[64,128]"));
}

TEST(CandidateStatusNameTest, NamesKnownAndUnknownValues) {
  EXPECT_EQ(CandidateStatusName(CandidateResult::REJECTED_CACHE_ARTEFACT),
            "REJECTED_CACHE_ARTEFACT");
  EXPECT_EQ(CandidateStatusName(static_cast<CandidateResult::Status>(99)), "STATUS_99");
}

// --- Integrity -------------------------------------------------------------------------

TEST(IntegrityTest, ACorruptRecordThatStillParsesFailsTheChecksum) {
  TuningDatabase database = TestDatabase(2);
  TuningDatabase tampered = database;
  tampered.mutable_records(1)->mutable_winner_statistics()->set_ceiling_gbps(16.43);
  tampered.mutable_records(0)->mutable_winner()->mutable_lowering()->set_tile(0, 2064);
  // The trailer as written for the original records.
  absl::Status status = ParseStatus(Raw(tampered), DatabaseFormat::kBinary, "flipped.pb");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("flipped.pb: records_sha256 does not match"),
                                 HasSubstr(RecordsSha256(tampered))));
  // Text too: editing a number by hand is caught, and the message says how to accept it.
  std::string text = Text(database);
  text = absl::StrReplaceAll(text, {{"median_us: 10\n", "median_us: 11\n"}});
  EXPECT_THAT(Msg(ParseStatus(text, DatabaseFormat::kText)), HasSubstr("set records_sha256"));
}

TEST(IntegrityTest, NoBitFlipOfABinaryDatabaseGivesAnotherDatabase) {
  const TuningDatabase database = TestDatabase(1);
  const std::string bytes = Binary(database);
  int rejected = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = bytes;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      absl::StatusOr<TuningDatabase> read =
          ParseTuningDatabase(flipped, DatabaseFormat::kBinary, "flipped.pb");
      if (!read.ok()) {
        ++rejected;
        continue;
      }
      // Only flips that leave the same message are accepted (a bool stored as 1 or 3).
      ASSERT_TRUE(MessageDifferencer::Equals(*read, database)) << "byte " << i << " bit " << bit;
    }
  }
  EXPECT_GT(rejected, static_cast<int>(bytes.size()) * 8 * 99 / 100);
}

TEST(IntegrityTest, MissingChecksumIsRejected) {
  TuningDatabase database = TestDatabase(1);
  database.clear_records_sha256();
  absl::Status status = ParseStatus(Raw(database), DatabaseFormat::kBinary);
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("records_sha256 is missing"),
                                 HasSubstr(RecordsSha256(database))));
}

TEST(IntegrityTest, DeepNestingIsRejectedWithoutRecursing) {
  std::string deep;
  for (int i = 0; i < 20000; ++i) deep += "x { ";
  absl::Status status = ParseStatus(deep, DatabaseFormat::kText, "deep.txtpb");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(Msg(status), AllOf(HasSubstr("deep.txtpb"), HasSubstr("nest deeper than 32")));
  // Inside a record, where the parser itself would recurse.
  std::string nested = "schema_version: 2\nrecords { device { ";
  for (int i = 0; i < 20000; ++i) nested += "name { ";
  status = ParseStatus(nested, DatabaseFormat::kText);
  EXPECT_THAT(Msg(status), HasSubstr("nest deeper than 32"));
  // Binary: groups nested 5000 deep (start-group tags of field 2, never closed).
  std::string binary = std::string("\x08\x02", 2) + std::string(5000, '\x13');
  EXPECT_FALSE(ParseStatus(binary, DatabaseFormat::kBinary).ok());
}

TEST(IntegrityTest, OversizedFilesAreRejectedBeforeReading) {
  const std::string path = MakeTestFolder() + "/huge.pb";
  {
    std::ofstream file(path);
    file << "x";
  }
  // A sparse file: 3 GiB on paper, nothing on disk, nothing read.
  ASSERT_EQ(::truncate(path.c_str(), int64_t{3} << 30), 0);
  absl::StatusOr<TuningDatabase> read = ReadTuningDatabase(path);
  EXPECT_TRUE(absl::IsInvalidArgument(read.status())) << read.status();
  EXPECT_THAT(Msg(read.status()), AllOf(HasSubstr("huge.pb"), HasSubstr("3221225472 bytes"),
                                        HasSubstr("too large for a tuning database")));
  // A device that never ends is cut off at the limit.
  read = ReadTuningDatabase("/dev/zero");
  EXPECT_TRUE(absl::IsInvalidArgument(read.status())) << read.status();
  EXPECT_THAT(Msg(read.status()), HasSubstr("more than"));
}

// --- Schema 1 --------------------------------------------------------------------------

TEST(SchemaOneTest, TextFilesAreUpgradedToCanonicalProblems) {
  std::vector<std::string> notes;
  ReadOptions options;
  options.notes = &notes;
  absl::StatusOr<TuningDatabase> read =
      ReadTuningDatabase("compiler/tuning_db/testdata/v1_h200_a.txtpb", options);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->schema_version(), kCurrentSchemaVersion);
  ASSERT_EQ(read->records_size(), 2);
  const Problem& problem = read->records(0).problem();
  EXPECT_EQ(OperatorName(problem), "copy");
  EXPECT_EQ(problem.dtype(), "f16");
  EXPECT_THAT(problem.copy().shape(), ElementsAre(8192, 8192));
  EXPECT_THAT(problem.copy().src_strides(), ElementsAre(8192, 1));
  EXPECT_THAT(problem.copy().dst_offset(), ElementsAre(0, 0));
  EXPECT_EQ(read->records(0).winner().lowering().path(), "tma");
  EXPECT_EQ(read->records(0).winner_statistics().median_us(), 70.5);
  EXPECT_EQ(read->records_sha256(), RecordsSha256(*read));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], AllOf(HasSubstr(absl::StrCat("v1_h200_a.txtpb: schema 1, upgraded to ",
                                                       kCurrentSchemaVersion)),
                              HasSubstr("no records_sha256")));
  // Written back, it is a schema-2 file that reads without a note.
  const std::string path = MakeTestFolder() + "/v2.txtpb";
  ASSERT_TRUE(WriteTuningDatabase(*read, path).ok());
  notes.clear();
  absl::StatusOr<TuningDatabase> again = ReadTuningDatabase(path, options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(MessageDifferencer::Equals(*again, *read));
  EXPECT_TRUE(notes.empty());
}

v1::TuningDatabase V1Database() {
  v1::TuningDatabase database;
  database.set_schema_version(1);
  v1::TuningRecord* record = database.add_records();
  record->mutable_device()->set_name("NVIDIA H200");
  record->mutable_device()->set_cc_major(9);
  v1::Problem* problem = record->mutable_problem();
  problem->set_op("im2col");
  problem->set_dtype("f16");
  for (int64_t e : {2, 5, 6, 3}) problem->add_shape(e);
  for (int64_t s : {120, 24, 4, 1}) problem->add_src_strides(s);  // a padded C
  v1::Im2colGeometry* g = problem->mutable_im2col();
  g->set_n(2);
  g->set_h(5);
  g->set_w(6);
  g->set_c(3);
  g->set_kh(3);
  g->set_kw(1);
  g->set_sh(1);
  g->set_sw(2);
  g->set_dh(1);
  g->set_dw(1);
  g->set_ph(1);
  g->set_block_m(2 * 5 * 3);
  g->set_block_k(9);
  record->mutable_winner()->mutable_lowering()->set_path("simt_im2col");
  record->mutable_winner()->mutable_lowering()->add_tile(30);
  record->mutable_winner()->mutable_hints()->set_eviction_policy("evict_first");
  record->mutable_winner_statistics()->set_median_us(2);
  record->mutable_winner_statistics()->set_sample_count(5);
  v1::CandidateResult* candidate = record->add_candidates();
  candidate->set_status(v1::CandidateResult::FAILED_VERIFICATION);
  candidate->set_detail("3 wrong bytes");
  record->mutable_provenance()->set_host("gpu-a");
  database.set_record_count(1);
  return database;
}

TEST(SchemaOneTest, BinaryFilesAreUpgradedFieldByField) {
  std::string bytes;
  ASSERT_TRUE(V1Database().SerializeToString(&bytes));
  absl::StatusOr<TuningDatabase> read =
      ParseTuningDatabase(bytes, DatabaseFormat::kBinary, "old.pb");
  ASSERT_TRUE(read.ok()) << read.status();
  const TuningRecord& record = read->records(0);
  const Im2colProblem& g = record.problem().im2col();
  EXPECT_EQ(g.n(), 2);
  EXPECT_EQ(g.kh(), 3);
  EXPECT_EQ(g.sw(), 2);
  EXPECT_EQ(g.ph(), 1);
  EXPECT_THAT(g.img_strides(), ElementsAre(120, 24, 4, 1));
  EXPECT_EQ(record.winner().hints().eviction_policy(), "evict_first");
  EXPECT_EQ(record.winner().lowering().form(), "");
  EXPECT_EQ(record.candidates(0).status(), CandidateResult::FAILED_VERIFICATION);
  EXPECT_EQ(record.candidates(0).detail(), "3 wrong bytes");
  EXPECT_EQ(record.provenance().host(), "gpu-a");
  // Dense strides where schema 1 left them out.
  v1::TuningDatabase dense = V1Database();
  dense.mutable_records(0)->mutable_problem()->clear_src_strides();
  ASSERT_TRUE(dense.SerializeToString(&bytes));
  read = ParseTuningDatabase(bytes, DatabaseFormat::kBinary, "old.pb");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_THAT(read->records(0).problem().im2col().img_strides(), ElementsAre(90, 18, 3, 1));
}

TEST(SchemaOneTest, CopiesWithOffsetsButNoStridesGetBuffersHoldingTheOffsets) {
  v1::TuningDatabase database;
  database.set_schema_version(1);
  v1::TuningRecord* record = database.add_records();
  record->mutable_device()->set_name("NVIDIA H200");
  record->mutable_device()->set_cc_major(9);
  v1::Problem* problem = record->mutable_problem();
  problem->set_op("copy");
  problem->set_dtype("f32");
  for (int64_t e : {4, 8}) problem->add_shape(e);
  for (int64_t o : {1, 2}) problem->add_src_offset(o);
  record->mutable_winner()->mutable_lowering()->set_path("sync_simt");
  record->mutable_winner_statistics()->set_median_us(1);
  record->mutable_winner_statistics()->set_sample_count(1);
  database.set_record_count(1);
  std::string bytes;
  ASSERT_TRUE(database.SerializeToString(&bytes));
  absl::StatusOr<TuningDatabase> read =
      ParseTuningDatabase(bytes, DatabaseFormat::kBinary, "old.pb");
  ASSERT_TRUE(read.ok()) << read.status();
  const CopyProblem& copy = read->records(0).problem().copy();
  EXPECT_THAT(copy.src_strides(), ElementsAre(10, 1));  // a [5, 10] buffer
  EXPECT_THAT(copy.src_offset(), ElementsAre(1, 2));
  EXPECT_THAT(copy.dst_strides(), ElementsAre(8, 1));
  EXPECT_THAT(copy.dst_offset(), ElementsAre(0, 0));
}

TEST(SchemaOneTest, TheirOwnFaultsAreReported) {
  v1::TuningDatabase database = V1Database();
  database.mutable_records(0)->mutable_problem()->set_op("transpose");
  std::string bytes;
  ASSERT_TRUE(database.SerializeToString(&bytes));
  EXPECT_THAT(Msg(ParseStatus(bytes, DatabaseFormat::kBinary, "old.pb")),
              HasSubstr("old.pb: schema-1 record 0: problem.op is \"transpose\"; schema 1 knew "
                        "\"copy\" and \"im2col\""));
  database = V1Database();
  database.set_record_count(4);
  ASSERT_TRUE(database.SerializeToString(&bytes));
  EXPECT_THAT(Msg(ParseStatus(bytes, DatabaseFormat::kBinary)),
              HasSubstr("record_count says 4 records but the file holds 1"));
  database = V1Database();
  database.mutable_records(0)->clear_device();
  ASSERT_TRUE(database.SerializeToString(&bytes));
  EXPECT_THAT(Msg(ParseStatus(bytes, DatabaseFormat::kBinary)), HasSubstr("device is missing"));
}

}  // namespace
}  // namespace tuning
}  // namespace tiletune
