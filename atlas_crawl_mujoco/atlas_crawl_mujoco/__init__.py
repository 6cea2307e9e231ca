"""atlas_crawl_mujoco: MuJoCo backend (model build, AtlasSim, logger, video, gait runner, gait authoring)."""
