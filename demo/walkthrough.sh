#!/usr/bin/env bash
# demo/walkthrough.sh: the SQL-only tour (as root on Debian 12).  Installs
# what is missing, builds, starts a throwaway cluster, walks one workload
# through claim, lease loss, recovery, fencing and completion in psql
# (demo/walkthrough.sql), and stops.  The main demo is demo/run.sh.
set -euo pipefail
WL_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$WL_ROOT/scripts/cluster.sh"
wl_need_root
wl_install_deps
wl_build
wl_cluster_start
psql -X -q -f "$WL_ROOT/demo/walkthrough.sql"
