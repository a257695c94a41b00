#!/bin/sh
# Install Debian's RabbitMQ (rabbitmq-server 3.10) if it is missing: the
# message bus Ironic publishes its versioned notifications on, which the
# engine's event source (internal/events) consumes. Tests start their own
# broker on a free loopback port (internal/testing/rabbittest); the package's
# own service is never used. Idempotent: does nothing when installed.
set -eu

if [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
	echo "rabbitmq-server already installed"
	exit 0
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600 rabbitmq-server
test -x /usr/lib/rabbitmq/bin/rabbitmq-server
echo "rabbitmq-server installed"
