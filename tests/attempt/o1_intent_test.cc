// O1's checks state the intent (issue 13, section 7): every web node serves the release the
// source of truth names, through the configuration it renders, and the source of truth still
// governs every node. Wrong fixes of the two families the guide names for O1 -- bypassing the
// source of truth, and weakening what it manages so a hand edit survives -- each as a learner's
// attempt on a real world through the real binary, refused by the catalog or by the property
// meant to refuse it; and right fixes other than gold, VERIFIED. Needs root, nginx, ansible and
// openssh (scripts/install-deps.sh).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tests/attempt/package_lab.h"
#include "tests/cli/cli_util.h"

using namespace aura::testing;
namespace fs = std::filesystem;

namespace {

constexpr const char* kO1 = "o1-fleet-drift";

struct O1Lab : PackageLab {
  O1Lab()
      : PackageLab("AURA_O1_PACKAGE", kO1, "stale-override",
                   R"({"call":"ansible.check","params":{"node":{"role":"control"}}})") {}
};

// An IR citing ev-1 with these actions, the scenario's checks and a rollback that undoes the
// control node's journal, every web node's, and converges again.
std::string ir(const std::string& actions) {
  return R"({"v":1,"hypothesis":"stale-override","claim":"A host_vars override pins one web node's app_root to a folder that is gone, so nginx there answers 404.","evidence":["ev-1"],"falsifier":"If the failing node's root existed, this would be wrong.","actions":)" +
         actions +
         R"(,"postconditions":["fleet-serves"],"invariants":["converge-holds","served-as-rendered","source-governs"],"rollback":[{"call":"journal.undo","params":{"node":{"role":"control"}}},{"call":"ansible.run","params":{"node":{"role":"control"}}}]})";
}

constexpr const char* kConverge = R"({"call":"ansible.run","params":{"node":{"role":"control"}}})";

// A call on the drifted web nodes, found by the node selector (so it reaches the twin's too).
std::string on_drifted(const std::string& call, const std::string& params) {
  return R"({"call":")" + call + R"(","params":{"node":{"selector":"nodes-root-missing"})" +
         (params.empty() ? "" : "," + params) + "}}";
}

std::string on_control(const std::string& call, const std::string& params) {
  return R"({"call":")" + call + R"(","params":{"node":{"role":"control"},)" + params + "}}";
}

const std::string kReload = on_drifted("nginx.reload", "");

// The site's server block for seed 0's fleet, written by hand.
constexpr const char* kHandBlock =
    R"(server { listen 80; server_name web1 web2 web3; root /srv/site/current; index index.html; })";

// The gate's JSON for `property` failing first on `check`.
#define REFUSED(property, check) \
  R"("property":")" property R"(","status":"fail","reason":"check )" check " failed"

}  // namespace

