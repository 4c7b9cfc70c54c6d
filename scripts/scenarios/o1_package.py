#!/usr/bin/env python3
"""Writes scenarios/o1-fleet-drift (manifest.json and world layers) from the tables below.

The package is plain files; this script is how its repetitive parts (three seeded variants of
three worlds, each four nodes) are kept consistent. Run it from the repository root after
changing it, then commit what it wrote, SHA256SUMS included: `aura setup` signs a bundled
package only when its files match that SHA256SUMS (docs/formats/package.md). The SSH keys are
read from the package if present (so a re-run keeps them) and made with ssh-keygen otherwise;
they are world-only keys (sshd listens only on a world's own network).
"""
import hashlib, json, os, shutil, subprocess, sys

PKG = "scenarios/o1-fleet-drift"
PROJECT = "/srv/ansible"
SITE_CONF = "/etc/nginx/conf.d/site.conf"  # what the role's template renders on each web node

# What each service keeps of the node root's Linux capabilities (docs/SANDBOX.md). nginx binds port 80,
# makes its temporary folders for its workers and switches to them; sshd separates privileges
# (chroot, setuid) and its sessions run the converge's modules, which write and chown files.
NGINX_CAPS = ["chown", "kill", "net_bind_service", "setgid", "setuid"]
SSHD_CAPS = ["chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill",
             "net_bind_service", "setgid", "setuid", "sys_chroot"]

# Per seed variant: the fleet, the control node, the web nodes, the default app_root, the
# primary's drifted node and stale value, the twin's, and the control world's canary.
VARIANTS = [
    dict(fleet="shop", ctl="ctl", webs=["web1", "web2", "web3"], root="/srv/site/current",
         primary=("web2", "/srv/site/releases/2026-10-02"),
         twin=("web3", "/srv/site/releases/2026-09-18"),
         canary=("web1", "/srv/site/canary")),
    dict(fleet="docs", ctl="deploy", webs=["app-a", "app-b", "app-c"], root="/var/www/docs/live",
         primary=("app-c", "/var/www/docs/r1841"),
         twin=("app-a", "/var/www/docs/r1799"),
         canary=("app-b", "/var/www/docs/canary")),
    dict(fleet="blog", ctl="ops", webs=["edge1", "edge2", "edge3"], root="/srv/blog/public",
         primary=("edge1", "/srv/blog/old-public"),
         twin=("edge2", "/srv/blog/public-2025"),
         canary=("edge3", "/srv/blog/preview")),
]

HOSTS_TEXT = "site ok"
CANARY_TEXT = "canary build"


def write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def keys():
    out = {}
    for name in ("client", "host"):
        src = os.path.join(PKG, "worlds", "keys", name)
        if os.path.exists(src):
            out[name] = (open(src).read(), open(src + ".pub").read())
    if len(out) == 2:
        return out
    tmp = "/tmp/o1-package-keys"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    for name in ("client", "host"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "o1-" + name,
                        "-f", os.path.join(tmp, name)], check=True)
        out[name] = (open(os.path.join(tmp, name)).read(),
                     open(os.path.join(tmp, name + ".pub")).read())
    return out


NGINX_CONF = """user www-data;
worker_processes 1;
pid /run/nginx.pid;
error_log /var/log/nginx/error.log;
events { worker_connections 64; }
http {
    access_log off;
    include /etc/nginx/mime.types;
    default_type text/plain;
    include /etc/nginx/conf.d/*.conf;
}
"""

MIME_TYPES = """types {
    text/html html htm;
    text/plain txt;
}
"""

SSHD_CONFIG = """# The fleet's sshd: keys only, root by key, every session through aura-session.
Port 22
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PrintMotd no
PrintLastLog no
UseDNS no
PidFile /run/sshd.pid
MaxStartups 32:30:64
Subsystem sftp /usr/lib/openssh/sftp-server
ForceCommand /etc/ssh/aura-session
"""

