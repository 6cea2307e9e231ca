"""Thin rclpy adapters around the plain-Python classes of atlas_crawl_controller (DESIGN §3 rule of thumb).

Topics, services and actions (the same in the MuJoCo and the Gazebo variants; see topics.py).
"""
