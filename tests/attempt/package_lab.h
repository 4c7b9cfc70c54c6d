// A lab for a bundled scenario package on real worlds, black-box through the real binary: the
// package copied from the source tree (its path in an environment variable meson sets), signed
// by the lab's own publisher key and loaded by `aura setup`. Shared by the O1 and O2 tests.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tests/cli/cli_util.h"

namespace aura::testing {

// A plausible wrong fix: its actions (a JSON array), the verdict it must get, and the text of the
// first failing property the gate's JSON must hold ("property":"twin","status":"fail",...).
struct WrongFix {
  const char* what;
  std::string actions;
  const char* verdict;
  const char* failing;
};

class PackageLab {
 public:
  // REQUIRES the environment variable `env` to name the package's folder. `hypothesis` and
  // `probe` are what attempt() predicts and probes before it submits.
  PackageLab(const char* env, std::string scenario, std::string hypothesis, std::string probe);

  CliResult ok(std::vector<std::string> args, const CliOptions& options = {}) const {
    return lab.ok(std::move(args), options);
  }

  // A learner's attempt on `seed` up to its gate, with `ir` as the fix: predict, probe (so the
  // IR can cite ev-1), submit, authorise its scripts, apply, ack, verify, gate; then end it (its
  // live world goes). The gate's JSON line.
  // `live`, when given, runs after verify with the attempt's id, while its live world is up.
  std::string attempt(const std::string& ir, int seed,
                      const std::function<void(const std::string&)>& live = {}) const;
  // Each fix as a learner's attempt on `seed` with the IR `ir_of(actions)`, CHECKed to get its
  // verdict and failing property.
  void expect_refused(const std::vector<WrongFix>& fixes, int seed,
                      const std::function<std::string(const std::string&)>& ir_of) const;

  // Submits the IR in `ir_file`, applies it, acknowledges, verifies (CHECKs that the live world
  // recovered) and gates: the gate's verdict.
  std::string recover_and_gate(const std::string& id, const std::filesystem::path& ir_file) const;
  // CHECKs that `attempt receipt` is refused and writes no file.
  void no_receipt(const std::string& id) const;
  // CHECKs what the receipt in `path` binds of what ran (docs/formats/receipt.md, format 2): the
  // evidence the IR cites (ev-1), a real lab build digest, the world images, and a digest of
  // each of `programs` (paths inside the world). Returns its document.
  std::string check_bound(const std::filesystem::path& path,
                          const std::vector<std::string>& programs) const;

  Lab lab;
  const std::string scenario;

 private:
  const std::string hypothesis_, probe_;
};

// The O2 package's lab (AURA_O2_PACKAGE), its attempts predicting the broken folder and probing
// the app's log.
struct O2Lab : PackageLab {
  O2Lab()
      : PackageLab("AURA_O2_PACKAGE", "o2-service-chain", "untraversable-folder",
                   R"({"call":"service.log","params":{"name":"app"}})") {}
};

}  // namespace aura::testing
