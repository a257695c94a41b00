#!/bin/sh
# Checks the kolla-ansible role: ansible-playbook --syntax-check of
# site.yml, ansible-lint of the role, config.json files as JSON. The
# kolla_container module is kolla-ansible's: check/library stands in for it.
# Needs ansible-core and ansible-lint (scripts/release/install.sh).
set -eu
cd "$(dirname "$0")"
export ANSIBLE_ROLES_PATH=$PWD ANSIBLE_LIBRARY=$PWD/check/library ANSIBLE_LOCAL_TEMP=$(mktemp -d) ANSIBLE_HOME=$(mktemp -d)
trap 'rm -rf "$ANSIBLE_LOCAL_TEMP" "$ANSIBLE_HOME"' EXIT
ansible-playbook -i localhost, --syntax-check site.yml
ansible-lint --offline -q site.yml rpengine
python3 -m json.tool config.json >/dev/null
echo "kolla: site.yml passes --syntax-check, the role passes ansible-lint"
