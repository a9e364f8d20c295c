#!/usr/bin/env python3
"""Writes environment variables into Java properties files, as the script
of this name in the Apache Pulsar image does; the Pulsar Helm chart turns
each component's configData into environment variables and calls it on the
component's configuration file before starting it.

    bin/apply-config-from-env.py conf/broker.conf [more files...]

The rules are upstream's, because the chart's values are written for them:

  - a variable named like a key the file already has replaces that key's
    value; any other plain variable (PATH, HOSTNAME, or a key the file
    lacks) is ignored;
  - PULSAR_PREFIX_<key> sets <key> whether or not the file has it (it is
    appended when missing), and is applied after the plain variables, so
    it wins over <key> set plainly.

Values are stripped of surrounding white space. Values of keys that look
secret are not printed.
"""
import os
import sys

PREFIX = "PULSAR_PREFIX_"
SECRET_WORDS = ("password", "secret", "token", "key")


def shown(key, value):
    if any(w in key.lower() for w in SECRET_WORDS) and not key.endswith("Path"):
        return "******"
    return value


def apply(path, env):
    with open(path) as f:
        lines = f.readlines()
    where = {}
    for i, line in enumerate(lines):
        text = line.strip()
        if not text or text.startswith("#") or "=" not in text:
            continue
        where[text.split("=", 1)[0].strip()] = i

    def put(key, value):
        entry = "%s=%s\n" % (key, value)
        if key in where:
            lines[where[key]] = entry
            print("[%s] Applying config %s = %s" % (path, key, shown(key, value)))
            return
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        where[key] = len(lines)
        lines.append(entry)
        print("[%s] Adding config %s = %s" % (path, key, shown(key, value)))

    for name in sorted(env):
        if not name.startswith(PREFIX) and name in where:
            put(name, env[name].strip())
    for name in sorted(env):
        if name.startswith(PREFIX) and len(name) > len(PREFIX):
            put(name[len(PREFIX):], env[name].strip())

    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(lines)
    os.replace(tmp, path)


def main(argv):
    if len(argv) < 2:
        print("usage: %s CONFIG_FILE..." % argv[0], file=sys.stderr)
        return 2
    for path in argv[1:]:
        apply(path, os.environ)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
