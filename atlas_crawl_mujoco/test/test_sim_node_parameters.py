"""The sim node's parameter file (config/mujoco_sim_node_parameters.yaml) loads and documents units."""
from atlas_crawl_controller.parameters import config_path, load_parameter_file


def test_sim_node_parameter_file_loads_and_documents_units():
    from atlas_crawl_mujoco import sim_node
    path = config_path(sim_node.PARAMETER_FILE, "atlas_crawl_mujoco", source_dir=sim_node._PKG_DIR)
    assert path.endswith("atlas_crawl_mujoco/config/mujoco_sim_node_parameters.yaml")
    ps = load_parameter_file(path)
    assert {"real_time_factor", "initial_pose", "seed"} <= set(ps.specs)
    for s in ps.specs.values():
        assert s.description
        if s.type in ("double", "double_array"):
            assert "[" in s.description, f"{s.name}: describe units like [m], [s], [-]"
