"""atlas_crawl_bringup: entry points, scripts and requirements of the atlas_crawl stack."""
