#!/usr/bin/python3
# Stands in for kolla-ansible's kolla_container module, so that
# --syntax-check and ansible-lint resolve it outside a kolla-ansible tree.
# It is never run: deploy/kolla/check.sh only checks.
DOCUMENTATION = r'''
module: kolla_container
short_description: kolla-ansible's container module (a stand-in for checks)
description: [Stands in for kolla-ansible's kolla_container in syntax checks.]
options:
  action: {type: str, required: true, description: [The action.]}
  common_options: {type: dict, description: [Shared options.]}
  name: {type: str, description: [The container.]}
  image: {type: str, description: [The image.]}
  volumes: {type: list, elements: str, description: [Volumes.]}
  dimensions: {type: dict, description: [Limits.]}
  healthcheck: {type: dict, description: [Health check.]}
'''
from ansible.module_utils.basic import AnsibleModule


def main():
    AnsibleModule(argument_spec=dict(
        action=dict(type='str', required=True), common_options=dict(type='dict'),
        name=dict(type='str'), image=dict(type='str'), volumes=dict(type='list', elements='str'),
        dimensions=dict(type='dict'), healthcheck=dict(type='dict')), supports_check_mode=True).fail_json(
        msg="stand-in for kolla-ansible's kolla_container: use kolla-ansible")


if __name__ == '__main__':
    main()
