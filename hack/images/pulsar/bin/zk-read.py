#!/usr/bin/env python3
"""Answers the read-only ZooKeeper questions of the Apache Pulsar chart's
wait loops without starting a JVM (bin/pulsar and bin/bookkeeper of
streambench's Pulsar image call it first).

The chart's init containers and Jobs wait for ZooKeeper and for each other
by running, every 3 seconds until it succeeds,

    bin/pulsar zookeeper-shell -r -server HOSTS get PATH   (or ls PATH)
    bin/bookkeeper shell whatisinstanceid

each a JVM start of about 2 CPU-seconds that mostly loads classes. On a
shared 2-core machine a deployment ran 60 of them while its bookies
initialized (cold run 14: 294 CPU-s over 181 tool JVMs), which slowed the
very components they waited for. Here the same question is one request on
ZooKeeper's own wire protocol: a read-only session, then getData (get),
getChildren (ls) or, for whatisinstanceid, getData of the ledgers root
and of its INSTANCEID node, which BookieShell reads.

Exit status, as the JVM tools give it to the chart's `until` and `if`:
0 the node is there (its data or children are printed; for
whatisinstanceid the ledgers root, with or without an INSTANCEID, as
BookieShell answers), 1 it is not or ZooKeeper cannot be reached
(ZooKeeperMain exits 1 on NoNode and on ConnectionLoss). 3 means "not a question this script answers" (another
command, a flag it does not know, TLS to ZooKeeper, a metadata service
that is not ZooKeeper): the caller then runs the JVM tool, so nothing the
chart asks is answered differently, only faster.

  zk-read.py zookeeper-shell ZooKeeperMain's arguments...
  zk-read.py whatisinstanceid BOOKKEEPER_CONF
"""

import os
import re
import socket
import struct
import sys
import time

PASS = 3  # the caller runs the JVM tool instead

# ZooKeeper's operation codes and error codes (zookeeper.jute, ZooDefs.OpCode).
OP_GET_DATA, OP_GET_CHILDREN, OP_CLOSE = 4, 8, -11
ERR_OK = 0

# ZooKeeperMain's own default when no -server is given.
DEFAULT_SERVER = "localhost:2181"
# ZooKeeperMain's session timeout; the connect attempt per server is bounded
# by a tenth of it, as a wait loop's try should be short.
SESSION_TIMEOUT_MS = 30000
CONNECT_TIMEOUT_S = 3.0


class Unanswerable(Exception):
    """The question is not one this script answers: use the JVM tool."""


def secured():
    """TLS to ZooKeeper is set up the way the chart sets it (client secure
    in the JVM options, or written into conf/pulsar_env.sh or bkenv.sh)."""
    opts = " ".join(os.environ.get(v, "") for v in ("OPTS", "PULSAR_EXTRA_OPTS", "BOOKIE_EXTRA_OPTS"))
    if "zookeeper.client.secure=true" in opts:
        return True
    home = os.environ.get("PULSAR_HOME", "/pulsar")
    for f in ("conf/pulsar_env.sh", "conf/bkenv.sh"):
        try:
            with open(os.path.join(home, f)) as fh:
                if "zookeeper.client.secure=true" in fh.read():
                    return True
        except OSError:
            pass
    return False


def parse_shell(args):
    """ZooKeeperMain's arguments -> (servers, op, path, read_only)."""
    servers, read_only, rest = DEFAULT_SERVER, False, list(args)
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "-server" and rest:
            servers = rest.pop(0)
        elif flag == "-timeout" and rest:
            rest.pop(0)
        elif flag == "-r":
            read_only = True
        else:
            raise Unanswerable("flag " + flag)
    if len(rest) != 2:
        raise Unanswerable("command " + " ".join(rest))
    cmd, path = rest
    ops = {"get": OP_GET_DATA, "ls": OP_GET_CHILDREN}
    if cmd not in ops or not path.startswith("/"):
        raise Unanswerable("command " + cmd)
    return servers, ops[cmd], path, read_only


def instance_id_node(conf_path):
    """The ZooKeeper servers and INSTANCEID node of a bookkeeper.conf, as
    BookieShell whatisinstanceid finds them (metadataServiceUri first, else
    zkServers and zkLedgersRootPath)."""
    conf = {}
    with open(conf_path) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            k, v = line.split("=", 1)
            conf[k.strip()] = v.strip()
    uri = conf.get("metadataServiceUri", "")
    if uri:
        # BookKeeper's own zk drivers (the chart's default) take the URI's
        # path as the ledgers root. Pulsar's metadata-store: driver, and
        # anything else, is the JVM tool's to read.
        m = re.fullmatch(r"zk(\+(hierarchical|flat|longhierarchical|null))?://([^/]+)(/.+)", uri)
        if m:
            return m.group(3).replace(";", ","), m.group(4).rstrip("/") + "/INSTANCEID"
        raise Unanswerable("metadataServiceUri " + uri)
    servers = conf.get("zkServers", "")
    if not servers:
        raise Unanswerable("no metadataServiceUri and no zkServers")
    root = conf.get("zkLedgersRootPath", "") or "/ledgers"
    return servers, root.rstrip("/") + "/INSTANCEID"


