// The durable checkpoint store (runtime/checkpoint_file_store.h, docs/CHECKPOINT.md): a real
// process killed with SIGKILL between a file's write and its rename leaves the previous complete
// checkpoint the newest one, readable by a new process (the restarted coordinator), and a
// coordinator started on that store goes on above the unfinished checkpoint's id.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "checkpoint/coordinator.h"
#include "runtime/checkpoint_file_store.h"

using namespace hapair;
namespace fs = std::filesystem;

namespace {

std::string fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("hapair-ckpt-store-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d.string();
}

Bytes state_of(CheckpointId id, std::uint8_t fragment) { return Bytes(1000 + id, static_cast<std::uint8_t>(fragment + id)); }

// In a child process: checkpoint 1 of fragments a and b complete, then checkpoint 2, killed by
// SIGKILL just before the rename of the file named `victim` ("b.snapshot" or "_manifest").
// Returns how the child ended.
int crash_during_second_checkpoint(const std::string& dir, const std::string& victim) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    FileCheckpointStore store(dir, [&](const std::string& path) {
      if (fs::path(path).filename() == victim && path.find("chk-2") != std::string::npos) ::raise(SIGKILL);
    });
    store.put_snapshot(1, "a", state_of(1, 0));
    store.put_snapshot(1, "b", state_of(1, 1));
    store.complete(1, {"a", "b"}, 2);
    store.put_snapshot(2, "a", state_of(2, 0));
    store.put_snapshot(2, "b", state_of(2, 1));
    store.complete(2, {"a", "b"}, 2);
    ::_exit(0);  // not reached when the victim's rename came
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

}  // namespace

TEST_CASE("local snapshot copies: a host's copy is seen by another process on that host, not on another host",
          "[runtime][checkpoint]") {
  const std::string dir = fresh_dir("local");
  FileLocalSnapshots writer(dir);  // the primary's process
  FileLocalSnapshots reader(dir);  // its spare's, started before any copy was written
  CheckpointStore& mine = writer.of("", "aggregate");
  CHECK(&mine == &writer.of("", "aggregate"));  // one store per (host, fragment)
  for (CheckpointId id = 1; id <= 3; ++id) {
    mine.put_snapshot(id, "aggregate", state_of(id, 7));
    CHECK(!reader.of("", "aggregate").snapshot(id, "aggregate"));  // not complete yet
    mine.complete(id, {"aggregate"}, 2);
  }
  mine.put_snapshot(4, "aggregate", state_of(4, 7));  // taken, its checkpoint not complete
  CHECK(reader.of("", "aggregate").snapshot(3, "aggregate") == state_of(3, 7));
  CHECK(reader.of("", "aggregate").completed() == std::vector<CheckpointId>{2, 3});
  CHECK(!reader.of("", "aggregate").snapshot(4, "aggregate"));
  // The one machine's directory, and another host's that holds nothing.
  CHECK(fs::is_directory(fs::path(dir) / FileLocalSnapshots::kThisHost / "aggregate"));
  CHECK(!reader.of("host-b", "aggregate").snapshot(3, "aggregate"));
  CHECK(!reader.of("", "filter").snapshot(3, "filter"));
  fs::remove_all(dir);
}

TEST_CASE("the file checkpoint store keeps complete checkpoints across processes and only the newest N",
          "[runtime][checkpoint]") {
  const std::string dir = fresh_dir("keep");
  {
    FileCheckpointStore store(dir);
    for (CheckpointId id = 1; id <= 3; ++id) {
      store.put_snapshot(id, "filter", state_of(id, 0));
      CHECK(!store.snapshot(id, "filter"));  // no manifest yet
      store.complete(id, {"filter"}, 2);
    }
    store.put_snapshot(4, "filter", state_of(4, 0));
  }
  FileCheckpointStore reopened(dir);
  CHECK(reopened.completed() == std::vector<CheckpointId>{2, 3});
  CHECK(reopened.snapshot(3, "filter") == state_of(3, 0));
  CHECK(!reopened.snapshot(4, "filter"));
  CHECK(reopened.highest_started() == 4);
  CHECK(!fs::exists(reopened.checkpoint_dir(1)));
  fs::remove_all(dir);
}