# A session gets what a lab action gets: no_new_privs and only the call capabilities.
AURA_SESSION = """#!/bin/sh
exec /usr/bin/setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all \\
  --bounding-set=-all,+chown,+dac_override,+dac_read_search,+fowner,+fsetid,+kill \\
  -- /bin/sh -c "$SSH_ORIGINAL_COMMAND"
"""

WEB_PASSWD = """root:x:0:0:root:/root:/bin/sh
www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin
sshd:x:100:65534::/run/sshd:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
"""
WEB_GROUP = "root:x:0:\nwww-data:x:33:\nnogroup:x:65534:\n"
# Without PAM, sshd reads the password field: "*" is no password, not a locked account.
WEB_SHADOW = "root:*:19700:0:99999:7:::\n"

CTL_PASSWD = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
CTL_GROUP = "root:x:0:\nnogroup:x:65534:\n"

ANSIBLE_CFG = """[defaults]
inventory = inventory.ini
forks = 4
gathering = explicit
interpreter_python = /usr/bin/python3
host_key_checking = True
retry_files_enabled = False
nocows = 1

[ssh_connection]
pipelining = True
ssh_args = -o ControlMaster=auto -o ControlPersist=60s
control_path_dir = /root/.ansible/cp
"""

SITE_YML = """- name: web fleet
  hosts: web
  roles:
    - site
"""

TASKS = """- name: nginx server block for the site
  ansible.builtin.template:
    src: site.conf.j2
    dest: /etc/nginx/conf.d/site.conf
    owner: root
    group: root
    mode: "0644"
  notify: reload nginx
"""

HANDLERS = """- name: reload nginx
  ansible.builtin.command: /usr/sbin/nginx -s reload
"""

TEMPLATE = """# Managed by Ansible (role site); edits here are overwritten.
server {
    listen {{ site_port }};
    server_name {{ inventory_hostname }};
    root {{ app_root }};
    index index.html;
}
"""


def render(host, app_root):
    return TEMPLATE.replace("{{ site_port }}", "80").replace(
        "{{ inventory_hostname }}", host).replace("{{ app_root }}", app_root)


def web_owners():
    return [
        {"path": "/etc/shadow", "owner": "root", "group": "root", "mode": "0640"},
        {"path": "/etc/ssh/ssh_host_ed25519_key", "owner": "root", "group": "root", "mode": "0600"},
        {"path": "/etc/ssh/aura-session", "owner": "root", "group": "root", "mode": "0755"},
        {"path": "/root", "owner": "root", "group": "root", "mode": "0700"},
        {"path": "/root/.ssh", "owner": "root", "group": "root", "mode": "0700"},
        {"path": "/root/.ssh/authorized_keys", "owner": "root", "group": "root", "mode": "0600"},
        {"path": "/run/sshd", "owner": "root", "group": "root", "mode": "0755"},
    ]


def ctl_owners():
    return [
        {"path": "/root", "owner": "root", "group": "root", "mode": "0700"},
        {"path": "/root/.ssh", "owner": "root", "group": "root", "mode": "0700"},
        {"path": "/root/.ssh/id_ed25519", "owner": "root", "group": "root", "mode": "0600"},
    ]


def write_sha256sums(pkg):
    """SHA256SUMS as `aura scenario sign` writes it: "<sha256>  <path>\\n" for every file but the
    top-level SHA256SUMS and package.sig.json, sorted by path bytewise."""
    paths = []
    for root, dirs, files in os.walk(pkg):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), pkg)
            if rel not in ("SHA256SUMS", "package.sig.json"):
                paths.append(rel)
    paths.sort(key=lambda p: p.encode())
    lines = []
    for rel in paths:
        with open(os.path.join(pkg, rel), "rb") as f:
            lines.append(hashlib.sha256(f.read()).hexdigest() + "  " + rel + "\n")
    with open(os.path.join(pkg, "SHA256SUMS"), "w") as f:
        f.write("".join(lines))


