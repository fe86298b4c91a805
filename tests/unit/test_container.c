// SPDX-License-Identifier: GPL-2.0
/* test_container.c: container IDs and pod UIDs from the cgroup paths each runtime writes, and NSpid. */
#include <string.h>

#include "cmd/record/container.h"
#include "tap.h"

#define ID "4f1c0b5ea1d2c3b4a5968778695a4b3c2d1e0f9e8d7c6b5a4f3e2d1c0b9a8f7e"
#define UID "8d3a1b2c-4e5f-4a6b-9c7d-0e1f2a3b4c5d"
#define UID_ "8d3a1b2c_4e5f_4a6b_9c7d_0e1f2a3b4c5d"

static void expect(const char *what, const char *cgroup, const char *id, const char *pod)
{
	struct container_info c = {};

	container__parse_cgroup(cgroup, &c);
	check_str(desc("%s: container ID", what), id, c.id);
	check_str(desc("%s: pod UID", what), pod, c.pod_uid);
}

int main(void)
{
	expect("a host process", "0::/user.slice/user-0.slice/session-3.scope\n", "", "");
	expect("Docker, systemd driver", "0::/system.slice/docker-" ID ".scope\n", ID, "");
	expect("Docker, cgroupfs driver (v1 and v2 lines)",
	       "12:pids:/docker/" ID "\n1:name=systemd:/docker/" ID "\n0::/docker/" ID "\n", ID, "");
	expect("Kubernetes, containerd, systemd driver",
	       "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	       ".slice/cri-containerd-" ID ".scope\n",
	       ID, UID);
	expect("Kubernetes, guaranteed QoS", "0::/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope\n",
	       ID, UID);
	expect("Kubernetes, cgroupfs driver", "0::/kubepods/burstable/pod" UID "/" ID "\n", ID, UID);
	expect("CRI-O", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
			".slice/crio-" ID ".scope\n",
	       ID, UID);
	expect("CRI-O's conmon is not the container",
	       "0::/machine.slice/crio-conmon-" ID ".scope\n", "", "");
	expect("Podman", "0::/machine.slice/libpod-" ID ".scope/container\n", ID, "");
	expect("uppercase hex is lowered", "0::/system.slice/docker-4F1C0B5EA1D2C3B4A5968778695A4B3C2D1E0F9E8D7C6B5A4F3E2D1C0B9A8F7E.scope\n",
	       ID, "");
	expect("63 hex digits are no ID", "0::/docker/" "4f1c0b5ea1d2c3b4a5968778695a4b3c2d1e0f9e8d7c6b5a4f3e2d1c0b9a8f7\n", "", "");
	expect("the innermost of two IDs (docker in docker)",
	       "0::/docker/1111111111111111111111111111111111111111111111111111111111111111/docker/" ID "\n",
	       ID, "");
	expect("no newline at the end", "0::/system.slice/docker-" ID ".scope", ID, "");
	expect("empty", "", "", "");

	check_int("cgroup: the directory itself", 1,
		  container__cgroup_within("0::/system.slice/docker-" ID ".scope\n",
					   "/system.slice/docker-" ID ".scope"));
	check_int("cgroup: below it, the v2 line after v1 lines", 1,
		  container__cgroup_within("4:memory:/x\n0::/kubepods.slice/a/b.scope\n", "/kubepods.slice/"));
	check_int("cgroup: a sibling whose name starts alike", 0,
		  container__cgroup_within("0::/system.slice/ab\n", "/system.slice/a"));
	check_int("cgroup: the parent", 0,
		  container__cgroup_within("0::/system.slice\n", "/system.slice/a"));
	check_int("cgroup: the root holds everything", 1, container__cgroup_within("0::/a/b\n", "/"));
	check_int("cgroup: no v2 line (a pure v1 host)", 0,
		  container__cgroup_within("4:memory:/system.slice/a\n", "/system.slice/a"));
	check_int("NSpid of a host process", 0,
		  container__parse_nspid("\nName:\ttraced\nNSpid:\t4242\nNStgid:\t4242\n"));
	check_int("NSpid in a PID namespace", 1,
		  container__parse_nspid("\nName:\ttraced\nNSpid:\t4242\t1\n"));
	check_int("NSpid two namespaces deep", 7,
		  container__parse_nspid("\nNSpid:\t4242\t12\t7\nNSsid:\t1\n"));
	check_int("no NSpid line", 0, container__parse_nspid("\nName:\tx\n"));
	return tap_done();
}