def jute_string(s):
    b = s.encode()
    return struct.pack(">i", len(b)) + b


def recv_exact(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("ZooKeeper closed the connection")
        out += chunk
    return out


def recv_frame(sock):
    (n,) = struct.unpack(">i", recv_exact(sock, 4))
    return recv_exact(sock, n)


def send_frame(sock, payload):
    sock.sendall(struct.pack(">i", len(payload)) + payload)


def connect(servers, read_only):
    """A session with the first server that accepts one."""
    last = None
    for hp in servers.split(","):
        host, _, port = hp.strip().rpartition(":")
        try:
            sock = socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S)
        except (OSError, ValueError) as e:
            last = e
            continue
        try:
            # ConnectRequest: protocolVersion, lastZxidSeen, timeOut,
            # sessionId, passwd (16 zero bytes), readOnly.
            send_frame(sock, struct.pack(">iqiqi", 0, 0, SESSION_TIMEOUT_MS, 0, 16) + b"\0" * 16 + struct.pack(">?", read_only))
            resp = recv_frame(sock)
            _, timeout, session = struct.unpack(">iiq", resp[:16])
            if timeout <= 0 or (session == 0 and not read_only):
                raise ConnectionError("ZooKeeper refused the session")
            return sock
        except (OSError, ConnectionError, struct.error) as e:
            last = e
            sock.close()
    raise ConnectionError("no ZooKeeper server of %s answered: %s" % (servers, last))


def request(sock, xid, op, path):
    """One getData or getChildren on the session; (error code, body)."""
    send_frame(sock, struct.pack(">ii", xid, op) + jute_string(path) + struct.pack(">?", False))
    resp = recv_frame(sock)
    _, _, err = struct.unpack(">iqi", resp[:16])
    return err, resp[16:]


def data_of(body):
    (n,) = struct.unpack(">i", body[:4])
    return body[4:4 + n].decode(errors="replace") if n >= 0 else None


def children_of(body):
    (count,) = struct.unpack(">i", body[:4])
    names, off = [], 4
    for _ in range(max(count, 0)):
        (n,) = struct.unpack(">i", body[off:off + 4])
        names.append(body[off + 4:off + 4 + n].decode(errors="replace"))
        off += 4 + n
    return sorted(names)


def close(sock):
    try:
        send_frame(sock, struct.pack(">ii", 0, OP_CLOSE))
    except OSError:
        pass
    sock.close()


def shell(servers, op, path, read_only):
    """ZooKeeperMain's get or ls: prints the data or the children; returns
    ZooKeeper's error code."""
    sock = connect(servers, read_only)
    try:
        err, body = request(sock, 1, op, path)
        if err == ERR_OK:
            if op == OP_GET_DATA:
                data = data_of(body)
                print("null" if data is None else data)  # as ZooKeeperMain prints it
            else:
                print("[" + ", ".join(children_of(body)) + "]")
        return err
    finally:
        close(sock)


def instance_id(servers, instance_node):
    """BookieShell whatisinstanceid: succeeds when the ledgers root exists
    (the JVM tool reports InstanceId null, and exits 0, when the root has
    no INSTANCEID node); returns ZooKeeper's error code for the root."""
    root = instance_node.rsplit("/", 1)[0]
    sock = connect(servers, True)
    try:
        err, _ = request(sock, 1, OP_GET_DATA, root)
        if err != ERR_OK:
            return err
        err, body = request(sock, 2, OP_GET_DATA, instance_node)
        print("Metadata root: %s InstanceId: %s" % (root, data_of(body) if err == ERR_OK else None))
        return ERR_OK
    finally:
        close(sock)


def main(argv):
    if len(argv) < 2:
        return PASS
    try:
        if secured():
            raise Unanswerable("TLS to ZooKeeper")
        if argv[1] == "zookeeper-shell":
            servers, op, path, read_only = parse_shell(argv[2:])
            ask = lambda: shell(servers, op, path, read_only)  # noqa: E731
        elif argv[1] == "whatisinstanceid" and len(argv) == 3:
            servers, path = instance_id_node(argv[2])
            ask = lambda: instance_id(servers, path)  # noqa: E731
        else:
            raise Unanswerable(argv[1])
    except (Unanswerable, OSError):
        return PASS
    start = time.monotonic()
    try:
        err = ask()
    except (OSError, ConnectionError, struct.error) as e:
        print("zk-read: %s %s: %s (%.1f s)" % (argv[1], path, e, time.monotonic() - start), file=sys.stderr)
        return 1
    if err != ERR_OK:
        print("zk-read: %s %s: ZooKeeper error %d (-101: no node)" % (argv[1], path, err), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