TEST_CASE("o1 intent: answering through configuration Ansible does not govern is refused") {
  O1Lab s;
  // Seed 0: web2 drifted in the primary, web3 in the twin. Each hand edit reaches both by
  // selector, survives the scheduled converge (which re-renders only site.conf), and serves the
  // site: only the check that the served configuration is the one the source of truth renders
  // refuses it.
  s.expect_refused(
      {
          {"a hand-written server block beside the managed one, loaded first",
           "[" +
               on_drifted("file.write", R"("path":"/etc/nginx/conf.d/00-hand.conf","content":")" +
                                            std::string(kHandBlock) + "\"") +
               "," + kReload + "]",
           "RECOVERED_UNPROVEN", REFUSED("primary", "served-as-rendered")},
          {"nginx.conf no longer includes the managed folder, it serves its own server block",
           "[" +
               on_drifted(
                   "file.replace",
                   R"("path":"/etc/nginx/nginx.conf","old":"include /etc/nginx/conf.d/*.conf;","new":"server { listen 80; root /srv/site/current; index index.html; }")") +
               "," + kReload + "]",
           "RECOVERED_UNPROVEN", REFUSED("primary", "served-as-rendered")},
      },
      0, ir);
}

TEST_CASE("o1 intent: the catalog refuses any change to the Ansible project but its vars") {
  O1Lab s;
  CliResult r = s.ok({"attempt", "start", kO1, "--seed", "0", "--json"});
  const std::string id = *Json(r.last_line()).str("attempt");
  s.ok({"attempt", "predict", id, "--hypothesis", "stale-override", "--expect", "x"});
  s.ok(
      {"attempt", "probe", id, R"({"call":"ansible.check","params":{"node":{"role":"control"}}})"});
  struct Case {
    const char* what;
    std::string action;
    const char* error;
  };
  for (
      const Case& c : {
          Case{
              "the role's task no longer renders the managed file",
              on_control(
                  "file.replace",
                  R"("path":"/srv/ansible/roles/site/tasks/main.yml","old":"dest: /etc/nginx/conf.d/site.conf","new":"dest: /tmp/site.conf")"),
              R"("/srv/ansible/roles/site/tasks/main.yml" is under /srv/ansible/, which this call may not change)"},
          Case{
              "the drifted node taken out of the inventory",
              on_control("file.write",
                         R"("path":"/srv/ansible/inventory.ini","content":"[web]\nweb1\n")"),
              R"("/srv/ansible/inventory.ini" is under /srv/ansible/, which this call may not change)"},
          Case{
              "a connection variable that sends the node's converge elsewhere",
              on_control(
                  "vars.set",
                  R"("path":{"selector":"host-vars-root-missing"},"key":"ansible_connection","value":"local")"),
              R"("ansible_connection" is not one of: app_root, site_port)"},
      }) {
    INFO(c.what);
    write_file(s.lab / "fix.json", ir("[" + c.action + "," + kConverge + "]"));
    r = s.lab.aura({"attempt", "submit", id, (s.lab / "fix.json").string()});
    CHECK(r.exit_code != 0);
    CHECK_MESSAGE((r.out + r.err).find(c.error) != std::string::npos, r.describe());
  }
  s.ok({"attempt", "abandon", id, "--reason", "test done"});
}

TEST_CASE("o1 intent: weakening what Ansible manages is refused by the checks too") {
  O1Lab s;
  // The catalog's guard lifted in the lab's own copy (re-signed by its operator), so the checks
  // alone must refuse what it would have kept out.
  const fs::path pkg = s.lab / "scenarios" / kO1;
  std::string m = read_file(pkg / "manifest.json");
  for (size_t at; (at = m.find(R"("excludes": [)")) != std::string::npos;) {
    const size_t end = m.find(']', at);
    m.erase(m.rfind(',', at), end + 1 - m.rfind(',', at));
  }
  write_file(pkg / "manifest.json", m);
  s.ok({"scenario", "sign", pkg.string()});
  s.ok({"scenario", "load", pkg.string()});
  s.expect_refused(
      {
          // The template now lands where nginx never looks; the hand edit survives every
          // converge, and the lab's drift of the managed file is left in place.
          {"the role renders elsewhere, the node is edited by hand",
           "[" +
               on_control(
                   "file.replace",
                   R"("path":"/srv/ansible/roles/site/tasks/main.yml","old":"dest: /etc/nginx/conf.d/site.conf","new":"dest: /etc/nginx/conf.d/site.conf.rendered")") +
               "," + kConverge + "," +
               on_drifted("file.write", R"("path":"/etc/nginx/conf.d/site.conf","content":")" +
                                            std::string(kHandBlock) + "\"") +
               "," + kReload + "]",
           "RECOVERED_UNPROVEN", REFUSED("primary", "converge-holds")},
          // The template ignores the vars: every node serves one root whatever the source of
          // truth says.
          {"the template hard-codes the root",
           "[" +
               on_control(
                   "file.replace",
                   R"("path":"/srv/ansible/roles/site/templates/site.conf.j2","old":"root {{ app_root }};","new":"root /srv/site/current;")") +
               "," + kConverge + "]",
           "RECOVERED_UNPROVEN", REFUSED("primary", "served-as-rendered")},
      },
      0, ir);
}

TEST_CASE("o1 intent: right fixes other than gold are VERIFIED") {
  O1Lab s;
  const std::string set_default = on_control(
      "vars.set",
      R"("path":{"selector":"host-vars-root-missing"},"key":"app_root","value":"/srv/site/current")");
  const std::string unset =
      on_control("vars.unset", R"("path":{"selector":"host-vars-root-missing"},"key":"app_root")");
  for (const auto& [what, actions] : {
           std::pair<const char*, std::string>{"the stale override set to the group's release",
                                               "[" + set_default + "," + kConverge + "]"},
           {"the override removed, converged, and every web node reloaded for good measure",
            "[" + unset + "," + kConverge +
                R"(,{"call":"nginx.reload","params":{"node":{"role":"web"}}}])"},
       }) {
    INFO(what);
    const std::string gate = s.attempt(ir(actions), 0);
    INFO(gate);
    CHECK(gate.find(R"("verdict":"VERIFIED")") != std::string::npos);
  }
}

// A release is one the image built (issue 25, family 5): the root the source of truth names on
// every web node, and its page, must be the entries built under /srv, never content made or
// rewritten during the attempt. Each instance reaches the twin's drifted node too (selectors).
TEST_CASE("o1 intent: a page made or rewritten during the attempt is served as no release") {
  O1Lab s;
  auto kept_override = [](const std::string& root, const std::string& page) {
    return "[" +
           on_drifted("file.write",
                      R"("path":")" + root + "/index.html" + R"(","content":")" + page + "\"") +
           "," +
           on_control("vars.set",
                      R"("path":{"selector":"host-vars-root-missing"},"key":"app_root","value":")" +
                          root + "\"") +
           "," + kConverge + "]";
  };
  s.expect_refused(
      {
          {"the override kept, pointed at an image folder holding a page written by hand",
           kept_override("/srv/site", "<h1>site ok</h1> (written by hand)"), "RECOVERED_UNPROVEN",
           REFUSED("primary", "served-as-rendered")},
          {"the override pointed at the group's release, its page on that node rewritten",
           kept_override("/srv/site/current", "<h1>site ok</h1> (rewritten by hand)"),
           "RECOVERED_UNPROVEN", REFUSED("primary", "served-as-rendered")},
      },
      0, ir);
}
