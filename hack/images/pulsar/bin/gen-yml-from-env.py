#!/usr/bin/env python3
"""The chart's brokers call this on conf/functions_worker.yml; in the Apache
Pulsar image it writes PF_* variables into that YAML file for the functions
worker. streambench turns the functions worker off (the chart's components
map, internal/provision/pulsar), so there is nothing to write; it refuses
when PF_ variables say otherwise, rather than drop them silently."""
import os
import sys

pf = sorted(k for k in os.environ if k.startswith("PF_"))
if pf and os.environ.get("functionsWorkerEnabled", "false").strip() == "true":
    print("gen-yml-from-env.py: this image has no functions worker, but the broker has it on (%s); "
          "turn components.functions off" % ", ".join(pf), file=sys.stderr)
    sys.exit(1)
sys.exit(0)
