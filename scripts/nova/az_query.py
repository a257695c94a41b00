#!/usr/bin/python3
"""Build an availability zone's GET /allocation_candidates query with nova
26.2.2's own scheduler code (Debian's python3-nova), for the zones tests.

usage: az_query.py DIR ZONE AGGREGATE_UUID...

Creates each aggregate (that uuid, metadata availability_zone = ZONE) in a
sqlite nova_api database under DIR through nova's Aggregate object, as
nova's API does, then runs nova.scheduler.request_filter.
map_az_to_placement_aggregate on a RequestSpec asking for ZONE and one
CUSTOM_BAREMETAL_GOLD (a bare-metal flavor), and prints one JSON line:
{"query": the querystring of nova's resources_from_request_spec}.
Nothing else of nova runs; nothing is sent anywhere.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import sync_dbs, write_conf  # noqa: E402

NOWHERE = "http://127.0.0.1:9"


def main():
    d, zone, aggs = sys.argv[1], sys.argv[2], sys.argv[3:]
    conf = write_conf(d, NOWHERE, NOWHERE, False)
    sync_dbs(d, NOWHERE, NOWHERE)
    import nova.conf
    from nova import config, context, objects
    from nova.scheduler import request_filter, utils
    objects.register_all()
    config.parse_args(["az_query", "--config-file", conf])
    # nova 26 asks Placement for zones only with this set; nova 28+
    # always does (the AvailabilityZoneFilter was removed).
    nova.conf.CONF.set_override("query_placement_for_availability_zone", True, group="scheduler")
    ctx = context.get_admin_context()
    for i, u in enumerate(aggs):
        agg = objects.Aggregate(context=ctx, uuid=u, name=f"{zone}-{i}",
                                metadata={"availability_zone": zone})
        agg.create()
    flavor = objects.Flavor(name="baremetal-gold", flavorid="bm", vcpus=1, memory_mb=1, root_gb=1,
                            ephemeral_gb=0, swap=0, extra_specs={
                                "resources:CUSTOM_BAREMETAL_GOLD": "1", "resources:VCPU": "0",
                                "resources:MEMORY_MB": "0", "resources:DISK_GB": "0"})
    spec = objects.RequestSpec(context=ctx, flavor=flavor, availability_zone=zone,
                               project_id="p", user_id="u", is_bfv=False,
                               image=objects.ImageMeta.from_dict({"properties": {}}))
    if not request_filter.map_az_to_placement_aggregate(ctx, spec):
        sys.exit("map_az_to_placement_aggregate did not run")
    # the scheduler's own step from RequestSpec to the Placement query
    # (SchedulerManager.select_destinations); no host_manager is needed
    # without a requested host or node
    rr = utils.resources_from_request_spec(ctx, spec, None)
    print(json.dumps({"query": rr.to_querystring()}), flush=True)


if __name__ == "__main__":
    main()
