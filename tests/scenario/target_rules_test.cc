// The target rules every world driver shares (engine/scenario/target_rules.h): which term a
// target is, how many matches stand, and which paths stay inside a world.
#include "engine/scenario/target_rules.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace aura;
using namespace aura::scenario;

namespace {

TargetTerm term(std::string name, std::string kind, bool selector, uint32_t max_matches) {
  TargetTerm t;
  t.name = std::move(name);
  t.kind = std::move(kind);
  t.selector = selector;
  t.max_matches = max_matches;
  return t;
}

const Target kWeb{Target::Kind::kRole, "web"};
const Target kStale{Target::Kind::kSelector, "stale-app-root"};

}  // namespace

TEST_CASE("target rules: a target's term matches its name and its type") {
  const std::vector<TargetTerm> terms = {term("web", "node", false, 3),
                                         term("stale-app-root", "node", true, 3)};
  auto role = find_term(terms, kWeb);
  REQUIRE(role.ok());
  CHECK(*role == &terms[0]);
  auto selector = find_term(terms, kStale);
  REQUIRE(selector.ok());
  CHECK(*selector == &terms[1]);

  auto wrong_type = find_term(terms, Target{Target::Kind::kSelector, "web"});
  CHECK(wrong_type.status().code() == ErrorCode::kInvalidArgument);
  CHECK(wrong_type.status().message() == "selector web: not a target term of this scenario");
  CHECK_FALSE(find_term(terms, Target{Target::Kind::kRole, "db"}).ok());
  CHECK(find_term(terms, Target{Target::Kind::kLiteral, "web"}).status().message() ==
        "literal web: not a target term of this scenario");
}

TEST_CASE("target rules: zero matches is refused, naming the target and the kind") {
  std::vector<std::string> none;
  Status s = admit_matches(kStale, term("stale-app-root", "node", true, 3), none);
  CHECK(s.code() == ErrorCode::kNotFound);
  CHECK(s.message() == "selector stale-app-root resolved to no node in this world");
  CHECK(none.empty());
}

TEST_CASE("target rules: exactly max_matches stands; one more is refused, naming what matched") {
  const TargetTerm web = term("web", "node", false, 2);
  std::vector<std::string> two = {"web1", "web2"};
  CHECK(admit_matches(kWeb, web, two).is_ok());
  CHECK(two == std::vector<std::string>{"web1", "web2"});

  std::vector<std::string> three = {"web1", "web2", "web3"};
  Status s = admit_matches(kWeb, web, three);
  CHECK(s.code() == ErrorCode::kFailedPrecondition);
  CHECK(s.message() ==
        "role web resolved to 3 nodes (web1, web2, web3), more than its max_matches 2");
  CHECK(three.size() == 3);  // kept for the evidence

  std::vector<std::string> one = {"web1"};
  CHECK(admit_matches(kWeb, term("web", "node", false, 1), one).is_ok());
}

TEST_CASE("target rules: a thing matched twice counts once; the first order is kept") {
  const TargetTerm web = term("web", "node", false, 2);
  std::vector<std::string> dup = {"web2", "web1", "web2", "web1"};
  CHECK(admit_matches(kWeb, web, dup).is_ok());
  CHECK(dup == std::vector<std::string>{"web2", "web1"});

  std::vector<std::string> same = {"web3", "web3", "web3"};
  CHECK(admit_matches(kWeb, term("web", "node", false, 1), same).is_ok());
  CHECK(same == std::vector<std::string>{"web3"});

  std::vector<std::string> over = {"a", "b", "a", "c"};
  Status s = admit_matches(kStale, term("stale-app-root", "path", true, 2), over);
  CHECK(s.message() ==
        "selector stale-app-root resolved to 3 paths (a, b, c), more than its max_matches 2");
}

TEST_CASE("target rules: a path that escapes the world, or is not normalised, is refused") {
  CHECK(admit_path("path", "/").is_ok());
  CHECK(admit_path("path", "/fleet/host_vars/web2.conf").is_ok());
  CHECK(admit_path("path", "/srv/www/..data").is_ok());  // a name, not a parent
  for (const std::string& bad : std::vector<std::string>{
           "", "fleet/host_vars", "../etc/shadow", "/fleet/../../etc/shadow", "/..", "/fleet/./a",
           "/fleet//a", "/fleet/a/", std::string("/fleet/a\0b", 10), "/fleet/a\nb"}) {
    CAPTURE(bad);
    Status s = admit_path("path", bad);
    CHECK(s.code() == ErrorCode::kInvalidArgument);
    CHECK(s.message().find("is not a normalised absolute path") != std::string::npos);
    CHECK(s.message().starts_with("path: \""));
  }
  CHECK(admit_path("path", "/fleet/../etc/shadow").message() ==
        "path: \"/fleet/../etc/shadow\" is not a normalised absolute path");
}

TEST_CASE("target rules: labels name the target's type and name") {
  CHECK(target_label(kWeb) == "role web");
  CHECK(target_label(kStale) == "selector stale-app-root");
  CHECK(target_label(Target{Target::Kind::kLiteral, "web2"}) == "literal web2");
}