def main():
    if not os.path.isdir("scenarios"):
        sys.exit("run from the repository root")
    k = keys()
    shutil.rmtree(PKG, ignore_errors=True)
    W = os.path.join(PKG, "worlds")
    write(os.path.join(W, "keys", "client"), k["client"][0])
    write(os.path.join(W, "keys", "client.pub"), k["client"][1])
    write(os.path.join(W, "keys", "host"), k["host"][0])
    write(os.path.join(W, "keys", "host.pub"), k["host"][1])

    # Common layers: every web node, every control node.
    web = os.path.join(W, "web")
    write(f"{web}/etc/passwd", WEB_PASSWD)
    write(f"{web}/etc/group", WEB_GROUP)
    write(f"{web}/etc/shadow", WEB_SHADOW)
    write(f"{web}/etc/ssh/sshd_config", SSHD_CONFIG)
    write(f"{web}/etc/ssh/aura-session", AURA_SESSION)
    write(f"{web}/etc/ssh/ssh_host_ed25519_key", k["host"][0])
    write(f"{web}/etc/ssh/ssh_host_ed25519_key.pub", k["host"][1])
    write(f"{web}/root/.ssh/authorized_keys", k["client"][1])
    write(f"{web}/etc/nginx/nginx.conf", NGINX_CONF)
    write(f"{web}/etc/nginx/mime.types", MIME_TYPES)
    for d in ("run/sshd", "var/log/nginx", "var/lib/nginx"):
        write(f"{web}/{d}/.keep", "")
    ctl = os.path.join(W, "control")
    write(f"{ctl}/etc/passwd", CTL_PASSWD)
    write(f"{ctl}/etc/group", CTL_GROUP)
    write(f"{ctl}/root/.ssh/id_ed25519", k["client"][0])
    write(f"{ctl}/root/.ansible/cp/.keep", "")
    write(f"{ctl}{PROJECT}/ansible.cfg", ANSIBLE_CFG)
    write(f"{ctl}{PROJECT}/site.yml", SITE_YML)
    write(f"{ctl}{PROJECT}/roles/site/tasks/main.yml", TASKS)
    write(f"{ctl}{PROJECT}/roles/site/handlers/main.yml", HANDLERS)
    write(f"{ctl}{PROJECT}/roles/site/templates/site.conf.j2", TEMPLATE)

    host_key = " ".join(k["host"][1].split()[:2])
    worlds = {"primary": [], "twin": [], "control": []}
    for i, v in enumerate(VARIANTS):
        for role in ("primary", "twin", "control"):
            layer = f"{role}-{i}"
            base = os.path.join(W, layer)
            overrides = {}
            if role in ("primary", "twin"):
                node, stale = v[role]
                overrides[node] = stale
            else:
                node, canary = v["canary"]
                overrides[node] = canary
            # The control node: inventory, defaults, overrides, known hosts.
            cbase = f"{base}/ctl"
            write(f"{cbase}/root/.ssh/known_hosts", ",".join(v["webs"]) + " " + host_key + "\n")
            write(f"{cbase}{PROJECT}/inventory.ini",
                  "[web]\n" + "".join(w + "\n" for w in v["webs"]) +
                  "\n[web:vars]\nansible_user=root\n")
            write(f"{cbase}{PROJECT}/group_vars/web.yml",
                  f"---\n# The {v['fleet']} fleet: every web node serves the current release.\n"
                  f"site_port: 80\napp_root: {v['root']}\n")
            for node, value in overrides.items():
                write(f"{cbase}{PROJECT}/host_vars/{node}.yml", f"---\napp_root: {value}\n")
            write(f"{cbase}{PROJECT}/host_vars/.keep", "")
            # Each web node: the site's content and the server block Ansible last rendered.
            nodes = [{
                "name": v["ctl"], "roles": ["control"],
                "layers": ["worlds/control", f"worlds/{layer}/ctl"],
                "owners": ctl_owners(), "mounts": ["shm"],
            }]
            for w in v["webs"]:
                wbase = f"{base}/{w}"
                root = overrides.get(w, v["root"])
                write(f"{wbase}/etc/nginx/conf.d/site.conf", render(w, root))
                write(f"{wbase}{v['root']}/index.html",
                      f"<p>{v['fleet']} {HOSTS_TEXT}</p>\n")
                roles = ["web"]
                if role == "control" and w == v["canary"][0]:
                    write(f"{wbase}{v['canary'][1]}/index.html",
                          f"<p>{v['fleet']} {CANARY_TEXT}, {HOSTS_TEXT}</p>\n")
                    roles.append("canary")
                nodes.append({
                    "name": w, "roles": roles,
                    "layers": ["worlds/web", f"worlds/{layer}/{w}"],
                    "owners": web_owners(),
                    "services": [
                        {"name": "nginx", "argv": ["/usr/sbin/nginx"], "ready": {"tcp": 80},
                         "linux_caps": NGINX_CAPS},
                        {"name": "sshd", "argv": ["/usr/sbin/sshd", "-E", "/var/log/sshd.log"],
                         "ready": {"tcp": 22}, "linux_caps": SSHD_CAPS},
                    ],
                })
            site_roots = sorted({v["root"].rsplit("/", 1)[0]})
            worlds[role].append({
                "nodes": nodes,
                "state": [
                    {"roles": ["control"], "paths": [PROJECT]},
                    {"roles": ["web"], "paths": ["/etc/nginx"] + site_roots},
                ],
                "selectors": {
                    "host-vars-root-missing": {"kind": "stale_override", "role": "control",
                                                "path": PROJECT, "var": "app_root", "group": "web"},
                    "host-vars-root-differs": {"kind": "var_override", "role": "control",
                                          "path": PROJECT, "var": "app_root", "group": "web"},
                    "nodes-root-missing": {"kind": "stale_override", "role": "control",
                                             "path": PROJECT, "var": "app_root", "group": "web"},
                    "nodes-root-differs": {"kind": "var_override", "role": "control",
                                                "path": PROJECT, "var": "app_root",
                                                "group": "web"},
                    "nodes-serving-no-page": {"kind": "no_page", "role": "web",
                                              "path": "/etc/nginx/conf.d/site.conf",
                                              "index": "index.html"},
                },
            })

    # Parameter descriptions name no term: the target terms list them all, each with what it
    # names, so no description points at the one the cause needs (issue 16).
    node_param = {"type": "target", "target_kind": "node", "required": False,
                  "description": "which node: a role or a selector of kind node (the target "
                                 "terms say what each names), or {\"literal\":NAME}"}

    def path_param(prefixes, excludes=None):
        p = {"type": "path", "prefixes": prefixes, "max_bytes": 256,
             "description": "an absolute path in the world"}
        if excludes:
            p["excludes"] = excludes
            p["description"] += " (not under " + ", ".join(excludes) + ": the source of truth " \
                                "changes only through vars.set and vars.unset)"
        return p

    # What governs the fleet is the Ansible project: a hand edit may change a node, never it.
    by_hand = path_param(["/etc/nginx/", "/srv/", "/var/www/"], [PROJECT + "/"])
    # The vars ops change the source of truth's own variables, nothing Ansible runs by.
    vars_key = {"type": "string", "max_bytes": 64, "enum": ["app_root", "site_port"]}

    vars_path = {"type": "target", "target_kind": "path",
                 "description": "a vars file of the Ansible project in the control node: a "
                                "selector of kind path (the target terms say what each names) "
                                "or {\"literal\":\"/srv/ansible/host_vars/NAME.yml\"}"}
    readable = ["/etc/", "/srv/", "/var/"]
    probes = [
        {"call": "file.read", "summary": "read a file", "cost": 1, "max_output_bytes": 16384,
         "params": {"node": node_param, "path": path_param(readable)}},
        {"call": "file.stat", "summary": "type, mode, owner, group and size of a path", "cost": 1,
         "max_output_bytes": 1024, "params": {"node": node_param, "path": path_param(["/"])}},
        {"call": "dir.list", "summary": "list a folder", "cost": 1, "max_output_bytes": 8192,
         "params": {"node": node_param, "path": path_param(["/"])}},
        {"call": "http.get", "summary": "GET a URL from a node (http://ADDRESS[:PORT]/PATH)",
         "cost": 1, "max_output_bytes": 8192,
         "params": {"node": node_param,
                    "url": {"type": "string", "max_bytes": 256,
                            "description": "http://A.B.C.D[:PORT][/PATH]"}}},
        {"call": "net.listening", "summary": "listening sockets", "cost": 1,
         "max_output_bytes": 4096, "params": {"node": node_param}},
        {"call": "proc.list", "summary": "processes", "cost": 1, "max_output_bytes": 16384,
         "params": {"node": node_param}},
        {"call": "nginx.test", "summary": "nginx -t on a web node", "cost": 1,
         "max_output_bytes": 4096, "params": {"node": node_param}},
        {"call": "ansible.check", "summary": "ansible-playbook site.yml --check --diff in the "
         "control node: what a converge would change, changing nothing", "cost": 2,
         "max_output_bytes": 32768, "params": {"node": node_param}},
    ]
    actions = [
        {"call": "vars.set", "summary": "set a variable in an Ansible vars file",
         "params": {"node": node_param, "path": vars_path, "key": vars_key,
                    "value": {"type": "string", "max_bytes": 256}}},
        {"call": "vars.unset", "summary": "remove a variable from an Ansible vars file",
         "params": {"node": node_param, "path": vars_path, "key": vars_key}},
        {"call": "ansible.run", "summary": "converge: ansible-playbook site.yml in the control node",
         "params": {"node": node_param}},
        {"call": "file.write", "summary": "write a file on a node (by hand)",
         "params": {"node": node_param, "path": by_hand,
                    "content": {"type": "string", "max_bytes": 4096},
                    "mode": {"type": "mode", "required": False}}},
        {"call": "file.replace", "summary": "replace one occurrence of a text in a file (by hand)",
         "params": {"node": node_param, "path": by_hand,
                    "old": {"type": "string", "max_bytes": 1024},
                    "new": {"type": "string", "max_bytes": 1024}}},
        {"call": "nginx.reload", "summary": "nginx -s reload on a node", "params": {"node": node_param}},
        {"call": "journal.undo", "summary": "undo every change the lab journaled on a node",
         "params": {"node": node_param}},
    ]
    fleet = {"from": "control", "to": "web", "port": 80, "path": "/", "expect_status": 200,
             "expect_text": HOSTS_TEXT, "listener_exe": "/usr/sbin/nginx"}
    checks = [
        {"id": "fleet-serves", "kind": "postcondition",
         "description": "every web node's nginx answers / with 200 and the site, seen from the control node",
         "call": "http.expect", "params": fleet},
        {"id": "canary-kept", "kind": "invariant",
         "description": "the canary node still serves the canary build", "roles": ["control"],
         "call": "http.expect",
         "params": {"from": "control", "to": "canary", "port": 80, "path": "/",
                    "expect_status": 200, "expect_text": CANARY_TEXT, "listener_exe": "/usr/sbin/nginx"}},
        {"id": "converge-holds", "kind": "invariant",
         "description": "the fleet's next scheduled converge (ansible-playbook site.yml), after the "
                        "lab drifts every web node's server block, puts each back, and every web "
                        "node still serves the site: the fix lives in the source of truth",
         "call": "ansible.converged", "params": dict(fleet, drift=SITE_CONF)},
        {"id": "served-as-rendered", "kind": "invariant",
         "description": "every web node serves the release the source of truth names, through the "
                        "configuration it renders: its nginx configuration is the image's plus the "
                        "server block the image's template renders from the current vars, and what "
                        "it serves is the index of the app_root those vars name",
         "call": "ansible.rendered",
         "params": {"from": "control", "to": "web", "port": 80, "path": "/", "expect_status": 200,
                    "listener_exe": "/usr/sbin/nginx", "project_role": "control",
                    "project": PROJECT, "template": "roles/site/templates/site.conf.j2",
                    "dest": SITE_CONF, "config": "/etc/nginx", "group": "web",
                    "root_var": "app_root", "index": "index.html"}},
        {"id": "source-governs", "kind": "invariant",
         "description": "the source of truth still governs every web node: the Ansible project is "
                        "as the image built it but for its vars' values, its vars set only "
                        "app_root and site_port, and every web node is in the inventory's web group",
         "call": "ansible.governs",
         "params": {"role": "control", "project": PROJECT, "inventory": "inventory.ini",
                    "group": "web", "hosts_role": "web", "vars_keys": "app_root site_port"}},
    ]
    gold_ir = {
        "v": 1, "hypothesis": "stale-override",
        "claim": "One web node's host_vars pins app_root to a release folder that no longer exists "
                 "on it, so Ansible rendered a server block whose root is missing and nginx there "
                 "answers 404. Removing that stale override from the source of truth and converging "
                 "renders the group's app_root again.",
        "evidence": ["ev-1", "ev-2"],
        "falsifier": "If the failing node's rendered root existed, or no host_vars file overrode "
                     "app_root for it, this claim would be wrong.",
        "actions": [
            {"call": "vars.unset", "params": {"node": {"role": "control"},
                                              "path": {"selector": "host-vars-root-missing"},
                                              "key": "app_root"}},
            {"call": "ansible.run", "params": {"node": {"role": "control"}}},
        ],
        "postconditions": ["fleet-serves"],
        "invariants": ["converge-holds"],
        "rollback": [
            {"call": "journal.undo", "params": {"node": {"role": "control"}}},
            {"call": "ansible.run", "params": {"node": {"role": "control"}}},
        ],
    }
    probes_judge = [
        {"call": "ansible.check", "params": {"node": {"role": "control"}}},
        {"call": "dir.list", "params": {"node": {"role": "control"}, "path": PROJECT + "/host_vars"}},
    ]
    bad_variants = []
    for v in VARIANTS:
        node = v["primary"][0]
        one_line = f"server {{ listen 80; server_name {node}; root {v['root']}; index index.html; }}"
        bad_variants.append({
            "probes": [{"call": "file.read", "params": {"node": {"literal": node},
                                                        "path": "/etc/nginx/conf.d/site.conf"}},
                       {"call": "nginx.test", "params": {"node": {"literal": node}}}],
            "ir": {
                "v": 1, "hypothesis": "stale-override",
                "claim": f"{node}'s server block points nginx at a folder that does not exist, so "
                         "it answers 404; pointing it at the live site by hand and reloading nginx "
                         "brings it back.",
                "evidence": ["ev-1", "ev-2"],
                "falsifier": f"If {node}'s root existed, or nginx -t failed there, this would be wrong.",
                "actions": [
                    {"call": "file.write", "params": {"node": {"literal": node},
                                                      "path": "/etc/nginx/conf.d/site.conf",
                                                      "content": one_line}},
                    {"call": "nginx.reload", "params": {"node": {"literal": node}}},
                ],
                "postconditions": ["fleet-serves"],
                "invariants": ["converge-holds"],
                "rollback": [
                    {"call": "journal.undo", "params": {"node": {"literal": node}}},
                    {"call": "nginx.reload", "params": {"node": {"literal": node}}},
                ],
            }})
    manifest = {
        "schema": 1,
        "id": "o1-fleet-drift",
        "version": "1.0.0",
        "family": "incident/config-drift",
        "title": "O1: one web node of the fleet answers 404",
        "briefing": "The web fleet is configured by Ansible from the control node (project "
                    "/srv/ansible: inventory, group_vars, host_vars, role site). Since last "
                    "night's converge one web node answers 404 while the others serve the site. "
                    "Find out why and fix it so it stays fixed: the fleet is converged again "
                    "every night, and some nodes differ from the others on purpose.",
        "driver": "nodes",
        "probe_budget": 14,
        "allow_scripts": False,
        # What its worlds need of the machine, as capability ids of the panel
        # (docs/CAPABILITIES.md): the nodes driver's namespaces, overlay roots, seccomp, openat2
        # checks and cgroups; nginx and sshd on the web nodes, ansible-playbook and the ssh
        # client on the control node (all the host's binaries, seen through the node roots).
        "requires": {"capabilities": [
            "ns_user", "ns_mount", "ns_pid", "ns_net", "ns_ipc", "ns_uts", "overlayfs", "seccomp",
            "openat2", "cgroups", "tool_nginx", "tool_ansible-playbook", "tool_ssh", "tool_sshd"]},
        "hypotheses": [
            {"id": "stale-override", "text": "a host_vars override pins a node to a path that no longer exists"},
            {"id": "hand-edit", "text": "someone edited the node's nginx config by hand"},
            {"id": "nginx-down", "text": "nginx on the node is not running or not listening"},
            {"id": "content-missing", "text": "the site's files were deleted from the node"},
        ],
        "targets": [
            {"name": "control", "type": "role", "kind": "node", "description": "the Ansible control node", "max_matches": 1},
            {"name": "web", "type": "role", "kind": "node", "description": "the web nodes", "max_matches": 8},
            {"name": "canary", "type": "role", "kind": "node", "description": "a canary web node, where there is one", "max_matches": 1},
            {"name": "host-vars-root-missing", "type": "selector", "kind": "path",
             "description": "the first host_vars file whose app_root names a folder that does not exist on its node",
             "max_matches": 1},
            {"name": "host-vars-root-differs", "type": "selector", "kind": "path",
             "description": "the first host_vars file whose app_root differs from the web group's",
             "max_matches": 1},
            {"name": "nodes-root-missing", "type": "selector", "kind": "node",
             "description": "the web nodes whose host_vars set app_root to a folder that does not exist there",
             "max_matches": 8},
            {"name": "nodes-root-differs", "type": "selector", "kind": "node",
             "description": "the web nodes whose host_vars set app_root to another value than the web group's",
             "max_matches": 8},
            {"name": "nodes-serving-no-page", "type": "selector", "kind": "node",
             "description": "the web nodes whose nginx site config (conf.d/site.conf) names a root folder that holds no index.html: the nodes that answer 404",
             "max_matches": 8},
        ],
        "worlds": [
            {"id": "primary", "role": "primary", "description": "a stale app_root override on one web node",
             "build": {"variants": worlds["primary"]}},
            {"id": "twin-1", "role": "twin", "description": "a stale app_root override on another web node, with another value",
             "build": {"variants": worlds["twin"]}},
            {"id": "control", "role": "control", "description": "healthy, with a canary node whose app_root override is legitimate",
             "build": {"variants": worlds["control"]}},
        ],
        "probes": probes,
        "actions": actions,
        "checks": checks,
        "judge": {
            "gold": {"expect": "VERIFIED", "probes": probes_judge, "ir": gold_ir},
            "bad": {"expect": "RECOVERED_UNPROVEN", "variants": bad_variants},
        },
    }
    with open(os.path.join(PKG, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    write_sha256sums(PKG)


if __name__ == "__main__":
    main()