TEST_CASE("a SIGKILL between a snapshot's write and its rename leaves the previous checkpoint usable",
          "[runtime][checkpoint]") {
  const std::string dir = fresh_dir("snapshot-rename");
  const int status = crash_during_second_checkpoint(dir, "b.snapshot");
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(WTERMSIG(status) == SIGKILL);
  // The killed write is there, whole but under its temporary name; the manifest never came.
  CHECK(fs::exists(fs::path(dir) / "chk-2" / "b.snapshot.tmp"));
  FileCheckpointStore store(dir);
  CHECK(store.newest_complete() == 1u);
  CHECK(store.snapshot(1, "a") == state_of(1, 0));
  CHECK(store.snapshot(1, "b") == state_of(1, 1));
  CHECK(!store.snapshot(2, "a"));
  fs::remove_all(dir);
}

TEST_CASE("a SIGKILL between the manifest's write and its rename leaves the previous checkpoint usable, and the restarted coordinator goes on above it",
          "[runtime][checkpoint]") {
  const std::string dir = fresh_dir("manifest-rename");
  const int status = crash_during_second_checkpoint(dir, FileCheckpointStore::kManifest);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(WTERMSIG(status) == SIGKILL);
  CHECK(fs::exists(fs::path(dir) / "chk-2" / "b.snapshot"));  // every snapshot of 2 is in place
  CHECK(fs::exists(fs::path(dir) / "chk-2" / "_manifest.tmp"));
  FileCheckpointStore store(dir);
  CHECK(store.completed() == std::vector<CheckpointId>{1});
  CHECK(store.snapshot(1, "b") == state_of(1, 1));
  // The restarted coordinator rolls a failure back to 1 and numbers its next checkpoint 3.
  CoordinatorSettings settings;
  settings.interval_us = 1000;
  CheckpointCoordinator coordinator({{0, "a"}, {1, "b"}}, {}, settings, store);
  CoordinatorOutput out;
  coordinator.start(0, out);
  coordinator.tick(1000, out);
  CHECK(out.triggered == std::vector<CheckpointId>{3});
  coordinator.snapshot(1001, 0, 3, state_of(3, 0), out);
  coordinator.snapshot(1002, 1, 3, state_of(3, 1), out);
  CHECK(out.completed == std::vector<CheckpointId>{3});
  // Completing 3 removed the unfinished 2.
  CHECK(store.completed() == std::vector<CheckpointId>{1, 3});
  CHECK(!fs::exists(store.checkpoint_dir(2)));
  coordinator.fragment_failed(2000, 1, out);
  REQUIRE(out.rollbacks.size() == 1);
  CHECK(out.rollbacks[0].to == 3);
  fs::remove_all(dir);
}

TEST_CASE("a damaged manifest makes its checkpoint unusable and leaves the one before the newest", "[runtime][checkpoint]") {
  const std::string dir = fresh_dir("damaged");
  FileCheckpointStore store(dir);
  for (CheckpointId id = 1; id <= 2; ++id) {
    store.put_snapshot(id, "filter", state_of(id, 0));
    store.complete(id, {"filter"}, 2);
  }
  const fs::path manifest = fs::path(store.checkpoint_dir(2)) / FileCheckpointStore::kManifest;
  for (const std::string text : {"hapair checkpoint manifest 1\nid 2\nfragment ../filter 1002\nend\n",
                                 "hapair checkpoint manifest 1\nid 2\nfragment filter 1003\nend\n",  // wrong size
                                 "hapair checkpoint manifest 1\nid 2\nfragment filter 1002\n"}) {     // no end
    std::ofstream(manifest, std::ios::trunc) << text;
    CHECK(store.newest_complete() == 1u);
    CHECK(!store.snapshot(2, "filter"));
  }
  fs::remove_all(dir);
}
