"""The agents' interrupt moderation is set by the runner from the fabric: a share of a
DATA frame's time on a link, so that it scales with the link rate as the RTT does."""

import dataclasses

import pytest

from lab.runners.agent_config import RX_MODERATION_FRAMES, agent_config
from mrc_host.wire import FRAME_OVERHEAD
from topologies.fabric import DEFAULT_FABRIC
from topologies.dataplanes import dataplane_for


def _moderation(spec, payload_size=8192) -> float:
    return agent_config(dataplane_for(spec), 0, [1], transport="mrc", payload_size=payload_size, params={},
                        stats_path=None)["rx_moderation"]


def test_moderation_is_a_share_of_a_frame_time_on_a_link():
    frame_s = (8192 + FRAME_OVERHEAD) * 8 / DEFAULT_FABRIC.link_bps
    assert _moderation(DEFAULT_FABRIC) == pytest.approx(RX_MODERATION_FRAMES * frame_s)
    assert 0 < RX_MODERATION_FRAMES < 1      # well inside one frame: a fraction of the RTT


def test_moderation_scales_with_the_link_rate_and_the_packet():
    slow = dataclasses.replace(DEFAULT_FABRIC, link_mbps=DEFAULT_FABRIC.link_mbps / 2)
    assert _moderation(slow) == pytest.approx(2 * _moderation(DEFAULT_FABRIC))
    assert _moderation(DEFAULT_FABRIC, 1024) < _moderation(DEFAULT_FABRIC, 8192)


@pytest.mark.parametrize("transport", ["mrc", "baseline"])
def test_both_transports_get_the_same_nic(transport):
    config = agent_config(dataplane_for(DEFAULT_FABRIC), 0, [1], transport=transport, payload_size=8192, params={},
                          stats_path=None)
    assert config["rx_moderation"] == _moderation(DEFAULT_FABRIC)
