"""parameters.py: gpl YAML loading, validation, ROS descriptors (real rclpy node)."""
import math
import os
import random

import pytest

from atlas_crawl_controller.parameters import (ParameterError, ParameterSet, add_validating_callback,
                                               declare_ros_parameters, load_parameter_file, read_ros_parameters)

GPL = {"demo": {
    "gain": {"type": "double", "default_value": 1.0, "description": "[1/s] gain", "validation": {"bounds<>": [0.0, 10.0]}},
    "n": {"type": "int", "default_value": 3, "description": "[-] count", "validation": {"gt<>": [0]}},
    "mode": {"type": "string", "default_value": "a", "description": "mode", "validation": {"one_of<>": [["a", "b"]]}},
    "grp": {"v": {"type": "double_array", "default_value": [1, 2], "description": "[m] v",
                  "validation": {"fixed_size<>": [2], "element_bounds<>": [0, 5]}}},
}}


def test_load_defaults_and_nested_access():
    ps = ParameterSet.from_dict(GPL)
    v = ps.values()
    assert v.gain == 1.0 and v.n == 3 and v.mode == "a"
    assert v.grp.v == [1.0, 2.0] and isinstance(v.grp.v[0], float)
    assert v["grp.v"] == [1.0, 2.0]


@pytest.mark.parametrize("name,value", [("gain", 11.0), ("gain", float("nan")), ("gain", float("inf")),
                                        ("n", 0), ("n", 1.5), ("mode", "c"), ("grp.v", [1.0]),
                                        ("grp.v", [1.0, 6.0]), ("gain", "x"), ("nope", 1)])
def test_bad_values_rejected_with_reason(name, value):
    ps = ParameterSet.from_dict(GPL)
    with pytest.raises(ParameterError) as e:
        ps.values({name: value})
    assert str(e.value)


def test_bad_definitions_raise():
    bad = {"demo": {"x": {"type": "double", "default_value": 20.0, "description": "d",
                          "validation": {"bounds<>": [0, 1]}}}}
    with pytest.raises(ParameterError):
        ParameterSet.from_dict(bad)
    typo = {"demo": {"x": {"type": "double", "default_value": 0.5, "description": "d",
                           "validation": {"bonds<>": [0, 1]}}}}
    with pytest.raises(ParameterError):
        ParameterSet.from_dict(typo)
    nodesc = {"demo": {"x": {"type": "double", "default_value": 0.5}}}
    with pytest.raises(ParameterError):
        ParameterSet.from_dict(nodesc)


def test_a_parameter_given_twice_in_a_file_is_refused(tmp_path):
    """YAML keeps the last of two equal keys silently, so a second parameter of the same name would replace the
    first's default and meaning (session 15 defined support_wait_s twice in gait_sequencer_parameters.yaml)."""
    p = tmp_path / "dup.yaml"
    p.write_text("demo:\n  gain:\n    type: double\n    default_value: 1.0\n    description: '[1] a'\n"
                 "  gain:\n    type: double\n    default_value: 2.0\n    description: '[1] b'\n", encoding="utf-8")
    with pytest.raises(ParameterError, match="duplicate key 'gain' at line 6"):
        load_parameter_file(str(p))


@pytest.mark.parametrize("fname", ["crawl_controller_parameters.yaml", "contact_inference_parameters.yaml",
                                   "gait_sequencer_parameters.yaml"])
def test_package_files_load_and_document_units(fname):
    ps = load_parameter_file(fname)
    assert ps.specs
    for s in ps.specs.values():
        assert s.description
        if s.type in ("double", "double_array"):
            assert "[" in s.description, f"{s.name}: describe units like [m], [s], [-]"


@pytest.fixture
def ros_context():
    """A private rclpy context on a random local domain, shut down after the test."""
    rclpy = pytest.importorskip("rclpy")
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(1, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    try:
        yield ctx
    finally:
        rclpy.shutdown(context=ctx)


def test_ros_descriptors_and_runtime_change(ros_context):
    import rclpy
    from rclpy.parameter import Parameter
    ctx = ros_context
    node = rclpy.create_node("param_test", context=ctx)
    ps = ParameterSet.from_dict(GPL)
    vals = declare_ros_parameters(node, ps)
    d = node.describe_parameter("gain")
    assert d.floating_point_range[0].to_value == 10.0 and "[1/s]" in d.description
    state = {"v": vals}

    def apply(new):
        if new.n > 100:
            return "n too large for the buffer"
        state["v"] = new
        return None

    add_validating_callback(node, ps, lambda: state["v"], apply)
    assert node.set_parameters([Parameter("gain", value=2.5)])[0].successful
    assert state["v"].gain == 2.5
    r = node.set_parameters([Parameter("gain", value=20.0)])[0]
    assert not r.successful and r.reason
    r = node.set_parameters([Parameter("mode", value="zz")])[0]
    assert not r.successful and "one of" in r.reason
    r = node.set_parameters([Parameter("n", value=500)])[0]
    assert not r.successful and "too large" in r.reason
    assert state["v"].n == 3 and read_ros_parameters(node, ps).n == 3
    assert math.isclose(read_ros_parameters(node, ps).gain, 2.5)
    node.destroy_node()


def test_an_integer_override_of_a_double_parameter_is_that_number(ros_context):
    """``--set node:gain=0`` or ``gain:=0`` gives the INTEGER 0; rclpy would refuse it for a double parameter at
    declaration (the embedded graph then failed to start). It is declared as 0.0; a string is still refused."""
    import rclpy
    from rclpy.exceptions import InvalidParameterTypeException
    from rclpy.parameter import Parameter
    ctx = ros_context
    ps = ParameterSet.from_dict(GPL)
    node = rclpy.create_node("param_int", context=ctx, parameter_overrides=[Parameter("gain", value=2)])
    vals = declare_ros_parameters(node, ps)
    assert vals.gain == 2.0 and isinstance(node.get_parameter("gain").value, float)
    node.destroy_node()
    node = rclpy.create_node("param_str", context=ctx, parameter_overrides=[Parameter("gain", value="2")])
    with pytest.raises(InvalidParameterTypeException):
        declare_ros_parameters(node, ps)
    node.destroy_node()
