#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# pod-podman.py: the podman run arguments that run a DaemonSet's container as its pod template says.
#
# usage: pod-podman.py MANIFEST CONTAINER NODE SECCOMP_DIR [NAME=VALUE...]
#
# From the DaemonSet in MANIFEST (a multi-document YAML file), for the
# container CONTAINER: hostPID, the security context (privileged refused,
# no-new-privileges, a read-only root, the user, capabilities dropped and
# added, the seccomp profile: a Localhost profile "profiles/X.json" is
# SECCOMP_DIR/X-seccomp.json), hostPath mounts (read-only where the
# manifest says), env (a fieldRef
# to spec.nodeName is NODE; $(VAR) expanded as Kubernetes does; NAME=VALUE
# replaces a variable), then the image and its args. One argument a line;
# the first line is the grace period in seconds (podman stop -t).
import re
import sys

import yaml


def die(msg):
    sys.exit("pod-podman: " + msg)


def main():
    if len(sys.argv) < 5:
        die("usage: pod-podman.py MANIFEST CONTAINER NODE SECCOMP_DIR [NAME=VALUE...]")
    manifest, name, node, seccomp_dir = sys.argv[1:5]
    overrides = dict(a.split("=", 1) for a in sys.argv[5:])
    with open(manifest) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    ds = [d for d in docs if d.get("kind") == "DaemonSet"]
    if len(ds) != 1:
        die(f"{manifest}: {len(ds)} DaemonSets, want one")
    pod = ds[0]["spec"]["template"]["spec"]
    cs = [c for c in pod["containers"] if c["name"] == name]
    if not cs:
        die(f"no container {name}")
    c = cs[0]
    sc = c.get("securityContext", {})
    out = [str(pod.get("terminationGracePeriodSeconds", 30))]
    if sc.get("privileged"):
        die("the container asks to be privileged")
    if pod.get("hostPID"):
        out.append("--pid=host")
    if sc.get("allowPrivilegeEscalation") is False:
        out += ["--security-opt", "no-new-privileges"]
    if sc.get("readOnlyRootFilesystem"):
        out.append("--read-only")
    if "runAsUser" in sc:
        out += ["--user", str(sc["runAsUser"])]
    caps = sc.get("capabilities", {})
    for cap in caps.get("drop", []):
        out.append("--cap-drop=" + cap.lower())
    for cap in caps.get("add", []):
        out.append("--cap-add=" + cap)
    prof = sc.get("seccompProfile", pod.get("securityContext", {}).get("seccompProfile"))
    if prof and prof["type"] == "Localhost":
        base = re.sub(r"\.json$", "", prof["localhostProfile"].split("/")[-1])
        out += ["--security-opt", f"seccomp={seccomp_dir}/{base}-seccomp.json"]
    elif prof and prof["type"] == "Unconfined":
        out += ["--security-opt", "seccomp=unconfined"]
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        v = vols[m["name"]]
        if "hostPath" not in v:
            die(f"volume {m['name']}: only hostPath volumes are run here")
        out += ["-v", f"{v['hostPath']['path']}:{m['mountPath']}" + (":ro" if m.get("readOnly") else "")]
    env = {}
    for e in c.get("env", []):
        if "valueFrom" in e:
            ref = e["valueFrom"].get("fieldRef", {}).get("fieldPath")
            if ref != "spec.nodeName":
                die(f"env {e['name']}: only spec.nodeName is known here")
            env[e["name"]] = node
        else:
            env[e["name"]] = re.sub(r"\$\((\w+)\)", lambda mo: env.get(mo.group(1), mo.group(0)), e["value"])
    env.update(overrides)
    for k, v in env.items():
        out += ["-e", f"{k}={v}"]
    out.append(c["image"])
    out += c.get("args", [])
    print("\n".join(out))


main()
