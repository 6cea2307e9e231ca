import sys, yaml
src = open('/tmp/kn/kneel_wip_backup.yaml').read()
head, tail = src.split("  # UNSOLVED: knees down")
tail = "  # UNSOLVED: knees down" + tail
cs_lines = tail.split("\n", 1)[1]  # crawl_stance kf
K = yaml.safe_load(open(sys.argv[1]))['kfs']
out = head
for k in K:
    out += f"  - name: {k['name']}\n    duration_s: {k['duration_s']}\n"
    out += "    joints: {" + ", ".join(f"{n}: {v:+.4f}" for n, v in k['joints'].items()) + "}\n"
CSD = sys.argv[2] if len(sys.argv) > 2 else '3.0'
out += "  - name: crawl_stance\n" + cs_lines.split("\n", 1)[1].replace("duration_s: 3.0", f"duration_s: {CSD}")
open(sys.argv[3] if len(sys.argv) > 3 else '/work/main/atlas_crawl_controller/atlas_crawl_controller/gaits/kneel.yaml', 'w').write(out)
