# The WSGI application uWSGI loads in each worker (lazy-apps: after the
# fork, so no database connection is shared between processes).
from placement.wsgi import init_application

application = init_application()
