// The command line itself and `aura keys init`, as an operator first meets them.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <sstream>

#include "engine/events/event_types.h"
#include "tests/cli/cli_util.h"

using aura::testing::CliOptions;
using aura::testing::CliResult;
using aura::testing::Json;
using aura::testing::Lab;
using aura::testing::read_file;
using aura::testing::run_aura;
using aura::testing::TempDir;
using aura::testing::tree;
namespace fs = std::filesystem;

namespace {

// The command paths listed by `aura --help` ("log verify", "bench log", ...): the leading
// lower-case words of each line under "commands:", before the synopsis and the summary.
std::vector<std::string> listed_commands() {
  CliResult r = run_aura({"--help"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  std::vector<std::string> out;
  bool in_list = false;
  for (const auto& line : r.lines()) {
    if (line == "commands:") {
      in_list = true;
      continue;
    }
    if (!in_list || line.rfind("  ", 0) != 0) continue;
    std::string left = line.substr(2);
    left = left.substr(0, left.find("  "));  // the summary column
    std::istringstream words(left);
    std::string w, path;
    while (words >> w) {
      if (w.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") != std::string::npos) break;
      path += (path.empty() ? "" : " ") + w;
    }
    if (!path.empty()) out.push_back(path);
  }
  return out;
}

std::vector<std::string> words(const std::string& path, std::vector<std::string> more = {}) {
  std::vector<std::string> out;
  std::istringstream in(path);
  std::string w;
  while (in >> w) out.push_back(w);
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("aura --help lists every command and exits 0") {
  const auto commands = listed_commands();
  for (const char* expected :
       {"keys init", "blob put", "log append", "log head", "log verify", "log dump", "log tail",
        "log checkpoint", "log prove", "log consistency", "log check-proof", "log snapshot",
        "log restore", "bench log", "setup", "judge"}) {
    CHECK_MESSAGE(std::find(commands.begin(), commands.end(), expected) != commands.end(),
                  expected << " is not listed by aura --help");
  }
}

TEST_CASE(
    "--help works on every listed command, exits 0, names --data and --keys, and has "
    "no side effects") {
  TempDir cwd;
  const auto commands = listed_commands();
  REQUIRE(commands.size() >= 15);
  for (const auto& path : commands) {
    for (const char* help : {"--help", "-h"}) {
      CAPTURE(path);
      CAPTURE(help);
      CliResult r = run_aura(words(path, {help}), CliOptions{cwd.path()});
      CHECK_MESSAGE(r.exit_code == 0, r.describe());
      CHECK(r.out.find("usage: aura " + path) != std::string::npos);
      CHECK(r.out.find("--data") != std::string::npos);
      CHECK(r.out.find("--keys") != std::string::npos);
      CHECK(r.out.find("--json") != std::string::npos);
    }
  }
  // Not even `keys init --help` or `setup --help` may create var/keys or var/aura.
  CHECK(tree(cwd.path()).empty());
}

TEST_CASE(
    "--help of log append, scenario sign and setup says what is accepted, signed and recorded") {
  CliResult r = run_aura({"log", "append", "--help"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  for (const char* text :
       {"operator.NAME", "actor operator", "exit status 2", "nothing is appended"}) {
    CAPTURE(text);
    CHECK(r.out.find(text) != std::string::npos);
  }
  r = run_aura({"scenario", "sign", "--help"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  for (const char* text : {aura::events::kScenarioSigned, "--data", "default data folder"}) {
    CAPTURE(text);
    CHECK(r.out.find(text) != std::string::npos);
  }
  r = run_aura({"setup", "--help"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  for (const char* text : {"SHA256SUMS", "aura scenario sign DIR", aura::events::kScenarioSigned}) {
    CAPTURE(text);
    CHECK(r.out.find(text) != std::string::npos);
  }
}

TEST_CASE("--help after other flags and positionals still only prints help") {
  TempDir cwd;
  CliResult r = run_aura({"log", "prove", "7", "--data", "d", "--help"}, CliOptions{cwd.path()});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.out.find("usage: aura log prove SEQ") != std::string::npos);
  CHECK(tree(cwd.path()).empty());
}

TEST_CASE("an unknown option exits 2 and names the option") {
  for (const auto& path : listed_commands()) {
    CAPTURE(path);
    CliResult r = run_aura(words(path, {"--no-such-option"}));
    CHECK_MESSAGE(r.exit_code == 2, r.describe());
    CHECK(r.err.find("unknown option --no-such-option") != std::string::npos);
  }
}

TEST_CASE("a flag without its value, or a switch given a value, exits 2 naming the flag") {
  CliResult r = run_aura({"log", "verify", "--data"});
  CHECK_MESSAGE(r.exit_code == 2, r.describe());
  CHECK(r.err.find("--data") != std::string::npos);
  r = run_aura({"log", "head", "--json=yes"});
  CHECK_MESSAGE(r.exit_code == 2, r.describe());
  CHECK(r.err.find("--json") != std::string::npos);
}

TEST_CASE("wrong positional arguments exit 2 with the synopsis") {
  CliResult r = run_aura({"log", "prove"});
  CHECK_MESSAGE(r.exit_code == 2, r.describe());
  CHECK(r.err.find("SEQ") != std::string::npos);
  r = run_aura({"log", "head", "extra"});
  CHECK_MESSAGE(r.exit_code == 2, r.describe());
  r = run_aura({"log", "consistency", "3"});
  CHECK_MESSAGE(r.exit_code == 2, r.describe());
  CHECK(r.err.find("OLD_SIZE NEW_SIZE") != std::string::npos);
}

TEST_CASE("an unknown command exits 2 and names it") {
  CliResult r = run_aura({"frobnicate"});
  CHECK_MESSAGE(r.exit_code == 2, r.describe());
  CHECK(r.err.find("unknown command 'frobnicate'") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("an unknown subcommand of a known group exits 2 and names the subcommand") {
  CliResult r = run_aura({"log", "frobnicate"});
  CHECK_MESSAGE(r.exit_code == 2, r.describe());
  // The message must name what was not found, not the group that was.
  CHECK_MESSAGE(r.err.find("frobnicate") != std::string::npos, r.describe());
}

TEST_CASE("a mistyped command suggests the nearest, and lists the commands it belongs to") {
  struct Case {
    std::vector<std::string> args;
    std::string tried;
    std::string meant;
  };
  const std::vector<Case> cases = {
      {{"atempt", "start", "t0"}, "atempt start", "attempt start"},
      {{"attempt", "strat", "t0"}, "attempt strat", "attempt start"},
      {{"attempt", "catalgo", "0123456789abcdef"}, "attempt catalgo", "attempt catalog"},
      {{"attempt", "recipt", "0123456789abcdef"}, "attempt recipt", "attempt receipt"},
      {{"atempt", "predcit"}, "atempt predcit", "attempt predict"},
      {{"log", "verfy"}, "log verfy", "log verify"},
      {{"jugde", "O2"}, "jugde O2", "judge"},
      {{"scenaro"}, "scenaro", "scenario"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.tried);
    CliResult r = run_aura(c.args);
    CHECK_MESSAGE(r.exit_code == 2, r.describe());
    CHECK(r.err.find("unknown command '" + c.tried + "'; did you mean 'aura " + c.meant + "'?") !=
          std::string::npos);
  }
  // The overview that follows lists the valid subcommands of the group meant.
  CliResult r = run_aura({"attempt", "strat"});
  for (const char* sub : {"attempt start", "attempt catalog", "attempt probe", "attempt receipt"}) {
    CHECK(r.err.find("  " + std::string(sub)) != std::string::npos);
  }
  r = run_aura({"atempt", "strat"});
  CHECK(r.err.find("usage: aura attempt COMMAND") != std::string::npos);
  // Nothing near: no suggestion, the whole list.
  r = run_aura({"attempt", "frobnicate"});
  CHECK(r.err.find("did you mean") == std::string::npos);
  CHECK(r.err.find("  attempt catalog") != std::string::npos);
}

TEST_CASE("a mistyped option suggests the nearest option of that command") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"attempt", "predict", "0123456789abcdef", "--hypothesys", "x"},
       "unknown option --hypothesys; did you mean --hypothesis?"},
      {{"attempt", "start", "t0", "--lerner", "bob"},
       "unknown option --lerner; did you mean --learner?"},
      {{"attempt", "probe", "0123456789abcdef", "--call-fille", "f"},
       "unknown option --call-fille; did you mean --call-file?"},
      {{"log", "head", "--jsn"}, "unknown option --jsn; did you mean --json?"},
      {{"judge", "O2", "--seeds", "1"}, "unknown option --seeds; did you mean --seed?"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.message);
    CliResult r = run_aura(c.args);
    CHECK_MESSAGE(r.exit_code == 2, r.describe());
    CHECK(r.err.find(c.message) != std::string::npos);
  }
  CliResult r = run_aura({"log", "head", "--frobnicate"});
  CHECK(r.err.find("did you mean") == std::string::npos);
}

TEST_CASE("keys init creates lab.key 0600 and lab.pub, and prints the verifier key") {
  Lab lab(Lab::Keys::kNone);
  CliResult r = run_aura({"keys", "init", "--keys", lab.keys().string(), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(mode_of(lab.keys() / "lab.key") == 0600);
  CHECK(fs::is_regular_file(lab.keys() / "lab.pub"));
  CHECK((mode_of(lab.keys()) & 077) == 0);
  Json j(r.last_line());
  REQUIRE(j.ok());
  CHECK(j.boolean("ok") == true);
  REQUIRE(j.str("public_key").has_value());
  // The printed verifier key is the one in lab.pub.
  CHECK(read_file(lab.keys() / "lab.pub").find(*j.str("public_key")) != std::string::npos);
  // Nothing was created besides the keys folder.
  CHECK(tree(lab.root()) == std::vector<std::string>{"keys", "keys/lab.key", "keys/lab.pub"});
}

TEST_CASE("a second keys init refuses and keeps the existing key") {
  Lab lab;
  const std::string key = read_file(lab.keys() / "lab.key");
  const std::string pub = read_file(lab.keys() / "lab.pub");
  CliResult r = run_aura({"keys", "init", "--keys", lab.keys().string()});
  CHECK(r.exit_code != 0);
  CHECK_FALSE(r.signaled);
  CHECK(r.err.find("already exists") != std::string::npos);
  CHECK(read_file(lab.keys() / "lab.key") == key);
  CHECK(read_file(lab.keys() / "lab.pub") == pub);
}

TEST_CASE(
    "keys init refuses a keys folder inside the data folder, and the reverse, creating "
    "nothing") {
  TempDir dir;
  struct Case {
    fs::path data, keys;
  };
  for (const Case& c : {Case{dir / "d", dir / "d" / "keys"}, Case{dir / "k" / "data", dir / "k"},
                        Case{dir / "same", dir / "same"}, Case{dir / "x", dir / "x/./y/.."}}) {
    CAPTURE(c.data);
    CAPTURE(c.keys);
    CliResult r =
        run_aura({"keys", "init", "--data", c.data.string(), "--keys", c.keys.string(), "--json"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("overlap") != std::string::npos);
    CHECK(r.err.find("keep the keys folder outside the data folder") != std::string::npos);
    Json j(r.last_line());
    CHECK(j.boolean("ok") == false);
    CHECK(tree(dir.path()).empty());
  }
}

TEST_CASE("keys init refuses a keys folder that reaches the data folder through a symlink") {
  TempDir dir;
  fs::create_directories(dir / "data");
  fs::create_directory_symlink(dir / "data", dir / "link");
  CliResult r = run_aura({"keys", "init", "--data", (dir / "data").string(), "--keys",
                          (dir / "link" / "keys").string()});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("overlap") != std::string::npos);
  CHECK(tree(dir / "data").empty());
}

TEST_CASE("writing commands refuse overlapping --data and --keys before creating anything") {
  Lab lab;
  const fs::path data = lab / "d";
  const fs::path keys = data / "keys";
  for (auto args : std::vector<std::vector<std::string>>{
           {"log", "append", "--stream", "s", "--type", "operator.t"},
           {"log", "checkpoint"},
           {"log", "snapshot", "--out", (lab / "snap").string()},
           {"caps", "--json"}}) {
    args.insert(args.end(), {"--data", data.string(), "--keys", keys.string()});
    CAPTURE(args[1]);
    CliResult r = run_aura(args);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("overlap") != std::string::npos);
    CHECK_FALSE(fs::exists(data));
    CHECK_FALSE(fs::exists(lab / "snap"));
  }
}

TEST_CASE("the default folders are ./var/aura and ./var/keys") {
  TempDir cwd;
  CliOptions in_cwd{cwd.path()};
  REQUIRE(run_aura({"keys", "init"}, in_cwd).exit_code == 0);
  CHECK(fs::exists(cwd / "var/keys/lab.key"));
  CliResult r =
      run_aura({"log", "append", "--stream", "s", "--type", "operator.t", "--json"}, in_cwd);
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(fs::is_directory(cwd / "var/aura/log"));
  r = run_aura({"log", "verify", "--json"}, in_cwd);
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
}

TEST_CASE("a log command without keys says how to create them") {
  Lab lab(Lab::Keys::kNone);
  CliResult r = lab.aura({"log", "append", "--stream", "s", "--type", "operator.t"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("aura keys init") != std::string::npos);
  CHECK_FALSE(fs::exists(lab.data()));
  r = lab.aura({"log", "head"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no data folder") != std::string::npos);
}

TEST_CASE("an empty --data, --keys or --pubkey is refused with a message, not a crash") {
  Lab lab;
  lab.append("s", "operator.t", "{}");
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  CliResult proof = lab.aura({"log", "prove", "1"});
  REQUIRE(proof.exit_code == 0);
  aura::testing::write_file(lab / "p.json", proof.out);
  REQUIRE(lab.aura({"log", "snapshot", "--out", (lab / "snap").string()}).exit_code == 0);
  const std::string data = lab.data().string(), keys = lab.keys().string();
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"keys", "init", "--keys", "", "--data", (lab / "d2").string()},
           {"keys", "init", "--data", "", "--keys", (lab / "k2").string()},
           {"log", "append", "--data", "", "--keys", keys, "--stream", "s", "--type", "operator.t"},
           {"log", "verify", "--data", "", "--keys", keys},
           {"log", "verify", "--data", data, "--pubkey", ""},
           {"log", "check-proof", (lab / "p.json").string(), "--pubkey", ""},
           {"log", "restore", (lab / "snap").string(), "--data", "", "--keys", keys},
           {"caps", "--data", "", "--keys", keys}}) {
    std::string joined;
    for (const auto& a : args) joined += (a.empty() ? "''" : a) + " ";
    CAPTURE(joined);
    CliResult r = run_aura(args);
    CHECK_MESSAGE(!r.signaled, r.describe());
    CHECK(r.exit_code != 0);
    CHECK_FALSE(r.err.empty());
  }
}
