#!/usr/bin/env bash
# Frees the local PersistentVolumes of a StorageClass after a run, so the next
# run's claims bind them. A static local volume has no deleter: once a run's
# claims are deleted it stays Released (Retain; Failed with Delete) until its
# claimRef is removed. Its disk must be wiped first: Kafka refuses a log
# directory of another cluster id, BookKeeper a journal with another bookie
# cookie, and both say so only in their pods' logs.
#
# Usage: hack/free-local-disks.sh [CLASS] [--wipe-local [--node NODE]... | --wiped]
#   CLASS         the StorageClass (default local-nvme)
#   (no flag)     print the node and path of each Released or Failed volume,
#                 to wipe there; frees nothing, exits 1 if there are any
#   --wiped       you wiped those paths (their contents): free the volumes
#   --wipe-local  on a node that holds disks: for each volume of that node,
#                 delete what its path holds, never the directory, then free
#                 it. Volumes of other nodes are named and left alone: their
#                 paths (/mnt/nvme0/<node>) are other nodes' disks.
#   --node NODE   the node this runs on, as Kubernetes names it (default:
#                 this host's name); repeat it where several nodes are this
#                 host (the local cluster's kubelets, each disk a directory
#                 of its own)
# A volume left with reclaim policy Delete is set to Retain. Environment:
# KUBECTL (default kubectl), and KUBECONFIG as kubectl reads it.
set -euo pipefail

kubectl=${KUBECTL:-kubectl}
class=local-nvme mode=list nodes=()
while [ $# -gt 0 ]; do
  case $1 in
    --wipe-local | --wiped)
      [ "$mode" = list ] || { echo "give one of --wipe-local and --wiped" >&2; exit 2; }
      mode=${1#--} ;;
    --node)
      [ $# -ge 2 ] && [ -n "$2" ] || { echo "--node needs a node name" >&2; exit 2; }
      nodes+=("$2"); shift ;;
    -h | --help) sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    -*) echo "unknown flag $1; see $0 --help" >&2; exit 2 ;;
    *) class=$1 ;;
  esac
  shift
done
if [ ${#nodes[@]} -gt 0 ] && [ "$mode" != wipe-local ]; then
  echo "--node goes with --wipe-local" >&2; exit 2
fi
[ ${#nodes[@]} -gt 0 ] || nodes=("$(hostname)")
here() { local n; for n in "${nodes[@]}"; do [ "$n" = "$1" ] && return 0; done; return 1; }

# One line per volume, path last: '|' does not collapse empty fields as a
# tab would, and a '|' in the path stays in it.
pvs=$($kubectl get pv -o jsonpath='{range .items[*]}{.metadata.name}{"|"}{.spec.storageClassName}{"|"}{.status.phase}{"|"}{.spec.persistentVolumeReclaimPolicy}{"|"}{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}{"|"}{.spec.local.path}{"\n"}{end}')
found=0
while IFS='|' read -r name pvclass phase policy node path; do
  [ "$pvclass" = "$class" ] && { [ "$phase" = Released ] || [ "$phase" = Failed ]; } || continue
  found=1
  case $mode in
    list) echo "$name ($phase): wipe the contents of $path on node ${node:-?}"; continue ;;
    wipe-local)
      if ! here "$node"; then
        echo "$name: on node ${node:-?}, not ${nodes[*]}: left alone (run this on that node with --node ${node:-?}, or wipe $path there and use --wiped)"
        continue
      fi
      case $path in
        /*) ;;
        *) echo "$name: refusing to wipe '$path': not an absolute path" >&2; exit 1 ;;
      esac
      real=$(realpath -e -- "$path") && [ -d "$real" ] ||
        { echo "$name: no directory $path on this host: run this on node ${node:-?}, or wipe it there and use --wiped" >&2; exit 1; }
      [ "$real" != / ] || { echo "$name: refusing to wipe $path: it is /" >&2; exit 1; }
      # -xdev: a filesystem mounted inside the disk is not the disk's to wipe.
      find "$real" -xdev -mindepth 1 -delete
      echo "$name: wiped $path" ;;
  esac
  ops='[{"op":"remove","path":"/spec/claimRef"}'
  if [ "$policy" = Delete ]; then
    ops+=',{"op":"replace","path":"/spec/persistentVolumeReclaimPolicy","value":"Retain"}'
    echo "$name: reclaim policy Delete -> Retain (a static local volume has no deleter)"
  fi
  $kubectl patch pv "$name" --type json -p "$ops]" </dev/null >/dev/null
  echo "$name: freed (Available once the volume controller sees it)"
done <<<"$pvs"

if [ $found = 0 ]; then
  echo "no Released or Failed volume of class $class"
elif [ $mode = list ]; then
  echo "wipe those paths (what they hold, not the directories), then: $0 $class --wiped" >&2
  exit 1
fi
