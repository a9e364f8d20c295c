#!/usr/bin/env bash
# apt-get, one at a time: .ci/run's lanes may install packages at the same
# moment (containerd for the local cluster, chromium for the report test,
# mmdebstrap for the images), and a second apt-get fails at once on dpkg's
# lock. Ours wait for each other on a lock of their own, and for anyone
# else's apt on dpkg's (DPkg::Lock::Timeout).
set -euo pipefail
exec flock /var/lock/streambench-apt-get.lock apt-get -o DPkg::Lock::Timeout=600 "$@"
