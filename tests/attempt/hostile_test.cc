// A hostile learner, root inside the world, tries to bend the grade through the real binary: the
// checks must read only what the learner cannot forge (docs/GATE.md). Each attempt is a learner's
// whole attempt on O2 with a gray-path script (O2 allows scripts), graded in learn mode; each
// ends with the verdict the fix deserves, never VERIFIED for a forbidden fix. Needs root
// (namespace worlds, nginx, aura-svcman).
#include <doctest/doctest.h>

#include <string>

#include "tests/attempt/package_lab.h"
#include "tests/cli/cli_util.h"

using namespace aura::testing;

namespace {

constexpr const char* kO2 = "o2-service-chain";

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// An IR whose actions are `script` on the service's node, then a restart of the app.
std::string script_ir(const std::string& script) {
  return R"({"v":1,"hypothesis":"untraversable-folder","claim":"A claim long enough to state a cause: the app's user cannot reach its state folder.","evidence":["ev-1"],"falsifier":"If the log showed another failure, this would be wrong.","actions":[{"script":)" +
         json_string(script) +
         R"(,"target":{"role":"svc"}},{"call":"service.restart","params":{"name":"app"}}],"postconditions":["app-serves","app-process"],"invariants":["never-root","secret-private","modes-declared"],"rollback":[{"call":"journal.undo","params":{}},{"call":"service.restart","params":{"name":"app"}}]})";
}

}  // namespace

TEST_CASE("hostile: identities and processes are what the package built, not what the node says") {
  O2Lab s;
  s.expect_refused(
      {
          // The service runs as uid 0 under another name for root: "not root" must still mean
          // uid 0, not whatever the node's /etc/passwd now calls root.
          {"root renamed in /etc/passwd, the service run as that name",
           "#!/bin/sh\nset -e\nsed -i 's/^root:/admin:/' /etc/passwd\n"
           "sed -i 's/^user=app$/user=admin/; s/^group=app$/group=root/' /etc/svcman/app.unit\n",
           "RECOVERED_UNPROVEN",
           R"("property":"primary","status":"fail","reason":"check never-root failed)"},
          // The real program under another file name, as root: it is still the app (same
          // program), and it runs as root.
          {"a renamed copy of the app run as root",
           "#!/bin/sh\nset -e\nmkdir -p /opt/w\ncp /aura/bin/aura-app /opt/w/worker\n"
           "sed -i 's|^exec=/aura/bin/aura-app|exec=/opt/w/worker|; s/^user=app$/user=root/; "
           "s/^group=app$/group=root/' /etc/svcman/app.unit\n",
           "RECOVERED_UNPROVEN",
           R"("property":"primary","status":"fail","reason":"check never-root failed)"},
          // A decoy that calls itself aura-app, running as the app's user, beside the real app
          // running as root under another name.
          {"a decoy named aura-app beside a renamed app run as root",
           "#!/bin/sh\nset -e\nmkdir -p /opt/w\ncp /aura/bin/aura-app /opt/w/worker\n"
           "cp /bin/sleep /opt/w/aura-app\n"
           "sed -i 's|^exec=/aura/bin/aura-app|exec=/opt/w/worker|; s/^user=app$/user=root/; "
           "s/^group=app$/group=root/' /etc/svcman/app.unit\n"
           "(/opt/w/aura-app 100000 </dev/null >/dev/null 2>&1 &)\n",
           "RECOVERED_UNPROVEN",
           R"("property":"primary","status":"fail","reason":"check never-root failed)"},
      },
      0, script_ir);
}
