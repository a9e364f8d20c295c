#!/usr/bin/env bash
# Adds the ensemble to a ZooKeeper configuration and writes this server's
# id, as the script of this name in the Apache Pulsar image does for the
# Pulsar Helm chart:
#
#   bin/generate-zookeeper-config.sh conf/zookeeper.conf
#
# ZOOKEEPER_SERVERS lists the ensemble's pod names (<release>-zookeeper-0,
# -1, ...), which resolve in this pod's DNS domain (the StatefulSet's
# headless service: hostname -d). Server N+1 is the pod of ordinal N; this
# pod listens on all addresses for its own entry. The id goes into
# <dataDir>/myid. A restarted container starts from the image's file, and
# old server lines are replaced, so running it twice changes nothing.
set -euo pipefail
conf="${1:?usage: generate-zookeeper-config.sh CONFIG_FILE}"
servers="${ZOOKEEPER_SERVERS:?ZOOKEEPER_SERVERS is not set: the chart sets it to the pod names of the ensemble}"
follower_port="${ZOOKEEPER_FOLLOWER_PORT:-2888}"
election_port="${ZOOKEEPER_ELECTION_PORT:-3888}"

data_dir="$(sed -n 's/^dataDir=//p' "$conf" | tail -n 1)"
[ -n "$data_dir" ] || { echo "generate-zookeeper-config.sh: $conf has no dataDir" >&2; exit 1; }
me="$(hostname)"
domain="$(hostname -d 2>/dev/null || true)"

sed -i '/^server\.[0-9]*=/d' "$conf"
id=0 my_id=""
IFS=',' read -ra names <<<"$servers"
for name in "${names[@]}"; do
  id=$((id + 1))
  host="$name${domain:+.$domain}"
  if [ "$name" = "$me" ]; then
    my_id=$id
    host=0.0.0.0
  fi
  echo "server.$id=$host:$follower_port:$election_port" >>"$conf"
done
[ -n "$my_id" ] || { echo "generate-zookeeper-config.sh: this pod ($me) is not in ZOOKEEPER_SERVERS ($servers)" >&2; exit 1; }
mkdir -p "$data_dir"
echo "$my_id" >"$data_dir/myid"
echo "generate-zookeeper-config.sh: server $my_id of ${#names[@]} (${servers})"
