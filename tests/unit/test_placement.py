"""topologies/cluster/placement.py: planes in blocks over the servers, the hosts with the runner, only
host-T0 cables crossing; a server list it cannot use gets a one-line error."""

import pytest

from topologies.fabric import DEFAULT_FABRIC, NAMED_FABRICS, FabricSpec
from topologies.names import FabricError
from topologies.cluster.placement import place_planes, placement_of

B = "198.18.1.2"


def test_two_servers_take_four_planes_each_and_the_hosts_stay_with_the_runner():
    placement = place_planes(DEFAULT_FABRIC, ["localhost", B])
    assert placement.planes_of("localhost") == [0, 1, 2, 3] and placement.planes_of(B) == [4, 5, 6, 7]
    assert placement.server_of("t0p3r1") == "localhost" and placement.server_of("t1p4s0") == B
    assert {placement.server_of(h) for h in DEFAULT_FABRIC.host_names} == {"localhost"}


def test_only_host_cables_of_the_far_planes_cross():
    spec = DEFAULT_FABRIC
    crossing = place_planes(spec, ["localhost", B]).crossing_cables()
    links = [spec.links[i] for i in crossing]
    assert len(links) == spec.hosts * 4 == 16
    assert {link.kind for link in links} == {"host-t0"} and {link.plane for link in links} == {4, 5, 6, 7}


def test_one_server_is_the_fabric_as_today():
    placement = place_planes(DEFAULT_FABRIC, ["localhost"])
    assert placement.crossing_cables() == [] and placement.planes_of("localhost") == list(range(8))


def test_three_servers_over_the_paper_fabric_split_its_planes_in_blocks():
    placement = place_planes(NAMED_FABRICS["paper"], ["a", "b", "c"])
    assert [placement.server_of_plane(p) for p in range(8)] == ["a", "a", "a", "b", "b", "b", "c", "c"]


@pytest.mark.parametrize("spec, servers, says", [
    (DEFAULT_FABRIC, [], "names or addresses"),
    (DEFAULT_FABRIC, ["localhost", ""], "names or addresses"),
    (DEFAULT_FABRIC, ["localhost", "b,c"], "names or addresses"),
    (DEFAULT_FABRIC, ["localhost", B, B], "named twice"),
    (FabricSpec(planes=2), ["a", "b", "c"], "3 servers for 2 planes"),
    (FabricSpec(dataplane="openflow"), ["localhost", B], "runs on one server"),
    (FabricSpec(lossless=True), ["localhost", B], "lossless"),
])
def test_a_server_list_it_cannot_use_gets_a_clear_error(spec, servers, says):
    with pytest.raises(FabricError, match=says):
        place_planes(spec, servers)


def test_a_plane_outside_the_fabric_is_named():
    with pytest.raises(FabricError, match="plane 8 is not in the fabric"):
        place_planes(DEFAULT_FABRIC, ["localhost", B]).server_of_plane(8)


def test_the_srv6_builder_refuses_to_shape_on_another_server_before_building_anything():
    from topologies.build import BuildError
    from topologies.srv6.builder import build_srv6_fabric

    with pytest.raises(BuildError, match=r"shaping on server\(s\) 198.18.1.2 needs their agent"):
        build_srv6_fabric(DEFAULT_FABRIC, placement=place_planes(DEFAULT_FABRIC, ["localhost", B]))


def test_a_fabric_names_its_servers_and_its_record_keeps_them():
    spec = FabricSpec(servers=("localhost", B))
    assert placement_of(spec).planes_of(B) == [4, 5, 6, 7]
    assert FabricSpec.from_dict(spec.to_dict()) == spec
    assert placement_of(DEFAULT_FABRIC) is None and "servers" not in DEFAULT_FABRIC.to_dict()
    assert placement_of(FabricSpec(servers=("localhost",))) is None    # this server alone


@pytest.mark.parametrize("servers, says", [
    (("localhost", "localhost"), "named twice"),
    (("localhost", " b"), "names or addresses"),
    (["localhost", B], "names or addresses"),        # a tuple: the spec is frozen and hashable
])
def test_a_fabric_refuses_servers_it_cannot_place(servers, says):
    with pytest.raises(FabricError, match=says):
        FabricSpec(servers=servers)


def test_each_server_routes_its_own_planes():
    from topologies.srv6.routing import planes_of_server

    spread = FabricSpec(servers=("localhost", B))
    assert planes_of_server(spread, "localhost") == [0, 1, 2, 3] and planes_of_server(spread, B) == [4, 5, 6, 7]
    assert planes_of_server(spread, None) == planes_of_server(DEFAULT_FABRIC, "localhost") == list(range(8))
    with pytest.raises(FabricError, match="not one of the fabric's"):
        planes_of_server(spread, "elsewhere")


def test_a_fabric_over_several_servers_refuses_a_controller_kill_in_one_line():
    from topologies.dataplanes import dataplane_for

    spread = dataplane_for(FabricSpec(servers=("localhost", B)))
    assert "each server runs the routing of its own planes" in spread.refusal(["controller_kill", "link_flap"])
    assert spread.refusal(["link_flap"]) is None and dataplane_for(DEFAULT_FABRIC).refusal(["controller_kill"]) is None
    assert "no datapath process" in spread.refusal(["datapath_pause"])
