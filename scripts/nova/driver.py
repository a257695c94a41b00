#!/usr/bin/python3
"""Drive nova 26.2.2's own reporting path (Debian's python3-nova) for tests.

usage: driver.py DIR IRONIC_URL PLACEMENT_URL [--skip-reserve-in-use]
                 [--extra-conf FILE] [--owner-nova]

--extra-conf FILE is read after DIR/nova.conf (its options win): the lines
an operator adds, e.g. exactly what `engine nova-config` prints.
--owner-nova makes nova 26 report OWNER_NOVA on every provider, as nova 34
(2026.2) does in ResourceTracker._get_traits.

Builds the real nova.compute.manager.ComputeManager with
compute_driver = ironic.IronicDriver (openstacksdk to Ironic with
auth_type none; keystoneauth admin_token to a noauth2 Placement), on sqlite
databases under DIR, and reads one JSON command per line on stdin, answering
one JSON line on stdout:

  {"op": "periodic", "startup": false}   ComputeManager.update_available_resource
  {"op": "refresh_due"}                  age every provider's association refresh
                                         by [compute] resource_provider_association_refresh
  {"op": "instance", "uuid": U, "node": N}  an Instance row on this host and node
                                         (what nova's conductor writes when it builds one)
  {"op": "quit"}

Bug 1841481's window, for the bench (internal/testing/bench/nova_replay_test.go):
when DIR/window.url exists, every periodic asks that URL, between the
Ironic driver's node listing and its instance listing (_refresh_cache),
for a change to make there; the bench applies it to Ironic and Placement
before it answers, and this script makes the nova database side of it
(an instance lands on this host, or moves to another). An instance listing
before the node listing of the same periodic is an error.

What is stubbed, and only that: no message bus (transport_url fake:/, no
RPC is ever sent by the periodic), no conductor (nova objects use the
databases directly), the Service and Instance rows are inserted directly.
Everything that talks to Ironic and Placement is nova's own code.
A nova-compute restart is a new process on the same DIR (the first
periodic with startup true). DIR/nova.conf is written by this script;
DIR/provider_config/ is nova's [compute] provider_config_location.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def write_conf(d, ironic, placement, skip_reserve):
    os.makedirs(os.path.join(d, "provider_config"), exist_ok=True)
    os.makedirs(os.path.join(d, "lock"), exist_ok=True)
    conf = os.path.join(d, "nova.conf")
    with open(conf, "w") as f:
        f.write(f"""[DEFAULT]
compute_driver = ironic.IronicDriver
transport_url = fake:/
host = nova-e2e
state_path = {d}
log_file = {d}/nova.log
debug = false
use_stderr = false
update_resources_interval = 60

[api_database]
connection = sqlite:///{d}/nova_api.sqlite

[database]
connection = sqlite:///{d}/nova.sqlite

[ironic]
auth_type = none
endpoint_override = {ironic}/
api_max_retries = 5
api_retry_interval = 1

[placement]
auth_type = admin_token
token = admin
endpoint = {placement}
endpoint_override = {placement}

[compute]
provider_config_location = {d}/provider_config
resource_provider_association_refresh = 300

[workarounds]
skip_reserve_in_use_ironic_nodes = {str(skip_reserve).lower()}

[oslo_concurrency]
lock_path = {d}/lock

[notifications]
notification_format = unversioned

