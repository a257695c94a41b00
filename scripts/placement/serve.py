# Serve the real OpenStack Placement WSGI app on 127.0.0.1:PORT.
#
# usage: OS_PLACEMENT_CONFIG_DIR=/dir /usr/bin/python3 serve.py PORT
#
# Why not /usr/bin/placement-api: its wsgiref server has a listen backlog
# of 5 (drops connections under client concurrency) and adds its own access
# log line per request (Placement's requestlog still writes one to stderr).
# This one is single threaded on purpose: sqlite answers "database is
# locked" to concurrent writers. SIGTERM stops it at once.
import sys
from wsgiref import simple_server

from placement.wsgi import init_application


class Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


class Server(simple_server.WSGIServer):
    request_queue_size = 256


def main():
    port = int(sys.argv[1])
    httpd = simple_server.make_server(
        "127.0.0.1", port, init_application(),
        server_class=Server, handler_class=Quiet)
    print(f"placement listening on 127.0.0.1:{port}", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
