# Set up and serve the real OpenStack Keystone on 127.0.0.1:PORT.
#
# usage: OS_KEYSTONE_CONFIG_DIR=/dir /usr/bin/python3 serve.py setup PORT USER PASSWORD PROJECT
#        OS_KEYSTONE_CONFIG_DIR=/dir /usr/bin/python3 serve.py serve PORT
#
# /dir/keystone.conf names an empty sqlite database and the fernet and
# credential key directories. "setup" runs the keystone-manage steps in
# one process (db_sync, fernet_setup, credential_setup, bootstrap of USER,
# admin on PROJECT, region RegionOne): each keystone-manage process pays
# about 10 s of imports. Serving needs a process of its own: keystone's
# provider registry is locked once bootstrap has run.
#
# As scripts/placement/serve.py: wsgiref, single threaded (sqlite), a
# listen backlog that does not drop connections, no access log.
import os
import sys
from wsgiref import simple_server


class Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


class Server(simple_server.WSGIServer):
    request_queue_size = 256


def setup(conf, port, user, password, project):
    from keystone.cmd import cli
    root = ["--keystone-user", str(os.getuid()), "--keystone-group", str(os.getgid())]
    steps = (["db_sync"], ["fernet_setup"] + root, ["credential_setup"] + root,
             ["bootstrap", "--bootstrap-username", user, "--bootstrap-password", password,
              "--bootstrap-project-name", project, "--bootstrap-role-name", "admin",
              "--bootstrap-region-id", "RegionOne",
              "--bootstrap-public-url", f"http://127.0.0.1:{port}/v3"])
    for step in steps:
        cli.CONF.reset()  # keystone-manage expects a fresh process
        cli.main(["keystone-manage", "--config-file", conf] + step)


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    args = sys.argv[3:]
    sys.argv = sys.argv[:1]  # oslo.config parses the command line too
    if mode == "setup":
        setup(os.path.join(os.environ["OS_KEYSTONE_CONFIG_DIR"], "keystone.conf"), port, *args)
        return
    from keystone.server.wsgi import initialize_public_application
    httpd = simple_server.make_server("127.0.0.1", port, initialize_public_application(),
                                      server_class=Server, handler_class=Quiet)
    print(f"keystone listening on 127.0.0.1:{port}", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