[oslo_messaging_notifications]
driver = noop
""")
    return conf


def sync_dbs(d, ironic, placement):
    """The schema of nova_api and nova (nova-manage api_db sync, db sync)
    takes over a minute to build: it is built once per machine and nova
    version into a template directory, and copied."""
    if os.path.exists(os.path.join(d, "nova.sqlite")):
        return  # a restart on the same DIR keeps its databases
    import nova.version
    root = os.path.join(tempfile.gettempdir(), "rpengine-novatest")
    tmpl = os.path.join(root, "schema-" + nova.version.version_string())
    if not os.path.exists(os.path.join(tmpl, "db.synced")):
        os.makedirs(root, exist_ok=True)
        build = tempfile.mkdtemp(dir=root, prefix="build-")
        conf = write_conf(build, ironic, placement, False)
        for args in (["api_db", "sync"], ["db", "sync", "--local_cell"]):
            subprocess.run([sys.executable, "-c",
                            "import sys; from nova.cmd.manage import main; sys.exit(main())",
                            "--config-file", conf] + args, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        open(os.path.join(build, "db.synced"), "w").close()
        try:
            os.rename(build, tmpl)  # atomic: a concurrent build loses the race harmlessly
        except OSError:
            shutil.rmtree(build, ignore_errors=True)
    for name in ("nova_api.sqlite", "nova.sqlite"):
        shutil.copyfile(os.path.join(tmpl, name), os.path.join(d, name))


def main():
    d, ironic, placement = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3].rstrip("/")
    opts = sys.argv[4:]
    skip_reserve = "--skip-reserve-in-use" in opts
    conf = write_conf(d, ironic, placement, skip_reserve)
    conf_args = ["--config-file", conf]
    if "--extra-conf" in opts:
        conf_args += ["--config-file", opts[opts.index("--extra-conf") + 1]]
    sync_dbs(d, ironic, placement)

    # As nova-compute starts (nova/cmd/__init__.py): eventlet's green
    # locks, which nova's provider tree deep-copies at every report.
    import nova.monkey_patch  # noqa: F401
    from nova import config
    from nova import context as nova_context
    from nova import objects
    config.parse_args(["driver.py"] + conf_args)
    objects.register_all()
    from oslo_log import log as logging
    logging.setup(config.CONF, "nova")
    from nova.compute import manager

    ctx = nova_context.get_admin_context()
    host = config.CONF.host
    try:
        objects.Service.get_by_compute_host(ctx, host)
    except Exception:
        objects.Service(ctx, host=host, binary="nova-compute", topic="compute",
                        report_count=0).create()

    if "--owner-nova" in opts:
        owner_nova()
    cm = manager.ComputeManager()
    cm.driver.init_host(host)
    window = watch_window(cm, d, ctx, host)
    started = time.time()
    print(json.dumps({"ok": True, "ready": True, "init_s": round(time.time() - started, 3)}), flush=True)

    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd.get("op")
        out = {"ok": True}
        try:
            if op == "periodic":
                t, c = time.time(), time.process_time()
                window["listed"] = False
                cm.update_available_resource(ctx, startup=bool(cmd.get("startup")))
                out["seconds"] = round(time.time() - t, 3)
                out["cpu_seconds"] = round(time.process_time() - c, 3)  # for the bench
            elif op == "refresh_due":
                rc = cm.rt.reportclient
                age = config.CONF.compute.resource_provider_association_refresh + 1
                for uuid in list(rc._association_refresh_time):
                    rc._association_refresh_time[uuid] -= age
            elif op == "instance":
                add_instance(ctx, host, cmd["uuid"], cmd["node"])
            elif op == "quit":
                print(json.dumps(out), flush=True)
                return
            else:
                out = {"ok": False, "error": "unknown op %r" % op}
        except Exception as e:  # reported to the test, which fails on it
            out = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        print(json.dumps(out), flush=True)


def owner_nova():
    """nova 34's resource tracker adds OWNER_NOVA to the traits of every
    provider it reports (nova/compute/resource_tracker.py: _get_traits);
    nova 26's does not. This adds it at the same place."""
    from nova.compute import resource_tracker
    get_traits = resource_tracker.ResourceTracker._get_traits

    def _get_traits(self, context, nodename, provider_tree):
        traits = get_traits(self, context, nodename, provider_tree)
        return sorted(set(traits) | {"OWNER_NOVA"})
    resource_tracker.ResourceTracker._get_traits = _get_traits


def watch_window(cm, d, ctx, host):
    """Wraps the two calls of IronicDriver._refresh_cache that bound the
    window: the node listing (_get_node_list) and the instance listing
    (InstanceList.get_uuids_by_host, which only _refresh_cache calls in the
    periodic). Returns the state the periodic resets."""
    from nova import objects
    state = {"listed": False}
    list_nodes = cm.driver._get_node_list

    def get_node_list(*args, **kwargs):
        out = list_nodes(*args, **kwargs)
        state["listed"] = True
        return out
    cm.driver._get_node_list = get_node_list

    list_instances = objects.InstanceList.get_uuids_by_host

    def get_uuids_by_host(cls, context, h):
        hook = os.path.join(d, "window.url")
        if os.path.exists(hook):
            if not state["listed"]:
                raise RuntimeError("window: instance listing before the node listing")
            with open(hook) as f:
                change = ask_window(f.read().strip(), h)
            if change:
                apply_window(ctx, host, change)
        return list_instances(context, h)
    objects.InstanceList.get_uuids_by_host = classmethod(get_uuids_by_host)
    return state


def ask_window(url, host):
    import urllib.request
    req = urllib.request.Request(url, data=json.dumps({"side": "nova", "host": host}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.loads(resp.read() or b"null")


def apply_window(ctx, host, change):
    from nova import objects
    if change["op"] == "land":
        add_instance(ctx, host, change["uuid"], change["node"])
    elif change["op"] == "move":
        inst = objects.Instance.get_by_uuid(ctx, change["uuid"])
        inst.host, inst.node = change["host"], change["to_node"]
        inst.save()
    else:
        raise RuntimeError("window: unknown change %r" % change)


def add_instance(ctx, host, uuid, node):
    from nova import objects
    from nova.compute import vm_states
    flavor = objects.Flavor(ctx, name="bm", memory_mb=0, vcpus=0, root_gb=0, ephemeral_gb=0,
                            swap=0, flavorid="bm", rxtx_factor=1.0, vcpu_weight=0,
                            disabled=False, is_public=True, extra_specs={}, id=1)
    inst = objects.Instance(ctx, uuid=uuid, host=host, node=node, vm_state=vm_states.ACTIVE,
                            task_state=None, power_state=1, project_id="e2e", user_id="e2e",
                            memory_mb=0, vcpus=0, root_gb=0, ephemeral_gb=0,
                            instance_type_id=1, flavor=flavor, old_flavor=None, new_flavor=None,
                            display_name="e2e-" + uuid[:8])
    inst.create()


if __name__ == "__main__":
    main()
