#!/usr/bin/python3
"""Serve nova 26.2.2's own compute API (Debian's python3-nova) for the
zones tests: the os-aggregates a `validate` reads, as nova answers them.

usage: api.py DIR PORT

Serves nova's APIRouterV21 under /v2.1 on 127.0.0.1:PORT over the sqlite
databases under DIR (built as driver.py builds them), as an admin of
project "admin": the request's own token is ignored (noauth2 stands in
for Keystone, as in nova's functional tests). Prints one JSON line,
{"ready": PORT}, once it listens. Nothing else of nova runs.
"""
import json
import os
import sys
from wsgiref import simple_server

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import sync_dbs, write_conf  # noqa: E402

NOWHERE = "http://127.0.0.1:9"


class Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


def main():
    d, port = sys.argv[1], int(sys.argv[2])
    os.makedirs(d, exist_ok=True)
    conf = write_conf(d, NOWHERE, NOWHERE, False)
    sync_dbs(d, NOWHERE, NOWHERE)
    from nova import config, objects
    from nova.api.openstack import auth, compute
    objects.register_all()
    config.parse_args(["nova-api", "--config-file", conf])
    app = auth.NoAuthMiddleware(compute.APIRouterV21())

    def v21(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if not path.startswith("/v2.1"):
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        environ["SCRIPT_NAME"], environ["PATH_INFO"] = "/v2.1", path[len("/v2.1"):]
        environ["HTTP_X_AUTH_TOKEN"] = "admin:admin"  # noauth2's admin
        return app(environ, start_response)

    srv = simple_server.make_server("127.0.0.1", port, v21, handler_class=Quiet)
    print(json.dumps({"ready": port}), flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
