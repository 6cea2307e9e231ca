"""send_goal's goal-field parser maps message constant names to their values (moved from the controller tests)."""
import pytest


def test_gait_constant_name_parses_to_its_value():
    Crawl = pytest.importorskip("atlas_crawl_msgs.action").Crawl
    from atlas_crawl_bringup.send_goal import parse_fields
    assert parse_fields("crawl", "{gait: GAIT_DIAGONAL}") == {"gait": Crawl.Goal.GAIT_DIAGONAL} == {"gait": 1}
